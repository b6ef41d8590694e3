import CWebSockets
import Logging
import RoomCollections
import RoomConfig
import RoomModel

#if canImport(Glibc)
import Glibc
#endif

/// The client connections of a service thread, by lws handle: their ids,
/// the open-file budget new sockets are admitted by (and, within it, the
/// per-address cap of unjoined connections while it is short, and who makes
/// room when it is full), the join deadline, the write path, and the keepalive sweep (pings,
/// idle peers). Its service thread's only (checked at each entry point in
/// debug builds).
final class Sockets {
    private(set) var connections: [OpaquePointer: Connection] = [:]
    private var lastID = 0
    /// Sockets lws holds (WSI_CREATE minus WSI_DESTROY), and how many it
    /// may hold: the open-file limit less a reserve for everything else the
    /// process opens. At the budget an unjoined connection makes room, or the
    /// new one is refused at once — so `accept` never fails with EMFILE,
    /// which lws would retry in a spin.
    private(set) var open = 0
    let budget: Int
    static let reservedFiles = 64
    /// Sockets roomd holds itself while it reads their request heads (RequestHeads.swift).
    var heads = 0
    /// Shutting down: no new connection, /healthz says so.
    var draining = false

    /// The connections that have not joined yet, by address (PROTOCOL.md section 1).
    let unjoined: UnjoinedConnections
    /// The connection being handed to lws: its wsi comes with WSI_CREATE.
    var adopting: Arrival?
    /// permessage-deflate's compressor, shared by this thread's connections
    /// that negotiated it (nil: `--no-permessage-deflate`).
    var deflater: MessageDeflater?
    /// Closes a socket roomd holds while it reads its head (set by the
    /// libev loop's RequestHeads; there are none on lws' poll() loop).
    var closeHead: (Arrival) -> Void = { _ in }

    /// WebSocket connections in the order they opened, each with its join
    /// deadline (monotonic ms). Joined and closed ones are dropped when they
    /// reach the front, so the front is the next connection to close with
    /// 1008: the Schedule's `.joinDeadline`.
    private var awaitingJoin = FIFO<(wsi: OpaquePointer, id: Int, deadline: Int64)>()

    /// Bytes handed to lws per write. Several queued frames leave in one
    /// write; lws copies what the kernel does not take, so this also bounds
    /// that copy per connection — and a connection whose last write was
    /// partial gets the smaller chunk until it catches up.
    static let writeChunk = 64 * 1024
    static let backedUpWriteChunk = 16 * 1024
    /// Reused buffer for coalesced writes.
    private var writeScratch: [UInt8] = []
    /// Bytes written since the heap was last trimmed (see `sweep`).
    private var bytesSinceTrim = 0
    private var lastTrim: Int64 = 0
    private var refusals = OncePerSecond()
    private var addressRefusals = OncePerSecond()
    private var evictions = OncePerSecond()

    private let thread: ServiceThread
    private let limits: LimitSettings
    private let flow: FlowControl
    private let clock: RoomClock
    private let metrics: ServerMetrics
    private let logger: Logger

    /// `servers`: service threads in this process (`--threads`); each may hold its share of sockets.
    init(
        thread: ServiceThread,
        limits: LimitSettings,
        servers: Int,
        flow: FlowControl,
        clock: RoomClock,
        metrics: ServerMetrics,
        logger: Logger
    ) {
        self.thread = thread
        unjoined = UnjoinedConnections(thread: thread)
        self.limits = limits
        self.flow = flow
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        let soft = Int(clamping: min(limit.rlim_cur, 1 << 20))  // RLIM_INFINITY is UInt.max
        let servers = max(1, servers)
        budget = max(8, (soft - Self.reservedFiles * servers) / servers)
    }

    var count: Int { connections.count }

    subscript(wsi: OpaquePointer) -> Connection? { connections[wsi] }

    /// A new connection id (also for other nodes' clients served here).
    func makeID() -> Int {
        thread.assertIsCurrent()
        lastID += 1
        return lastID
    }

    /// LWS_CALLBACK_WSI_CREATE.
    func created(_ wsi: OpaquePointer) {
        thread.assertIsCurrent()
        open += 1
        if let arrival = adopting {
            adopting = nil
            unjoined.adopted(arrival, as: wsi)
        }
    }

