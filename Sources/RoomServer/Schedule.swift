import RoomModel

/// Every timer of a service thread, in one place. Deadlines — the end of a
/// reconnect grace, of a role-change request, of a timed poll, of an HLS
/// cue, of a timed chat ban — are the model's (`RoomRegistry.next…`, read against the injected
/// clock); the join deadline is the transport's (`Sockets.nextJoinDeadline`,
/// the connection that has waited longest, on the monotonic clock). Each is
/// re-armed after each change that may move it and after each firing. Ticks
/// run at the template's intervals. A timer kind is a case here, so none can
/// be added without the schedule knowing it.
///
/// Service thread only; the lws timers exist from `start` on (before it,
/// `rearm` does nothing: nothing is served yet).
final class Schedule {
    /// A deadline of the model.
    enum Deadline: CaseIterable {
        case reconnectGrace, roleChangeRequest, pollEnd, cueEnd
        /// The end of a timed chat ban (its user's peers get `on-chat-state`).
        case chatBanEnd
        /// The earliest `join_timeout_s` of a WebSocket that has not joined.
        case joinDeadline
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

    init(registry: RoomRegistry, clock: RoomClock, sockets: Sockets) {
        self.registry = registry
        self.clock = clock
        self.sockets = sockets
    }

    /// Milliseconds between two ticks of `tick`.
    func period(of tick: Tick) -> Int {
        switch tick {
        case .activeSpeakers: registry.settings.activeSpeakers.intervalMs
        case .roomState: registry.settings.room.roomStateIntervalMs
        case .pollStats: registry.pollStatsTickMs
        case .questions: registry.settings.qa.intervalMs
        case .reactions: registry.settings.reactions.intervalMs
        case .keepalive: 1000
        }
    }

    /// When `deadline` comes next, if anything waits for it, and the time
    /// now on the same clock (ms): the model's clock for its deadlines, the
    /// monotonic clock for the transport's.
    func next(_ deadline: Deadline) -> (at: Int64?, now: Int64) {
        switch deadline {
        case .reconnectGrace: (registry.nextGraceExpiry, clock.nowMillis())
        case .roleChangeRequest: (registry.nextRoleChangeExpiry, clock.nowMillis())
        case .pollEnd: (registry.nextPollDeadline, clock.nowMillis())
        case .cueEnd: (registry.nextCueExpiry, clock.nowMillis())
        case .chatBanEnd: (registry.nextChatBanExpiry, clock.nowMillis())
        case .joinDeadline: (sockets.nextJoinDeadline, monotonicMillis())
        }
    }

    /// Creates the timers on the loop of `context`. `fired` runs at each
    /// deadline (the timer is re-armed after it), `tick` at each tick.
    func start(context: OpaquePointer, fired: @escaping (Deadline) -> Void, tick: @escaping (Tick) -> Void) {
        for deadline in Deadline.allCases {
            deadlines[deadline] = LoopTimer(context: context) { [unowned self] in
                fired(deadline)
                rearm(deadline)
            }
        }
        for kind in Tick.allCases {
            others.append(LoopTimer(context: context, every: period(of: kind)) { tick(kind) })
        }
        self.context = context
    }

    /// A change may have moved `deadline`: the timer is set for its next time.
    func rearm(_ deadline: Deadline) {
        let (at, now) = next(deadline)
        deadlines[deadline]?.schedule(at: at, now: now)
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
