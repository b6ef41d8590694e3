/// The users banned from a room session (1.2, PROTOCOL.md section 22), by
/// `user_id`: a `join` or `preview` with a token of a banned user is 40301
/// until the ban ends (at `until`, or with the session). Bounded: at most
/// `capacity` bans; expired ones are dropped when a ban is added or read.
public struct RoomBans: Sendable, Equatable {
    /// One ban: until when (ms; nil for the rest of the session), why, by whom.
    public struct Ban: Sendable, Equatable {
        public var userID: UserID
        public var until: Int64?
        public var reason: String
        public var bannedBy: ActorRef
        /// Order of banning, for listings and the snapshot (newest kept first).
        var serial: Int
    }

    /// The most bans a room session holds (`peer-ban` past it is 40907).
    public static let capacity = 1000

    private var bans: [UserID: Ban] = [:]
    private var serial = 0

    public init() {}

    /// The ban of `userID` in force at `now`, if any.
    public func ban(of userID: UserID, now: Int64) -> Ban? {
        guard let ban = bans[userID], (ban.until ?? .max) > now else { return nil }
        return ban
    }

    /// Every ban in force at `now`, in the order they were made.
    public func all(now: Int64) -> [Ban] {
        bans.values.filter { ($0.until ?? .max) > now }.sorted { $0.serial < $1.serial }
    }

    public var count: Int { bans.count }

    /// Bans (or re-bans: the new terms replace the old) `userID`. False when
    /// the room already holds `capacity` bans in force.
    mutating func add(_ userID: UserID, until: Int64?, reason: String, by: ActorRef, now: Int64) -> Bool {
        prune(now: now)
        if bans[userID] == nil, bans.count >= Self.capacity { return false }
        serial += 1
        bans[userID] = Ban(userID: userID, until: until, reason: reason, bannedBy: by, serial: serial)
        return true
    }

    /// Lifts the ban of `userID`; false when there was none in force.
    mutating func remove(_ userID: UserID, now: Int64) -> Bool {
        defer { prune(now: now) }
        guard let ban = bans.removeValue(forKey: userID) else { return false }
        return (ban.until ?? .max) > now
    }

    mutating func prune(now: Int64) {
        if bans.values.contains(where: { ($0.until ?? .max) <= now }) {
            bans = bans.filter { ($0.value.until ?? .max) > now }
        }
    }

    /// A snapshot's bans (Takeover.swift), in the order they were made.
    init(restoring saved: [Ban]) {
        for var ban in saved {
            serial += 1
            ban.serial = serial
            bans[ban.userID] = ban
        }
    }
}