    /// LWS_CALLBACK_WSI_DESTROY.
    func destroyed(_ wsi: OpaquePointer) {
        thread.assertIsCurrent()
        open -= 1
        unjoined.settle(wsi: wsi)
    }

    /// LWS_CALLBACK_ESTABLISHED: a WebSocket is open; its join deadline
    /// runs (`nextJoinDeadline`, read by the schedule after the turn).
    @discardableResult
    func opened(_ wsi: OpaquePointer) -> Connection {
        thread.assertIsCurrent()
        let now = monotonicMillis()
        let connection = Connection(
            sink: .socket(wsi),
            id: makeID(),
            maxQueuedBytes: limits.maxOutboundBytes,
            rate: TokenBucket(rate: limits.messagesPerSecond, burst: limits.messageBurst, nowMillis: clock.nowMillis()),
            now: now
        )
        connection.flow = flow
        connection.unjoined = unjoined
        connection.turnWrites = turnWrites
        if let deflater, negotiatedDeflate(wsi) { connection.deflater = deflater }
        unjoined.upgraded(wsi: wsi, at: monotonicMillis())  // it goes after its address's idle sockets
        connections[wsi] = connection
        dropSettledJoins()
        awaitingJoin.append((wsi, connection.id, joinClockNow + Int64(limits.joinTimeoutS) * 1000))
        return connection
    }

    /// LWS_CALLBACK_CLOSED: the connection is gone from the table (and
    /// returned), and never touches its lws handle again.
    func closed(_ wsi: OpaquePointer) -> Connection? {
        thread.assertIsCurrent()
        guard let connection = connections.removeValue(forKey: wsi) else { return nil }
        connection.socketClosed()
        return connection
    }

    /// Sockets held: lws' and roomd's own.
    private var held: Int { open + heads }

    /// Whether the socket budget is short: sockets held reach three quarters
    /// of it. Only then does the per-address cap of unjoined connections apply.
    var isShort: Bool { held >= shortAt }
    var shortAt: Int { budget - budget / 4 }

    /// Whether a new connection from `address` may have a socket (roomd's own
    /// accept, or LWS_CALLBACK_FILTER_NETWORK_CONNECTION): its place among
    /// the unjoined connections, or nil to refuse it (closed at once, before
    /// any byte is read). While the budget is short (`isShort`), an address
    /// already holding `max_unjoined_per_address` unjoined connections makes
    /// room for its newcomer itself: its longest-idle unjoined connection is
    /// closed (a client behind the same NAT as one holding idle sockets still
    /// gets in; an address's total does not grow). At the budget, the
    /// longest-idle unjoined connection of the address holding the most is
    /// closed to make room; joined peers are never closed for a newcomer, and
    /// with none unjoined the newcomer is refused. Logged at most once a
    /// second, counted always.
    func admit(from address: PeerAddress, as socket: Arrival.Socket) -> Arrival? {
        thread.assertIsCurrent()
        let now = monotonicMillis()
        if let stale = adopting {  // lws made no wsi of the last one
            adopting = nil
            unjoined.settle(stale)
        }
        if isShort, unjoined.count(from: address) >= limits.maxUnjoinedPerAddress,
            let idle = unjoined.longestIdle(of: address)
        {
            close(idle)
            metrics.unjoinedDropped(.perAddress)
            if let closed = addressRefusals.due(now) {
                logger.warning(
                    "unjoined connections of one address at the limit while the socket budget is short: closing its longest idle",
                    metadata: [
                        "address": "\(address)", "limit": "\(limits.maxUnjoinedPerAddress)",
                        "open": "\(held)", "budget": "\(budget)", "closed": "\(closed)",
                    ]
                )
            }
        }
        if held >= budget {
            guard let victim = unjoined.victim() else {
                metrics.acceptErrors.increment()
                if let refused = refusals.due(now) {
                    logger.warning(
                        "open-file limit reached: refusing new connections",
                        metadata: ["open": "\(held)", "budget": "\(budget)", "refused": "\(refused)"]
                    )
                }
                return nil
            }
            close(victim)
            metrics.unjoinedDropped(.budget)
            if let closed = evictions.due(now) {
                logger.warning(
                    "open-file limit reached: closing the longest-idle unjoined connections to make room",
                    metadata: [
                        "open": "\(held)", "budget": "\(budget)", "closed": "\(closed)",
                        "address": "\(victim.address)",
                    ]
                )
            }
        }
        return unjoined.arrived(from: address, socket: socket, at: now)
    }

