import CNats
import Dispatch
import Foundation
import Logging
import Synchronization

/// One node's link to the cluster bus (PROTOCOL.md section 18, docs/CLUSTER.md):
/// a NATS connection that reconnects on its own, node membership by
/// heartbeats on `roomd.nodes.<node-id>`, and the `roomd-rooms` lease bucket.
///
/// Node to node, it carries opaque messages: `send(to:_:)` publishes on the
/// other node's subject `roomd.node.<node-id>.in`, and what arrives on this
/// node's subject goes to `onMessage`, in the order each sender sent it (the
/// routing's records: RoomServer/Cluster/).
///
/// It runs on a thread of its own (`roomd-cluster`) plus the C client's
/// threads, and talks to its owner only through callbacks: `onStatus`, on
/// the cluster thread each time the status changes (the server posts it to
/// its inbox), and `onMessage`, on the C client's delivery thread of the
/// node subject. Nothing here runs before `start()`.
public final class RoomCluster: Sendable {
    public static let nodesSubject = "roomd.nodes"
    /// Bound on the nodes remembered at once (a heartbeat from an id beyond it is ignored).
    public static let maxNodes = 1024
    /// Bound on one node-to-node message (nats-server's default `max_payload` is 1 MiB).
    public static let maxMessageBytes = 512 * 1024
    /// Bound on messages received and not yet handed to `onMessage`; beyond it
    /// the C client drops them and logs a slow consumer.
    public static let maxPendingMessages = 65536
    public static let maxPendingBytes = 64 << 20

    /// The subject a node receives node-to-node messages on.
    public static func subject(of node: NodeID) -> String { "roomd.node.\(node).in" }
    /// The subject a node answers requests on (NATS request/reply).
    public static func requestSubject(of node: NodeID) -> String { "roomd.node.\(node).req" }

    let core: ClusterCore

    /// `onRequest` gets a request's payload and the subject to `reply(to:_:)` on.
    public init(
        config: ClusterConfig,
        logger: Logger,
        onStatus: @escaping @Sendable (ClusterStatus) -> Void = { _ in },
        onMessage: @escaping @Sendable ([UInt8]) -> Void = { _ in },
        onRequest: @escaping @Sendable ([UInt8], String) -> Void = { _, _ in }
    ) {
        core = ClusterCore(
            config: config,
            logger: logger,
            onStatus: onStatus,
            onMessage: onMessage,
            onRequest: onRequest
        )
    }

    /// This run of the node: 16 hex digits, new for every process.
    public var incarnation: String { core.incarnation }

    /// Blocking (call it off the service thread): sends `payload` to
    /// `node`'s request subject and waits up to `timeoutMillis` for the answer.
    public func request(to node: NodeID, _ payload: [UInt8], timeoutMillis: Int64) throws(ClusterError) -> [UInt8] {
        try core.request(to: node, payload, timeoutMillis: timeoutMillis)
    }

    /// Thread-safe, does not block: answers a request (its reply subject).
    public func reply(to subject: String, _ payload: [UInt8]) {
        core.link.withLock { link in
            guard let link else { return }
            _ = payload.withUnsafeBytes {
                natsConnection_Publish(link.connection, subject, $0.baseAddress, Int32($0.count))
            }
        }
    }

    /// Thread-safe: publishes `payload` to `node` (fire and forget: core
    /// NATS, no acknowledgement; nobody listening drops it). While the bus
    /// is reconnecting it waits in the client's 1 MiB reconnect buffer, and
    /// fails when that is full. Throws for an invalid node id, a payload over
    /// `maxMessageBytes`, or before `start()` / after `stop()`.
    public func send(to node: NodeID, _ payload: [UInt8]) throws(ClusterError) {
        try core.send(to: node, payload)
    }

    public var config: ClusterConfig { core.config }

    /// Thread-safe: the last status reported.
    public var status: ClusterStatus { core.state.withLock { $0.reported } }

    /// Thread-safe: the lease table, nil until the bucket is bound (and
    /// while a rebind after a reconnect is pending).
    public var leases: RoomLeases? { core.state.withLock { $0.leases } }

    /// Thread-safe: the room states bucket, bound with the lease table.
    public var states: RoomStates? { core.state.withLock { $0.states } }

    /// Starts the cluster thread, which connects (retrying until the bus answers).
    public func start() {
        let core = self.core
        let first = core.state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started && !state.stopping
        }
        guard first else { return }
        let thread = Thread {
            cnats_name_thread("roomd-cluster")  // in ps and /proc (Thread.name is not)
            core.run()
        }
        thread.name = "roomd-cluster"
        thread.start()
    }

    /// Thread-safe: this node drains (SIGTERM): its heartbeats say `drain`
    /// from now on (at once), so the other nodes hand it no room.
    public func beginDraining() {
        core.state.withLock { state in
            state.drainingSelf = true
            state.announce = true
        }
        core.wake.signal()
    }

    /// Announces the node's departure, closes the connection and waits for
    /// the cluster thread to end (at most about 4 s). Idempotent.
    public func stop() {
        let started = core.state.withLock { state -> Bool in
            state.stopping = true
            return state.started
        }
        core.wake.signal()
        // Signalled again after the wait: a second stop() returns at once.
        if started, core.finished.wait(timeout: .now() + .seconds(4)) == .success { core.finished.signal() }
    }
}
