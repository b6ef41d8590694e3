import RoomModel

/// Every timer of a service thread, in one place. The model's deadlines —
/// the end of a reconnect grace, of a role-change request, of a timed poll,
/// of an HLS cue, of a timed chat ban, of an empty room's wait, a token
/// warning, and any kind added later — are one queue in the registry
/// (`RoomRegistry.nextDeadline`, read against the injected clock: RoomModel's
/// ModelDeadline.swift), one `.model` deadline here; the join deadline is the
/// transport's (`Sockets.nextJoinDeadline`, the connection that has waited
/// longest, on the monotonic clock or test mode's manual one), the fault end
/// test mode's. No caller re-arms anything: after every turn of the loop
/// `afterTurn` reads each deadline's next time (O(1)) and sets its timer
/// when that moved. Ticks run at the template's intervals. A timer kind is
/// a case here, so none can be added without the schedule knowing it.
///
/// With test mode's manual clock (PROTOCOL.md section 25) the model's
/// deadlines and the ticks that follow the clock are not lws timers: they
/// fire only in `advance(to:)`, in time order, as the clock passes them
/// (`followsManualClock` says which; keepalive keeps real time).
///
/// Its service thread's only: the lws timers check it when they fire
/// (LoopTimer, debug builds), and every caller is a checked component. The
/// timers exist from `start` on (before it, `afterTurn` does nothing:
/// nothing is served yet).
final class Schedule {
    /// A deadline of the model.
    enum Deadline: CaseIterable {
        /// The registry's next model deadline, whatever its kind (a reconnect
        /// grace, an empty room's wait, a token warning, …: RoomModel's
        /// `ModelDeadline`s, one queue): a new kind needs no case here.
        case model
        /// The earliest `join_timeout_s` of a WebSocket that has not joined.
        case joinDeadline
        /// The end of test mode's earliest stall or delay fault (TestMode/).
        case faultEnd
    }

    /// A periodic tick.
    enum Tick: CaseIterable {
        /// `active-speakers` (settings.active_speakers.interval_ms).
        case activeSpeakers
        /// Large rooms' `room-state` (settings.room.room_state_interval_ms).
        case roomState
        /// One slice of `on-poll-stats` (RoomRegistry.pollStatsTickMs).
        case pollStats
        /// Coalesced `on-questions` (settings.qa.interval_ms).
        case questions
        /// `on-reactions` (settings.reactions.interval_ms).
        case reactions
        /// Coalesced `on-stage-queue` (settings.stage.interval_ms).
        case stage
        /// Pings, idle connections, request heads, heap trimming (1 s).
        case keepalive
    }

    private let registry: RoomRegistry
    private let clock: RoomClock
    private let sockets: Sockets
    /// The lws context the timers run on (set by `start`).
    private var context: OpaquePointer?
    private var deadlines: [Deadline: LoopTimer] = [:]
    private var others: [LoopTimer] = []
    /// When each deadline's timer was last set for (`.some(nil)`: nothing
    /// waits; no entry: not set since it last fired).
    private var armed: [Deadline: Int64?] = [:]
    /// Test mode's manual clock, nil on the system clock.
    let manual: TestModeClock?
    /// Test mode's faults (their ends are a deadline); nil outside test mode.
    var faults: TestFaults?
    /// Manual clock: what `start` was given to run at a deadline or a tick.
    private var fired: ((Deadline) -> Void)?
    private var ticked: ((Tick) -> Void)?
    /// Manual clock: when each tick that follows it comes next (on a grid
    /// of its period from the clock's start), and whether anything happened
    /// since it last ran (a clean tick has nothing to do and is skipped).
    private var nextTick: [Tick: Int64] = [:]
    private var dirty: Set<Tick> = []

    init(registry: RoomRegistry, clock: RoomClock, sockets: Sockets) {
        self.registry = registry
        self.clock = clock
        self.sockets = sockets
        manual = clock as? TestModeClock
    }

    /// Whether a timer kind follows test mode's manual clock (section 25):
    /// every model deadline, the join deadline and every tick of the rooms;
    /// keepalive (pings, idle sockets, request heads) keeps real time.
    static func followsManualClock(_ deadline: Deadline) -> Bool {
        switch deadline {
        case .model, .joinDeadline, .faultEnd: true
        }
    }

    static func followsManualClock(_ tick: Tick) -> Bool {
        switch tick {
        case .activeSpeakers, .roomState, .pollStats, .questions, .reactions, .stage: true
        case .keepalive: false
        }
    }

    /// Milliseconds between two ticks of `tick`.
    func period(of tick: Tick) -> Int {
        switch tick {
        case .activeSpeakers: registry.settings.activeSpeakers.intervalMs
        case .roomState: registry.settings.room.roomStateIntervalMs
        case .pollStats: registry.pollStatsTickMs
        case .questions: registry.settings.qa.intervalMs
        case .reactions: registry.settings.reactions.intervalMs
        case .stage: registry.settings.stage.intervalMs
        case .keepalive: 1000
        }
    }

    /// When `deadline` comes next, if anything waits for it, and the time
    /// now on the same clock (ms): the model's clock for its deadlines, the
    /// monotonic clock for the transport's.
    func next(_ deadline: Deadline) -> (at: Int64?, now: Int64) {
        switch deadline {
        case .model: (registry.nextDeadline, clock.nowMillis())
        case .joinDeadline: (sockets.nextJoinDeadline, sockets.joinClockNow)
        case .faultEnd: (faults?.nextEnd, clock.nowMillis())
        }
    }