    /// Closes an unjoined connection at once, without a close frame: its
    /// file is free when this returns. (lws closes a wsi synchronously when it
    /// is not the one being serviced: roomd's accept runs outside lws, and lws'
    /// own accept services the listening socket.)
    private func close(_ victim: Arrival) {
        switch victim.socket {
        case .head: closeHead(victim)
        case .lws(let wsi): lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_SYNC)
        case .adopting: break
        }
        unjoined.settle(victim)
    }

    /// The join deadline of the connection that waits longest, if any (monotonic ms).
    /// The join deadline's clock: monotonic, or test mode's manual clock
    /// (PROTOCOL.md section 25), which only `POST /v2/test/clock` moves.
    var joinClockNow: Int64 { (clock as? TestModeClock)?.now ?? monotonicMillis() }

    var nextJoinDeadline: Int64? {
        dropSettledJoins()
        return awaitingJoin.first?.deadline
    }

    /// Closes with 1008 every connection whose join deadline has passed.
    func closeUnjoined(now: Int64) {
        thread.assertIsCurrent()
        dropSettledJoins()
        while let (wsi, _, deadline) = awaitingJoin.first, deadline <= now {
            awaitingJoin.removeFirst()
            guard let connection = connections[wsi] else { continue }
            // An unauthenticated socket may not hold a file descriptor for long.
            logger.info("no join in time, closing", metadata: connection.logMetadata)
            metrics.joinTimeouts.increment()
            connection.close(1008)
            dropSettledJoins()
        }
    }

    /// Drops the front entries whose connection joined, closes or is gone.
    private func dropSettledJoins() {
        awaitingJoin.removeFirst { entry in
            guard let connection = connections[entry.wsi], connection.id == entry.id else { return true }
            return connection.hasJoined || connection.isClosing
        }
    }

    /// LWS_CALLBACK_SERVER_WRITEABLE: as much of the queue as one write takes.
    func write(_ wsi: OpaquePointer) -> Int32 {
        thread.assertIsCurrent()
        guard let connection = connections[wsi] else { return -1 }
        return write(connection, to: wsi)
    }

    /// The connections given frames during this turn of the loop.
    let turnWrites = TurnWrites()

    /// After each turn of the loop (Redis' write before sleep): the
    /// connections given frames during the turn are written now, one write
    /// each, as the writable callback would. What the kernel does not take
    /// (lws keeps it), a stalled or closing connection, and what is left
    /// beyond one write wait for lws' writable callback as before. So does a
    /// connection written in this turn or the one before (a stream, as in a
    /// large fan-out): waiting for the writable callback, a turn later, it
    /// gathers more frames into one write (measured: writing a 1 → 1,000
    /// fan-out at the end of every turn cost 15 % more CPU per delivery at
    /// 5,000 msg/s; `scripts/bench/levers.md`). Not so a connection the turn
    /// read a message of: when a backlog makes every turn long, every
    /// caller was written in the turn before, and sending each one's answer
    /// through lws' writable callback (two `epoll_ctl` calls and an event
    /// per answer: 45,000 `epoll_ctl` a second at 50,000 calls/s) kept the
    /// core full and the backlog from draining for seconds (levers.md).
    /// Returns whether connections were left listed for the next turn's end
    /// (over `TurnWrites.budget`): the loop must not wait for events then.
    @discardableResult
    func writeAfterTurn() -> Bool {
        thread.assertIsCurrent()
        defer { turnWrites.turn &+= 1 }
        writeCallers()
        guard !turnWrites.pending.isEmpty else { return false }
        turnWrites.isWriting = true
        defer { turnWrites.isWriting = false }
        var pending = turnWrites.take()
        var budget = TurnWrites.budget
        var kept = 0  // pending[..<kept]: left for the next turn, in order
        for index in pending.indices {
            let connection = pending[index]
            guard case .socket(let wsi) = connection.sink else { continue }
            let answered = connection.lastReadTurn == turnWrites.turn  // one whose calls this turn answered
            if !answered {
                guard budget > 0 else {
                    pending.swapAt(kept, index)
                    kept += 1
                    continue
                }
                budget -= 1
            }
            // Turns since its last write: 0 or 1 is a stream, unless the turn
            // read its calls (their answers never wait for a writable callback).
            writeOrWait(connection, to: wsi, now: answered || turnWrites.turn &- connection.lastWriteTurn >= 2)
        }
        let carried = pending[..<kept]
        turnWrites.giveBack(pending, carrying: carried)
        return kept > 0
    }

    /// A message was read and handled: every `TurnWrites.flushEvery` of a
    /// turn, the callers listed so far are written, while their sockets
    /// and queues are still in the cache.
    func messageHandled() {
        thread.assertIsCurrent()
        turnWrites.readSinceFlush += 1
        guard turnWrites.readSinceFlush >= TurnWrites.flushEvery else { return }
        turnWrites.readSinceFlush = 0  // also when no caller is listed: the next flush is 64 messages on
        guard !turnWrites.callers.isEmpty else { return }
        metrics.earlyWrites.increment()
        writeCallers()
    }

    /// Writes the listed callers (one write each), in the order listed; one
    /// with nothing to write now (the kernel holds back earlier bytes, a
    /// close is due) waits for lws' writable callback.
    private func writeCallers() {
        turnWrites.readSinceFlush = 0
        guard !turnWrites.callers.isEmpty else { return }
        turnWrites.isWriting = true
        defer { turnWrites.isWriting = false }
        for connection in turnWrites.callers {
            guard case .socket(let wsi) = connection.sink else { continue }
            writeOrWait(connection, to: wsi, now: true)
        }
        turnWrites.callers.removeAll(keepingCapacity: true)
    }

    /// One write of `connection` now when `now` and it has something to write
    /// at a turn's end; otherwise (a stream, the kernel holding back earlier
    /// bytes, a close due) it waits for lws' writable callback.
    private func writeOrWait(_ connection: Connection, to wsi: OpaquePointer, now: Bool) {
        if now, connection.writesAtTurnEnd {
            if write(connection, to: wsi) < 0 { connection.cutOff() }
        } else {
            connection.writeWhenWritable()
        }
    }

    private func write(_ connection: Connection, to wsi: OpaquePointer) -> Int32 {
        connection.lastWriteTurn = turnWrites.turn
        let queued = connection.queuedBytes
        let result = connection.writeQueued(
            to: wsi,
            into: &writeScratch,
            limit: Self.writeChunk,
            backedUpLimit: Self.backedUpWriteChunk
        )
        if queued > connection.queuedBytes {
            metrics.bytesOut.increment(by: queued - connection.queuedBytes)
            bytesSinceTrim += queued - connection.queuedBytes
        }
        return result
    }

    /// Closes every connection with `code` (shutdown: 1001).
    func closeAll(_ code: UInt16) {
        thread.assertIsCurrent()
        for connection in connections.values { connection.close(code) }
    }

    /// Keepalive, once a second: a connection silent for a third of
    /// `idle_timeout_s` gets a ping (leaving the answer two thirds of the
    /// window); one silent for all of it is dropped (its peer enters the
    /// reconnect grace). One pass over the connections per second, instead
    /// of lws' per-connection validity timers, whose sorted list makes a
    /// round of n pings cost O(n²). (The join deadline has a timer of its
    /// own: `closeUnjoined`.)
    func sweep(now: Int64) {
        thread.assertIsCurrent()
        let idle = Int64(limits.idleTimeoutS) * 1000
        // After heavy traffic (a join storm, a large fan-out) glibc keeps the
        // freed heap: give it back, at most every 10 s (it measured 380 MB →
        // 96 MB for 10,000 idle peers).
        if bytesSinceTrim >= 16 << 20, now - lastTrim >= 10_000 {
            malloc_trim(0)
            bytesSinceTrim = 0
            lastTrim = now
        }
        for connection in connections.values where !connection.isClosing {
            let silent = now - connection.liveness.lastHeard
            if silent >= idle {
                logger.info("idle connection dropped", metadata: connection.logMetadata)
                connection.cutOff()
            } else if silent >= idle / 3, !connection.liveness.pinged {
                connection.liveness.pinged = true
                connection.enqueue(Frame.ping)
            }
        }
    }
}

/// A condition logged at most once a second: `due` counts each occurrence and
/// returns how many there were since the last line when one is due.
struct OncePerSecond {
    private var last: Int64?
    private var count = 0

    mutating func due(_ now: Int64) -> Int? {
        count += 1
        if let last, now - last < 1000 { return nil }
        last = now
        defer { count = 0 }
        return count
    }
}
