import CWebSockets
import RoomModel

/// One WebSocket connection. Owned by the service thread, like everything
/// it points to. (`package`: `roombench micro` measures `enqueue`.)
package final class Connection {
    let wsi: OpaquePointer
    let id: Int
    /// The peer joined through this connection, if any.
    var peer: Peer?

    // Outbound: frames shared with other connections, counted in bytes.
    private var outbound = FrameQueue()
    /// Bytes of the oldest queued frame already written.
    private var headOffset = 0
    /// The kernel did not take all of the last write (lws kept the rest).
    private var backedUp = false
    private(set) var queuedBytes = 0
    let maxQueuedBytes: Int

    /// Set once the connection is to be closed with this code after its
    /// queue drains; nothing more is queued or read after that.
    private(set) var closeCode: UInt16?
    private var writableRequested = false

    // Inbound reassembly of one message.
    var inbound: [UInt8] = []
    var inboundIsBinary = false

    var rate: TokenBucket
    /// Monotonic time anything (a message, a pong) last came from the peer.
    var lastHeard: Int64
    /// A keepalive ping is out and not answered yet.
    var pinged = false
    /// Monotonic time the connection was established (for the join deadline).
    let openedAt: Int64
    /// A `join` succeeded on this connection (`preview` and `ping` do not count).
    var hasJoined = false {
        didSet { if hasJoined, !oldValue, let remote { remote.router.joined(remote, peer: peer?.id ?? "") } }
    }

    // Cluster (Cluster/): a connection of another node's client, served here
    // because this node is the home of its room; or, on the client's node,
    // where its room lives.
    /// Set on a room's home for a client connected to another node.
    let remote: RemoteLink?
    /// Set on the client's node when its room's home is another node:
    /// every message goes there, answers and pushes come back.
    var home: (node: String, room: String)?
    /// The room whose home is being looked up, with the messages that wait for the answer.
    var resolvingRoom: String?
    var awaitingRoute: [[UInt8]] = []
    /// A `preview` found that `room` has no home: previews of it are answered here.
    var homelessRoom: String?
    /// Times the room's home sent this connection's join back to be routed again.
    var reroutes = 0
    /// On the edge: the peer the home joined this connection as (for a takeover).
    var remotePeerID: String?
    /// On the edge: the room's home died and its new home is being found.
    var takingOver = false
    /// On the edge: messages sent to the home and not acknowledged yet; reading
    /// stops at `ClusterRouter.maxUnacked` messages or `maxUnackedBytes`
    /// until the home catches up.
    var unacked = InFlight()
    var pausedForHome = false
    /// On the home: messages of this remote connection handled since the last acknowledgement.
    var handledSinceAck = 0
    /// On the home: messages of this remote connection that arrived while its
    /// room was paused by flow control, handled once it resumes.
    var heldWhilePaused: [[UInt8]] = []
    /// Flow control (see `FlowControl`): the room this connection's queue
    /// counts as congested in, and the room whose pause stopped its reads.
    var congestedRoom: String?
    var pausedRoom: String?
    /// Stayed behind while its room was paused: a slow client, which no
    /// longer counts towards pausing until it catches up.
    var excusedFromFlow = false
    /// Told when the queue passes the high watermark; nil for benchmark stubs.
    var flow: FlowControl? {
        didSet { highWatermark = flow?.highWatermark ?? .max }
    }
    /// `flow`'s high watermark, kept here: the per-push check is one comparison.
    private var highWatermark = Int.max
    /// Consecutive -32700/-32600/42900 errors (section 8).
    var errorStreak = 0
    /// The streak reached its limit: close with 4029 once the answer is out.
    var errorLimitReached = false

    /// While the connection's own message is being handled, pushes to it wait
    /// here so that its response goes out first (section 2, ordering).
    private var deferred: [Frame]?

    init(wsi: OpaquePointer, id: Int, maxQueuedBytes: Int, rate: TokenBucket, now: Int64, remote: RemoteLink? = nil) {
        self.wsi = wsi
        self.remote = remote
        self.id = id
        self.maxQueuedBytes = maxQueuedBytes
        self.rate = rate
        self.lastHeard = now
        self.openedAt = now
    }

    func heard(at now: Int64) {
        lastHeard = now
        pinged = false
    }

    var isClosing: Bool { closeCode != nil }

    /// Queues a frame, or closes the connection with 4008 when its queue
    /// would exceed the limit (the slow-consumer rule). Returns false if the
    /// connection was dropped.
    @discardableResult
    package func enqueue(_ frame: Frame, bypassingDeferral: Bool = false, enforcingLimit: Bool = true) -> Bool {
        guard closeCode == nil else { return false }
        if deferred != nil, !bypassingDeferral {
            deferred!.append(frame)
            return true
        }
        if let remote {
            // The client's own node queues it and applies the slow-consumer rule.
            remote.router.send(frame, to: remote, enforcingLimit: enforcingLimit)
            return true
        }
        if enforcingLimit, queuedBytes + frame.count > maxQueuedBytes {
            dropQueue()
            close(4008)
            flow?.forget(self)
            return false
        }
        outbound.append(frame)
        queuedBytes += frame.count
        // Behind while the kernel takes every byte: roomd is what is slow.
        if queuedBytes >= highWatermark, let flow, congestedRoom == nil, !backedUp, !excusedFromFlow {
            flow.congested(self, now: monotonicMillis())
        }
        requestWritable()
        return true
    }

    /// A connection served for another node's client (see `remote`).
    convenience init(remote: RemoteLink, id: Int, rate: TokenBucket, now: Int64) {
        self.init(wsi: OpaquePointer(bitPattern: Self.socketlessWSI)!, id: id, maxQueuedBytes: .max, rate: rate, now: now,
                  remote: remote)
        writableRequested = true
    }

    /// Starts holding back pushes addressed to this connection.
    func beginDeferring() { if deferred == nil { deferred = [] } }

    /// Queues the held-back pushes after whatever was queued meanwhile.
    func endDeferring() {
        guard let held = deferred else { return }
        deferred = nil
        for frame in held where !enqueue(frame) { break }
    }

    /// Closes with `code` once every frame queued so far is written. A peer
    /// that does not take its bytes within `closeGraceSeconds` is cut off.
    func close(_ code: UInt16) {
        guard closeCode == nil else { return }
        closeCode = code
        deferred = nil
        if let remote {
            remote.router.close(remote, code: code)
            return
        }
        // A socket-less harness connection (roombench micro, fuzz-dispatcher) has no wsi to time out.
        if Int(bitPattern: wsi) != Self.socketlessWSI {
            lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, Self.closeGraceSeconds)
        }
        requestWritable()
    }

    static let closeGraceSeconds: Int32 = 5

    /// Dropped by the slow-consumer rule: its peer must go at once, not when
    /// the socket finally closes.
    var isDroppedAsSlow: Bool { closeCode == 4008 }

    /// Drops what is queued, except the rest of a frame already partly
    /// written: the stream must stay well-formed for the close frame.
    private func dropQueue() {
        if headOffset > 0 {
            outbound.removeAll(keepingFirst: true)
            queuedBytes = outbound.first._withUnsafeGuaranteedRef { $0.count } - headOffset
        } else {
            outbound.removeAll(keepingFirst: false)
            queuedBytes = 0
        }
    }

    func requestWritable() {
        guard !writableRequested else { return }
        writableRequested = true
        lws_callback_on_writable(wsi)
    }

    /// Called from LWS_CALLBACK_SERVER_WRITEABLE. Copies as many queued
    /// frames as fit into `scratch` and hands them to lws in one raw write:
    /// server frames are unmasked, so complete frames built here can be
    /// written back to back. Returns -1 to close the connection.
    func writeQueued(into scratch: inout [UInt8], limit fullLimit: Int, backedUpLimit: Int) -> Int32 {
        writableRequested = false
        if !outbound.isEmpty {
            // At most `limit` bytes per write, possibly ending inside a frame
            // (`headOffset` remembers where): what the kernel does not take,
            // lws keeps in a copy, so this bounds that copy per connection.
            // Small writes only for a connection that is backing up.
            let limit = backedUp ? backedUpLimit : fullLimit
            let pre = Int(CWS_PRE)
            if scratch.count < pre + limit { scratch = [UInt8](repeating: 0, count: pre + limit) }
            var total = 0
            scratch.withUnsafeMutableBytes { buffer in
                while !outbound.isEmpty, total < limit {
                    let copied = outbound.first._withUnsafeGuaranteedRef { frame in
                        let take = min(frame.count - headOffset, limit - total)
                        frame.copy(from: headOffset, count: take, into: buffer.baseAddress! + pre + total)
                        return (bytes: take, frameDone: headOffset + take == frame.count)
                    }
                    total += copied.bytes
                    headOffset += copied.bytes
                    if copied.frameDone {
                        outbound.removeFirst()
                        headOffset = 0
                    }
                }
            }
            let written = scratch.withUnsafeMutableBytes { buffer in
                lws_write(wsi, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + pre, total, LWS_WRITE_HTTP)
            }
            if written < 0 { return -1 }
            backedUp = lws_partial_buffered(wsi) != 0
            queuedBytes -= total
            // Drained, or the client stopped taking bytes: then it is the slow one.
            if let flow, queuedBytes <= flow.lowWatermark { excusedFromFlow = false }
            if let flow, congestedRoom != nil, queuedBytes <= flow.lowWatermark || backedUp { flow.drained(self) }
            if !outbound.isEmpty || closeCode != nil { requestWritable() }
            return 0
        }
        if let code = closeCode {
            lws_close_reason(wsi, lws_close_status(UInt32(code)), nil, 0)
            return -1
        }
        return 0
    }
}

