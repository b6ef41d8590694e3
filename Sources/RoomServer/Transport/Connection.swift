import CWebSockets
import RoomModel

/// One client connection: its outbound queue of shared frames, the message
/// being reassembled, its rate limit and liveness. Where its frames go is
/// its `sink`. A peer joined through it reaches it as its `endpoint`.
/// Owned by the service thread, like everything it points to.
/// (`package`: `roombench micro` measures `enqueue`.)
package final class Connection: PeerEndpoint {
    let id: Int
    /// Where frames go; `.discard` once the socket is gone (`socketClosed`).
    private(set) var sink: ConnectionSink
    /// The peer joined through this connection, if any.
    var peer: Peer?
    /// A `join` succeeded on this connection (`preview` and `ping` do not count).
    private(set) var hasJoined = false

    // Outbound: frames shared with other connections, counted in bytes.
    private var outbound = FrameQueue()
    /// The service thread's deflater when the client negotiated permessage-deflate (`Sockets.opened`).
    var deflater: MessageDeflater?
    /// The kernel did not take all of the last write (lws kept the rest).
    private var backedUp = false
    private(set) var queuedBytes = 0
    let maxQueuedBytes: Int
    /// Set once the connection is to be closed with this code after its
    /// queue drains; nothing more is queued or read after that.
    private(set) var closeCode: UInt16?
    private var writableRequested = false
    /// The service thread's writes at the end of a turn (`Sockets.writeAfterTurn`);
    /// nil for connections without a socket.
    var turnWrites: TurnWrites?
    /// The turn of the loop of this connection's last write (`TurnWrites.turn`).
    var lastWriteTurn: UInt64 = 0
    /// The turn of the loop that last read a message of it (`TurnWrites.turn`).
    var lastReadTurn: UInt64 = 0
    /// While the connection's own message is being handled, pushes to it wait
    /// here so that its response goes out first (section 2, ordering).
    private var deferred: [Frame]?

    /// The message being reassembled from lws' fragments (Inbound.swift).
    var inbound = InboundMessage()
    var rate: TokenBucket
    /// Consecutive protocol errors (section 8).
    var errors = ErrorStreak()
    var liveness: Liveness

    /// Told when the queue passes the high watermark; nil for harness connections.
    var flow: FlowControl? {
        didSet { highWatermark = flow?.highWatermark ?? .max }
    }
    /// `flow`'s high watermark, kept here: the per-push check is one comparison.
    private var highWatermark = Int.max
    /// What flow control counts this connection as (FlowControl.swift).
    var flowState = FlowState()

    /// A call of this client waits for its hook, and its later messages
    /// behind it (section 30, Hooks/HookWait.swift); nil otherwise.
    var hookWait: HookWait?

    /// Test mode's fault on this connection (TestMode/ConnectionFault.swift);
    /// always nil in production.
    var fault: ConnectionFault?

    /// The cluster's state of a client of this node (Cluster/EdgeRoute.swift);
    /// nil without a cluster.
    var edge: EdgeRoute?
    /// The socket's place among the unjoined connections until it joins
    /// (Sockets: the per-address cap); nil for other nodes' clients and harnesses.
    var unjoined: UnjoinedConnections?

    init(sink: ConnectionSink, id: Int, maxQueuedBytes: Int, rate: TokenBucket, now: Int64) {
        self.sink = sink
        self.id = id
        self.maxQueuedBytes = maxQueuedBytes
        self.rate = rate
        self.liveness = Liveness(openedAt: now)
        super.init(kind: .connection)
        if case .socket = sink {} else { writableRequested = true }  // nothing to wake
    }

    var isClosing: Bool { closeCode != nil }

    /// A peer of test mode II's synthetic audience (section 33): no socket.
    var isSynthetic: Bool {
        if case .audience = sink { true } else { false }
    }

    /// LWS_CALLBACK_CLOSED: the socket and its lws handle are gone. The
    /// connection may still be held (a room lookup under way, a cluster
    /// route): it takes nothing more and never touches the handle again.
    func socketClosed() {
        if closeCode == nil { closeCode = 1006 }
        deferred = nil
        if case .socket = sink { sink = .discard }
    }

    /// Dropped by the slow-consumer rule: its peer must go at once, not when
    /// the socket finally closes.
    var isDroppedAsSlow: Bool { closeCode == 4008 }

    /// The join succeeded: the client's node hears it when the client is another node's.
    func markJoined() {
        guard !hasJoined else { return }
        hasJoined = true
        switch sink {
        case .socket(let wsi): unjoined?.settle(wsi: wsi)
        case .remote(let link): link.joined(peerID: peer?.id.rawValue ?? "")
        case .discard, .audience: break
        }
    }

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
        switch sink {
        case .socket, .discard: break
        case .remote(let link):
            // The client's own node queues it and applies the slow-consumer rule.
            link.send(frame, enforcingLimit: enforcingLimit)
            return true
        case .audience(let audience):
            audience.took(frame)
            return true
        }
        // A client that negotiated permessage-deflate gets the push's compressed form.
        let frame = deflater.map { frame.deflated(by: $0) } ?? frame
        if enforcingLimit, queuedBytes + frame.count > maxQueuedBytes {
            dropAsSlowConsumer()
            return false
        }
        outbound.append(frame)
        queuedBytes += frame.count
        // Behind while the kernel takes every byte: roomd is what is slow.
        if queuedBytes >= highWatermark, let flow, flowState.congestedRoom == nil, !backedUp, !flowState.excused {
            flow.congested(self, now: monotonicMillis())
        }
        requestWritable()
        return true
    }

    /// The slow-consumer rule: the queue goes, and the connection closes with 4008.
    func dropAsSlowConsumer() {
        dropQueue()
        close(4008)
        flow?.forget(self)
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
    /// The close text of a 1012.
    static let serviceRestart = "service restart"

    func close(_ code: UInt16) {
        guard closeCode == nil else { return }
        closeCode = code
        deferred = nil
        switch sink {
        case .socket(let wsi):
            lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, Self.closeGraceSeconds)
            requestWritable()
        case .remote(let link):
            link.close(code: code)
        case .discard, .audience:
            break
        }
    }

    static let closeGraceSeconds: Int32 = 5
    /// How long a permessage-deflate client has to answer roomd's close frame with its own.
    static let closeAckSeconds: Int32 = 2
    /// roomd wrote its close frame itself (a permessage-deflate connection) and waits for the client's.
    private(set) var closeFrameSent = false

    /// Stops reading the client (flow control, a room being looked up): what
    /// it sends waits in the kernel, and TCP slows it down.
    func pauseReading() {
        if case .socket(let wsi) = sink { lws_rx_flow_control(wsi, 0) }
    }

    func resumeReading() {
        if case .socket(let wsi) = sink, !isClosing, fault?.stalledUntil == nil, hookWait == nil {
            lws_rx_flow_control(wsi, 1)
        }
    }

    /// Asks for a write if anything waits (after a test-mode stall).
    func wakeWriter() {
        if !outbound.isEmpty || closeCode != nil { requestWritable() }
    }

    /// Drops the connection now, without a close frame (a peer that stopped answering).
    func cutOff() {
        if case .socket(let wsi) = sink { lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC) }
    }

    /// Drops what is queued. (No frame is ever partly written by roomd:
    /// `writeQueued` writes whole frames, and lws keeps the rest of one the
    /// kernel did not take, so the stream stays well-formed for the close frame.)
    private func dropQueue() {
        outbound.removeAll()
        queuedBytes = 0
    }

    /// A write is due: at the end of this turn of the loop (`turnWrites`,
    /// `Sockets.writeAfterTurn`), or when lws finds the socket writable.
    /// Writing at the end of the turn saves lws' two `epoll_ctl` calls
    /// (POLLOUT on, then off) and a wake-up per write, and an answer leaves
    /// in the turn that read its call.
    private func requestWritable() {
        guard !writableRequested, case .socket(let wsi) = sink else { return }
        writableRequested = true
        if let turnWrites, !turnWrites.isWriting {
            if lastReadTurn == turnWrites.turn {
                turnWrites.callers.append(self)
            } else {
                turnWrites.pending.append(self)
            }
        } else {
            lws_callback_on_writable(wsi)
        }
    }

    /// At the end of a turn (`Sockets.writeAfterTurn`): whether the queue can
    /// be written now, outside lws' writable callback. Not while the kernel
    /// holds back earlier bytes (lws keeps a copy: the socket is full), a
    /// test-mode stall holds the writes, or a close is due (only the
    /// writable callback can close).
    var writesAtTurnEnd: Bool {
        !outbound.isEmpty && !backedUp && closeCode == nil && !isStalled
    }

    /// At the end of a turn, when `writesAtTurnEnd` is false: lws calls back once the socket is writable.
    func writeWhenWritable() {
        guard case .socket(let wsi) = sink else { return }  // still `writableRequested` from its listing
        lws_callback_on_writable(wsi)
    }

    /// Called from LWS_CALLBACK_SERVER_WRITEABLE (a socket's connection
    /// only), or at the end of a turn (`Sockets.writeAfterTurn`). Copies as
    /// many whole queued frames as fit into `scratch` and hands them to lws
    /// in one raw write: server frames are unmasked, so complete frames
    /// built here can be written back to back. Returns -1 to close the connection.
    func writeQueued(
        to wsi: OpaquePointer,
        into scratch: inout [UInt8],
        limit fullLimit: Int,
        backedUpLimit: Int
    ) -> Int32 {
        writableRequested = false
        if isStalled { return 0 }  // test mode: `wakeWriter` when the stall ends
        if !outbound.isEmpty {
            // Whole frames, at most `limit` bytes per write unless the first
            // frame alone is larger (then it goes alone): what the kernel does
            // not take, lws keeps in a copy, so this bounds that copy per
            // connection. Small writes only for a connection that is backing
            // up. A write never ends inside a frame: lws writes its pong to a
            // client's ping, and its close frame, ahead of roomd's next write,
            // which would put them in the middle of that frame (it flushes
            // its own copy of a partial write first, so that one is safe).
            let limit = backedUp ? backedUpLimit : fullLimit
            let first = outbound.first._withUnsafeGuaranteedRef { $0.count }
            let capacity = max(limit, first)
            let pre = Int(CWS_PRE)
            if scratch.count < pre + capacity { scratch = [UInt8](repeating: 0, count: pre + capacity) }
            var total = 0
            scratch.withUnsafeMutableBytes { buffer in
                while !outbound.isEmpty {
                    let copied = outbound.first._withUnsafeGuaranteedRef { frame in
                        guard total + frame.count <= capacity else { return false }
                        frame.copy(from: 0, count: frame.count, into: buffer.baseAddress! + pre + total)
                        total += frame.count
                        return true
                    }
                    if !copied { break }
                    outbound.removeFirst()
                }
            }
            let written = scratch.withUnsafeMutableBytes { buffer in
                lws_write(wsi, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + pre, total, LWS_WRITE_HTTP)
            }
            if written < 0 { return -1 }
            backedUp = lws_partial_buffered(wsi) != 0
            queuedBytes -= total
            // Drained, or the client stopped taking bytes: then it is the slow one.
            if let flow {
                if queuedBytes <= flow.lowWatermark { flowState.excused = false }
                if flowState.congestedRoom != nil, queuedBytes <= flow.lowWatermark || backedUp { flow.drained(self) }
            }
            if !outbound.isEmpty || closeCode != nil { requestWritable() }
            return 0
        }
        if let code = closeCode, deflater != nil {
            // permessage-deflate: roomd writes the close frame itself and waits for the
            // client's (LWS_CALLBACK_WS_PEER_INITIATED_CLOSE), at most `closeAckSeconds`.
            // lws would end the TCP connection right after its close frame, and a
            // client that inflates off its reading path (Node's WebSocket) would
            // then see the end before that frame and report 1006, not the code.
            if !closeFrameSent {
                closeFrameSent = true
                var bytes: [UInt8] = [0x88, 2, UInt8(code >> 8), UInt8(code & 0xFF)]
                if code == 1012 {
                    bytes += Array(Self.serviceRestart.utf8)
                    bytes[1] = UInt8(bytes.count - 2)
                }
                outbound.append(Frame(wire: bytes))
                queuedBytes += bytes.count
                lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_ACK, Self.closeAckSeconds)
                requestWritable()
            }
            return 0
        }
        if let code = closeCode {
            if code == 1012 {
                // A drain (PROTOCOL.md section 18, 1.3). The text lets a client on
                // lws 4.1 tell it from a protocol error: its parser rewrites a code
                // above 1011 to 1002 and keeps the text (RoomClient reads it back).
                var reason = Array(Self.serviceRestart.utf8)
                reason.withUnsafeMutableBufferPointer {
                    lws_close_reason(wsi, lws_close_status(UInt32(code)), $0.baseAddress, $0.count)
                }
            } else {
                lws_close_reason(wsi, lws_close_status(UInt32(code)), nil, 0)
            }
            return -1
        }
        return 0
    }
}

