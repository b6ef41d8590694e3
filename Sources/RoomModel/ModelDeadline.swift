import RoomCollections

/// A kind of model deadline (the end of a reconnect grace, of an empty
/// room's wait, a token warning, …): what happens when its time passes.
/// Every model deadline is an entry of the registry's one queue
/// (`RoomRegistry.deadlines`); the server's loop asks it for the next time
/// and runs `expireDue()` then. A new kind is a type that conforms to this
/// protocol and calls `schedule(_:at:)`: nothing else to wire, no timer to
/// re-arm (the loop reads `nextDeadline` after every turn).
public protocol ModelDeadline {
    /// Among kinds due at the same millisecond, the lower runs first.
    static var rank: Int { get }
    /// Its time (`now`, the time it was scheduled for) passed. The entry has
    /// left the queue already: what this schedules or cancels is safe.
    func expire(in registry: RoomRegistry, at now: Int64) -> Expired
}

/// What one deadline did, for the server: pushes and disconnects to carry
/// out, and a line for the log (RoomModel has no logger).
public struct Expired {
    public var effects: Effects
    public var log: (message: String, metadata: [String: String])?

    public init(effects: Effects = Effects(), log: (message: String, metadata: [String: String])? = nil) {
        self.effects = effects
        self.log = log
    }

    public init(_ deliveries: [Delivery]) { self.init(effects: Effects(deliveries: deliveries)) }
}

/// The handle of one scheduled model deadline (kept on what it times, to cancel or move it).
public typealias DeadlineID = DeadlineQueue<any ModelDeadline>.ID

extension RoomRegistry {
    /// When the next model deadline is due, whatever its kind: O(1).
    public var nextDeadline: Int64? { deadlines.next }

    /// Live model deadlines (tests: the queue holds these and no more).
    public var deadlineCount: Int { deadlines.count }

    /// Adds `deadline`, due at `at` (ms, the registry's clock). O(log n).
    @discardableResult
    public func schedule<D: ModelDeadline>(_ deadline: D, at: Int64) -> DeadlineID {
        deadlines.schedule(deadline, at: at, rank: D.rank)
    }

    /// Moves a deadline (nothing for a stale or nil `id`). O(log n).
    public func reschedule(_ id: DeadlineID?, at: Int64) {
        if let id { deadlines.reschedule(id, at: at) }
    }

    /// Removes a deadline (nothing for a stale or nil `id`). O(log n).
    public func cancel(_ id: DeadlineID?) {
        if let id { deadlines.cancel(id) }
    }

    /// Runs every deadline due at the clock's time, in (time, rank, order
    /// scheduled) order, each told its own time; one that schedules another
    /// already due runs it too. Returns what they did, in that order.
    public func expireDue() -> [Expired] {
        let now = clock.nowMillis()
        var expired: [Expired] = []
        while let due = deadlines.popDue(now: now) {
            expired.append(due.payload.expire(in: self, at: due.at))
        }
        return expired
    }
}