/// On the edge: the messages of one client sent to its room's home and not
/// acknowledged yet, oldest first (acknowledgements count messages; the
/// sizes they free are looked up here).
struct InFlight {
    private var sizes: [Int] = []
    private var head = 0
    private(set) var bytes = 0

    var count: Int { sizes.count - head }

    mutating func sent(_ size: Int) {
        sizes.append(size)
        bytes += size
    }

    mutating func acknowledged(_ messages: Int) {
        let end = head + min(messages, count)
        for index in head..<end { bytes -= sizes[index] }
        head = end
        if head == sizes.count {
            sizes.removeAll(keepingCapacity: sizes.count <= 1024)
            head = 0
        } else if head > 1024 {
            sizes.removeFirst(head)
            head = 0
        }
    }
}

// MARK: - roombench micro only

extension Connection {
    /// The placeholder `wsi` of a socket-less connection.
    static let socketlessWSI = 1

    /// A connection without a socket, for harnesses only (`roombench micro`,
    /// the fuzz-dispatcher target): roomd never creates one. Its writable
    /// callback counts as already requested, so `enqueue` stops at
    /// `requestWritable`'s guard and never calls lws, and `close` skips its
    /// lws timeout; the placeholder `wsi` is never used. Only `enqueue`,
    /// `close` and `discardQueuedForBenchmark()` may be called on it (and
    /// `Dispatcher.handle`/`connectionLost` with it), never `writeQueued`.
    package convenience init(socketlessForBenchmark id: Int, maxQueuedBytes: Int) {
        self.init(wsi: OpaquePointer(bitPattern: Self.socketlessWSI)!, id: id, maxQueuedBytes: maxQueuedBytes,
                  rate: TokenBucket(rate: 1, burst: 1, nowMillis: 0), now: 0)
        writableRequested = true
    }

    /// Empties the queue the way `writeQueued` does once everything is
    /// written, without writing (harness only).
    package func discardQueuedForBenchmark() {
        outbound.removeAll(keepingFirst: false)
        headOffset = 0
        queuedBytes = 0
    }
}
