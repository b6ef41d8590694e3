import Logging
import RoomModel

/// Delivers what the model decided: each delivery encoded once and the same
/// frame queued to every recipient, then the peers a change disconnects,
/// the slow consumers dropped on the way, and the leaves all that causes.
/// Used by the dispatcher, the REST API, the timers and the cluster.
///
/// Its service thread's only (checked at each entry in debug builds, not
/// per recipient). (`package`: `roombench micro` measures `fanOut`.)
package final class FanOut {
    /// Test mode's journal (TestMode/TestJournal.swift); nil otherwise.
    var journal: TestJournal?
    /// Test mode's faults: while one is installed, pushes take `deliverWithFaults`.
    var testFaults: TestFaults?
    private let thread: ServiceThread
    private let registry: RoomRegistry
    private let policies: Policies
    private let metrics: ServerMetrics
    private let webhooks: WebhookRelay
    private let homes: RoomHomes
    private let logger: Logger

    /// The work queue of `fanOut`, and whether a `fanOut` is draining it.
    private var pending: [[Delivery]] = []
    private var fanningOut = false

    /// Recipients a paced push is queued to per loop turn (`pace()`), and the
    /// bytes of frames (a push's frame counts once per recipient): whichever
    /// comes first, at least one recipient a turn. Measured (`make bench` (i)
    /// and (k), 10,000 viewers, issue 37): 256 recipients a turn left react's
    /// p99 at 81–87 ms, 64 at 4.2 ms; the bytes keep a turn of large
    /// `on-questions` as short as one of small `on-reactions`.
    static let pacedPerTurn = 64
    static let pacedBytesPerTurn = 64 * 1024
    /// A tick's coalesced push to a large audience, queued `pacedPerTurn`
    /// recipients per loop turn: its frame, encoded once, and the next
    /// recipient's index.
    private struct Paced {
        /// The tick that made it.
        let tick: Schedule.Tick
        /// When its last recipients get it at the latest (monotonic ms): past
        /// it, the rest is queued at once (a service thread too busy to pace).
        let finishBy: Int64
        let delivery: Delivery
        let frame: Frame
        var next = 0
        /// Made at the first held recipient, shared by the others (HeldMerge.swift).
        var held: HeldPush?
    }
    /// The paced pushes, in the order their ticks made them, the first one
    /// going out (a few: one per large audience and tick kind at most).
    private var paced: [Paced] = []

    init(
        thread: ServiceThread,
        registry: RoomRegistry,
        policies: Policies,
        metrics: ServerMetrics,
        webhooks: WebhookRelay,
        homes: RoomHomes,
        logger: Logger
    ) {
        self.thread = thread
        self.registry = registry
        self.policies = policies
        self.metrics = metrics
        self.webhooks = webhooks
        self.homes = homes
        self.logger = logger
    }

    /// Delivers the pushes, then disconnects the peers the change removed:
    /// after their pushes, with 4001/4002. `caller`, the connection whose call
    /// made the change, is not closed here: its code is returned, for the
    /// dispatcher to close it after its response.
    @discardableResult
    func apply(_ effects: Effects, caller: Connection? = nil) -> UInt16? {
        thread.assertIsCurrent()
        fanOut(effects.deliveries)
        var callerCode: UInt16?
        for disconnect in effects.disconnects {
            let endpoint = disconnect.peer.endpoint
            disconnect.peer.endpoint = nil
            guard let connection = endpoint?.connection else { continue }
            connection.peer = nil
            let code: UInt16 = disconnect.reason == .removed ? 4001 : 4002
            logger.info(
                "peer disconnected",
                metadata: [
                    "room": "\(disconnect.peer.room.id)", "peer": "\(disconnect.peer.id)", "code": "\(code)",
                ]
            )
            if connection === caller { callerCode = code } else { connection.close(code) }
        }
        return callerCode
    }

    /// Encodes each delivery once and queues the same frame to every recipient.
    /// Recipients dropped as slow consumers, and peers whose held pushes
    /// overflow their reconnect grace, leave the room right after — and
    /// their leaves are more deliveries, which may end more graces. That
    /// cascade runs here as a work queue, never as recursion: its length is
    /// up to the room's size, which clients control.
    package func fanOut(_ deliveries: [Delivery]) {
        thread.assertIsCurrent()
        webhooks.forward()  // what the change recorded for the operator
        if deliveries.isEmpty { return }
        pending.append(deliveries)
        if fanningOut { return }  // the loop below, further up the stack, takes them
        fanningOut = true
        defer { fanningOut = false }
        var next = 0
        while next < pending.count {
            let batch = pending[next]
            next += 1
            deliver(batch)
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// A tick's coalesced pushes (`on-reactions`, `on-questions`, poll stats,
    /// active speakers): a push to more than `pacedPerTurn` recipients is
    /// queued to them over several loop turns (`pace()`), so that calls read
    /// meanwhile are answered between its writes instead of after all of them
    /// (issue 37: with 10,000 viewers one such push is 10,000 socket writes).
    /// Every recipient still gets each push once, in the order the ticks made
    /// them: while one is paced, the next ones wait behind it, small or not.
    func fanOutPaced(_ deliveries: [Delivery], of tick: Schedule.Tick, within millis: Int) {
        thread.assertIsCurrent()
        if testFaults?.isActive == true {  // faults apply per push at once: no pacing in their cold path
            fanOut(deliveries)
            return
        }
        webhooks.forward()
        var now: [Delivery] = []
        let finishBy = monotonicMillis() + Int64(millis)
        for delivery in deliveries where delivery.recipientCount > 0 {
            if paced.isEmpty, delivery.audience.count <= Self.pacedPerTurn {
                now.append(delivery)
                continue
            }
            let frame = Envelope.push(delivery.push, policyChanges: policies.changeFrames)
            metrics.pushes.increment(by: delivery.recipientCount)
            journal?.push(frame, to: delivery.recipients)  // test mode only
            paced.append(Paced(tick: tick, finishBy: finishBy, delivery: delivery, frame: frame))
        }
        fanOut(now)
    }

    /// Whether a push of `tick`'s is still being paced out.
    func isPacing(_ tick: Schedule.Tick) -> Bool {
        paced.contains { $0.tick == tick }
    }

    /// The rest of `tick`'s paced pushes, queued to their recipients now.
    func finishPacing(_ tick: Schedule.Tick) {
        thread.assertIsCurrent()
        var dropped: [Connection] = []
        var overflowing: [Peer] = []
        for index in paced.indices where paced[index].tick == tick {
            queue(
                paced[index].frame,
                of: paced[index].delivery,
                from: paced[index].next,
                to: paced[index].delivery.audience.count,
                held: &paced[index].held,
                dropped: &dropped,
                overflowing: &overflowing
            )
        }
        paced.removeAll { $0.tick == tick }
        letLeave(dropped: dropped, overflowing: overflowing)
    }

    /// After each loop turn: the paced pushes' next `pacedPerTurn`
    /// recipients. True while some are left (the caller wakes the loop for
    /// the next turn: the recipients may all have been held or remote, with
    /// no socket write to bring one).
    func pace() -> Bool {
        guard !paced.isEmpty else { return false }
        thread.assertIsCurrent()
        var budget = Self.pacedPerTurn
        var bytes = Self.pacedBytesPerTurn
        var dropped: [Connection] = []
        var overflowing: [Peer] = []
        let now = monotonicMillis()
        while budget > 0, bytes > 0, let job = paced.first {
            let audience = job.delivery.audience.count
            let count =
                now >= job.finishBy
                ? audience  // late: the rest now
                : min(budget, max(1, bytes / max(1, job.frame.count)))
            let end = min(audience, job.next + count)
            queue(
                job.frame,
                of: job.delivery,
                from: job.next,
                to: end,
                held: &paced[0].held,
                dropped: &dropped,
                overflowing: &overflowing
            )
            budget -= end - job.next
            bytes -= (end - job.next) * job.frame.count
            if end < audience {
                paced[0].next = end
            } else {
                paced.removeFirst()
            }
        }
        letLeave(dropped: dropped, overflowing: overflowing)
        return !paced.isEmpty
    }

    /// One batch of `fanOut`: queues the frames, then lets the dropped and
    /// overflowing peers leave (their deliveries join `pending`).
    private func deliver(_ deliveries: [Delivery]) {
        var dropped: [Connection] = []
        var overflowing: [Peer] = []
        for delivery in deliveries {
            let frame = Envelope.push(delivery.push, policyChanges: policies.changeFrames)
            metrics.pushes.increment(by: delivery.recipientCount)
            journal?.push(frame, to: delivery.recipients)  // test mode only
            if testFaults?.isActive == true {  // test mode with a fault on: the cold path
                deliverWithFaults(
                    HeldPush(delivery.push, frame: frame),
                    to: delivery.recipients,
                    dropped: &dropped,
                    overflowing: &overflowing
                )
                continue
            }
            var held: HeldPush?
            queue(
                frame,
                of: delivery,
                from: 0,
                to: delivery.audience.count,
                held: &held,
                dropped: &dropped,
                overflowing: &overflowing
            )
        }
        letLeave(dropped: dropped, overflowing: overflowing)
    }

    /// Queues `frame` to `delivery`'s audience from index `start` to `end`
    /// (its excluded peer skipped): the fan-out's hot loop.
    @inline(__always)
    private func queue(
        _ frame: Frame,
        of delivery: Delivery,
        from start: Int,
        to end: Int,
        held: inout HeldPush?,
        dropped: inout [Connection],
        overflowing: inout [Peer]
    ) {
        // No per-push recipient array, and no reference counting per
        // recipient: `delivery.audience` owns every peer, and each peer its
        // `endpoint`, for the whole loop; nothing in it changes an endpoint
        // (the dropped and overflowing are handled after it). Retain/release
        // here was 16 % of roomd's samples at the fan-out's knee
        // (docs/BENCHMARKS.md, levers). The endpoint's type is its `kind`:
        // a switch, no dynamic cast.
        let excluded = delivery.excluded.map { ObjectIdentifier($0) }
        // `held` is made at the first held recipient: merges are shared (HeldMerge.swift).
        delivery.audience.withUnsafeBufferPointer { audience in
            for index in start..<end {
                unowned(unsafe) let peer = audience[index]
                if ObjectIdentifier(peer) == excluded { continue }
                guard let reference = peer.endpointReference else { continue }
                reference._withUnsafeGuaranteedRef { endpoint in
                    switch endpoint.kind {
                    case .connection:
                        let connection = unsafeDowncast(endpoint, to: Connection.self)
                        if !connection.enqueue(frame), connection.isDroppedAsSlow { dropped.append(connection) }
                    case .held:
                        let push = held ?? HeldPush(delivery.push, frame: frame)
                        held = push
                        if !unsafeDowncast(endpoint, to: HeldPushes.self).hold(push) { overflowing.append(peer) }
                    }
                }
            }
        }
    }

    /// The slow consumers a fan-out dropped, and the peers whose held pushes
    /// overflowed their grace: they leave now (their leaves are more deliveries).
    private func letLeave(dropped: [Connection], overflowing: [Peer]) {
        for connection in dropped { dropSlowConsumer(connection) }
        // A recipient may have left since its delivery was built (a batch of
        // graces ending together); its room may be gone: skip it.
        for peer in overflowing where !peer.hasLeft && peer.endpoint?.kind == .held {
            logger.info(
                "reconnect grace ended: its held pushes passed resume_buffer_bytes",
                metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)"]
            )
            peer.endpoint = nil
            fanOut(registry.leave(peer, reason: .websocketClosed))
        }
    }

    /// `deliver`'s loop while test mode has a fault installed: a push fault
    /// naming this push (section 33) drops it or starts a delay, and a
    /// connection with a fault gets the push through it (`drop`, `delay`).
    /// Kept apart so that the hot loop has no per-recipient test-mode check.
    private func deliverWithFaults(
        _ push: HeldPush,
        to recipients: [Peer],
        dropped: inout [Connection],
        overflowing: inout [Peer]
    ) {
        let frame = push.frame
        // Section 33's push faults: what applies to this push, by its name.
        var plan = PushFaults.Plan()
        if let faults = testFaults, !faults.pushes.isEmpty, let name = Envelope.method(of: frame) {
            plan = faults.pushes.plan(for: name)
        }
        defer { if !plan.isEmpty { testFaults?.pushes.removeSpent() } }
        for peer in recipients {
            if let connection = peer.endpoint?.connection {
                if !plan.isEmpty, !connection.isClosing, let faults = testFaults {
                    switch faults.pushes.verdict(for: peer.id, in: plan) {
                    case .drop:
                        metrics.testPushesDropped.increment()
                        metrics.testFaultDrops.increment()
                        continue
                    case .delay(let ms): faults.delay(connection, ms: ms)
                    case .deliver: break
                    }
                }
                switch connection.fault == nil
                    ? (connection.enqueue(frame) ? .queued : .refused) : connection.faultedPush(frame)
                {
                case .dropped:
                    metrics.testPushesDropped.increment()
                    metrics.testFaultDrops.increment()
                case .held: metrics.testFaultDelays.increment()
                case .refused where connection.isDroppedAsSlow: dropped.append(connection)
                default: break
                }
            } else if let held = peer.endpoint?.held, !held.hold(push) {
                overflowing.append(peer)
            }
        }
    }

    /// A connection closed by the slow-consumer rule: its peer goes now, not when the socket closes.
    func dropSlowConsumer(_ connection: Connection) {
        thread.assertIsCurrent()
        logger.info("slow consumer dropped", metadata: connection.logMetadata)
        metrics.slowConsumerCloses.increment()
        connectionLost(connection)
    }

    /// The connection is gone without `leave`: the peer enters its reconnect
    /// grace (pushes to it are held), or leaves at once when there is none.
    func connectionLost(_ connection: Connection) {
        thread.assertIsCurrent()
        guard let peer = connection.peer, peer.endpoint === connection else { return }
        homes.touch(peer.room.id)
        connection.peer = nil
        if registry.startGrace(peer) {
            peer.endpoint = HeldPushes(
                budget: registry.settings.room.resumeBufferBytes,
                speakersShown: registry.speakersShown(to: peer),
                metrics: metrics
            )
            logger.info(
                "peer disconnected, in reconnect grace",
                metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)"]
            )
            return
        }
        peer.endpoint = nil
        logger.info(
            "peer left",
            metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)", "reason": "websocket closed"]
        )
        fanOut(registry.leave(peer, reason: .websocketClosed))
    }
}