    /// Creates the timers on the loop of `context`. `fired` runs at each
    /// deadline (its timer is set again at the end of that turn), `tick` at
    /// each tick.
    func start(context: OpaquePointer, fired: @escaping (Deadline) -> Void, tick: @escaping (Tick) -> Void) {
        for deadline in Deadline.allCases where manual == nil || !Self.followsManualClock(deadline) {
            deadlines[deadline] = LoopTimer(context: context) { [unowned self] in
                fired(deadline)
                armed[deadline] = nil  // spent: set again by afterTurn, whatever comes next
            }
        }
        for kind in Tick.allCases {
            if let manual, Self.followsManualClock(kind) {
                nextTick[kind] = manual.now + Int64(period(of: kind))
                dirty.insert(kind)
            } else {
                others.append(LoopTimer(context: context, every: period(of: kind)) { tick(kind) })
            }
        }
        self.fired = fired
        ticked = tick
        self.context = context
    }

    /// The end of every turn of the loop (`RoomServer.run`), the one place a
    /// deadline's timer is set: any call may have moved a deadline (any leave
    /// may empty a room or end a grace, any join track a token), so each
    /// kind's next time is read here — O(1) for the model's queue and the
    /// join deadline, O(faulted connections) for test mode's faults — and
    /// its timer set only when that moved.
    func afterTurn() {
        guard context != nil else { return }
        if let manual {
            // On the manual clock a deadline that is already due (a token warned at
            // once, say) runs at the end of this turn, as a 0-ms timer would: only
            // what lies ahead waits for an advance.
            let due = Deadline.allCases.contains { deadline in
                guard Self.followsManualClock(deadline) else { return false }
                let (at, now) = next(deadline)
                return at.map { $0 <= now } ?? false
            }
            if due { advance(to: manual.now) }
            return
        }
        for deadline in Deadline.allCases {
            let (at, now) = next(deadline)
            guard armed[deadline] != .some(at) else { continue }
            deadlines[deadline]?.schedule(at: at, now: now)
            armed[deadline] = .some(at)  // nil too: "nothing waits" is what was set
        }
    }

    /// Manual clock only: moves it to `target`, running every deadline and
    /// tick it passes in time order (deadlines before ticks at the same
    /// millisecond, each kind in its declaration order), each at its own
    /// time. A tick runs only if something happened since it last ran, so
    /// a jump of years costs one step per deadline met, not one per period.
    /// Returns how many timers ran.
    @discardableResult
    func advance(to target: Int64) -> Int {
        guard let manual, let fired, let ticked, target >= manual.now else { return 0 }
        for kind in nextTick.keys { dirty.insert(kind) }  // calls may have come since the last advance
        var ran = 0
        while true {
            var earliest: (at: Int64, deadline: Deadline?, tick: Tick?)?
            for deadline in Deadline.allCases where Self.followsManualClock(deadline) {
                if let at = next(deadline).at, at <= target, earliest == nil || at < earliest!.at {
                    earliest = (at, deadline, nil)
                }
            }
            for kind in Tick.allCases where dirty.contains(kind) {
                guard let at = nextTick[kind], at <= target else { continue }
                if earliest == nil || at < earliest!.at { earliest = (at, nil, kind) }
            }
            guard let due = earliest else { break }
            manual.now = max(manual.now, due.at)
            if let deadline = due.deadline {
                // Ticks skipped while clean come back on their grid, from now on.
                for (kind, at) in nextTick where at < due.at {
                    nextTick[kind] = gridPoint(of: kind, from: at, atLeast: due.at)
                }
                fired(deadline)
                for kind in nextTick.keys { dirty.insert(kind) }
            } else if let kind = due.tick {
                dirty.remove(kind)
                ticked(kind)
                if hasPendingWork(kind) { dirty.insert(kind) }
                nextTick[kind] = due.at + Int64(period(of: kind))
            }
            ran += 1
        }
        // Clean ticks keep their grid: the next period boundary after the target.
        for (kind, at) in nextTick where at <= target {
            nextTick[kind] = gridPoint(of: kind, from: at, atLeast: target + 1)
        }
        manual.now = target
        return ran
    }

    /// Whether `tick` has work left after it ran that no call will announce:
    /// the poll-stats slices not served yet (a peer hears its poll's stats
    /// on its own slice's tick), the rest of a coalesced push cut at its
    /// bound. On the manual clock such a tick stays due: skipping it as
    /// clean left the other slices without their `on-poll-stats` until the
    /// next advance.
    private func hasPendingWork(_ tick: Tick) -> Bool {
        switch tick {
        case .pollStats: registry.hasPendingPollStats
        case .questions: registry.hasPendingQuestionPushes
        case .reactions: registry.hasPendingReactionPushes
        case .stage: registry.hasPendingStagePushes
        case .roomState: registry.hasPendingRoomStates
        case .activeSpeakers, .keepalive: false
        }
    }

    /// The first time `at + k × period` (k ≥ 0) that is not before `time`.
    private func gridPoint(of kind: Tick, from at: Int64, atLeast time: Int64) -> Int64 {
        guard at < time else { return at }
        let period = Int64(period(of: kind))
        return at + (time - at + period - 1) / period * period
    }

    /// A periodic timer of another component (the cluster's state saving);
    /// false before `start`.
    @discardableResult
    func every(_ millis: Int, _ action: @escaping () -> Void) -> Bool {
        guard let context else { return false }
        others.append(LoopTimer(context: context, every: millis, action: action))
        return true
    }

    /// Runs `action` once, `millis` from now (the shutdown's drain deadline).
    func once(afterMillis millis: Int, _ action: @escaping () -> Void) {
        guard let context else { return }
        let timer = LoopTimer(context: context, action: action)
        timer.schedule(afterMillis: millis)
        others.append(timer)
    }
}
