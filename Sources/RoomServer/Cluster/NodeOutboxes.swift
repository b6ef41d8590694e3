import Logging
import RoomCluster

/// The records going to other nodes, batched per node for one turn of the
/// loop (a push to many clients of one node is one record) and sent by
/// `flush`: over the bus, or straight into a sibling service thread's inbox
/// (`--threads`). Its service thread's only, its `Outbox`es too (checked in
/// debug builds).
final class NodeOutboxes {
    /// A batch is sent when it grows past this (NATS' default payload limit is 1 MiB).
    static let flushBytes = 256 * 1024

    private let thread: ServiceThread
    private let cluster: RoomCluster
    private let logger: Logger
    private var boxes: [NodeID: Outbox] = [:]
    /// The other service threads of this process, by node id: their records go to their inbox.
    var siblings: [NodeID: @Sendable ([UInt8]) -> Bool] = [:]
    private var lastSendError: Int64 = 0
    /// Runs before a batch for node `to` leaves (the home's acknowledgements
    /// of the messages it answered in it: Home.swift).
    var beforeSending: ((NodeID, Outbox) -> Void)?

    init(thread: ServiceThread, cluster: RoomCluster, logger: Logger) {
        self.thread = thread
        self.cluster = cluster
        self.logger = logger
    }

    /// The batch for node `to`; one that grew past `flushBytes` is sent first.
    func outbox(_ to: NodeID) -> Outbox {
        thread.assertIsCurrent()
        if let box = boxes[to] {
            if box.writer.bytes.count >= Self.flushBytes { flush(box, to: to) }
            return box
        }
        let box = Outbox(writer: ClusterWriter(node: cluster.config.nodeID, incarnation: cluster.incarnation))
        boxes[to] = box
        return box
    }

    /// Sends every batch built during this turn of the loop.
    func flushAll() {
        thread.assertIsCurrent()
        for (to, box) in boxes where !box.isEmpty { flush(box, to: to) }
    }

    private func flush(_ box: Outbox, to: NodeID) {
        beforeSending?(to, box)
        box.finishFrame()
        defer { box.writer.reset() }
        if let sibling = siblings[to] {
            if !sibling(box.writer.bytes) {
                notSent(
                    to: to,
                    "cluster: node message not sent: the service thread it is for is too far behind",
                    error: nil
                )
            }
            return
        }
        do throws(ClusterError) {
            try cluster.send(to: to, box.writer.bytes)
        } catch {
            notSent(to: to, "cluster: node message not sent", error: error)
        }
    }

    /// Logged at most once a second.
    private func notSent(to: NodeID, _ message: Logger.Message, error: ClusterError?) {
        let now = monotonicMillis()
        guard now - lastSendError >= 1000 else { return }
        var metadata: Logger.Metadata = ["to": "\(to)"]
        if let error { metadata["error"] = "\(error)" }
        logger.warning(message, metadata: metadata)
        lastSendError = now
    }
}

/// Records for one node, built during one turn of the loop. A frame
/// queued to several connections of that node in a row is one record.
final class Outbox {
    var writer: ClusterWriter
    private var frame: Frame?
    private var conns: [UInt64] = []

    init(writer: ClusterWriter) { self.writer = writer }

    var isEmpty: Bool { writer.isEmpty && frame == nil }

    func append(_ frame: Frame, for conn: UInt64) {
        if frame === self.frame {
            conns.append(conn)
            return
        }
        finishFrame()
        self.frame = frame
        conns = [conn]
    }

    func append(_ record: ClusterRecord) {
        finishFrame()
        writer.append(record)
    }

    func finishFrame() {
        guard let frame else { return }
        writer.appendFrame(conns: conns, count: frame.count) { frame.append(to: &$0) }
        self.frame = nil
        conns.removeAll(keepingCapacity: true)
    }
}