/// When a connection was opened and last heard from (the keepalive sweep).
struct Liveness {
    /// Monotonic time the connection was established (for the join deadline).
    let openedAt: Int64
    /// Monotonic time anything (a message, a pong) last came from the peer.
    var lastHeard: Int64
    /// A keepalive ping is out and not answered yet.
    var pinged = false

    init(openedAt: Int64) {
        self.openedAt = openedAt
        lastHeard = openedAt
    }

    mutating func heard(at now: Int64) {
        lastHeard = now
        pinged = false
    }
}

/// Consecutive -32700/-32600/42900 errors (section 8).
struct ErrorStreak {
    var count = 0
    /// The streak reached its limit: close with 4029 once the answer is out.
    var limitReached = false
}

// MARK: - harnesses

extension Connection {
    /// A connection whose frames go nowhere, for harnesses only (`roombench
    /// micro`, the fuzz-dispatcher target): roomd never makes one. What it
    /// queues stays queued until `discardQueuedForBenchmark()`.
    package convenience init(discardingFor id: Int, maxQueuedBytes: Int) {
        self.init(
            sink: .discard,
            id: id,
            maxQueuedBytes: maxQueuedBytes,
            rate: TokenBucket(rate: 1, burst: 1, nowMillis: 0),
            now: 0
        )
    }

    /// The frames queued and not written, oldest first (harness only).
    package var queuedFrames: [Frame] { outbound.queued }

    /// Empties the queue the way `writeQueued` does once everything is
    /// written, without writing (harness only).
    package func discardQueuedForBenchmark() {
        outbound.removeAll()
        queuedBytes = 0
    }
}
