import RoomCollections

/// A room session's chat rules (1.2, PROTOCOL.md section 22): who is
/// chat-banned (by `user_id`, until when), whether the chat is paused, and
/// slow mode with one clock per user. Bounded: at most `chatBanCapacity`
/// chat bans and `SlowModeClocks.capacity` clocks.
public struct ChatControls: Sendable, Equatable {
    /// A chat ban: nil `until` lasts the rest of the session.
    public struct ChatBan: Sendable, Equatable {
        public var userID: UserID
        public var until: Int64?
        /// A shadow chat ban (1.3, section 31): the user is not told; its
        /// messages reach only its own peers and the moderators.
        public var shadow: Bool = false
        /// Who chat-banned the user (1.3, REST `GET chat-bans`); a snapshot
        /// saved before 1.3 restores it as the server PeerRef.
        public var bannedBy: ActorRef = .server
        var serial: Int
    }

    /// The most chat bans a room session holds (`chat-ban` past it is 40907).
    public static let chatBanCapacity = 1000
    /// `slow_mode_s`'s range.
    public static let slowModeRange = 0...3600

    public internal(set) var paused = false
    public internal(set) var slowModeSeconds = 0
    private var chatBans: [UserID: ChatBan] = [:]
    private var serial = 0
    /// When each user last sent a message to everyone under slow mode.
    var clocks = SlowModeClocks()

    public init() {}

    /// The chat ban of `userID` in force at `now`.
    public func chatBan(of userID: UserID, now: Int64) -> ChatBan? {
        guard let ban = chatBans[userID], (ban.until ?? .max) > now else { return nil }
        return ban
    }

    /// Every chat ban (in force or expired but not yet ended), oldest first.
    public var allChatBans: [ChatBan] { chatBans.values.sorted { $0.serial < $1.serial } }

    public var chatBanCount: Int { chatBans.count }

    /// The earliest end of a timed chat ban.
    var nextChatBanEnd: Int64? { chatBans.values.compactMap(\.until).min() }

    /// False when `capacity` chat bans are already held (expired ones are ended first by the caller).
    mutating func addChatBan(_ userID: UserID, until: Int64?, shadow: Bool = false, by: ActorRef = .server) -> Bool {
        if chatBans[userID] == nil, chatBans.count >= Self.chatBanCapacity { return false }
        serial += 1
        chatBans[userID] = ChatBan(userID: userID, until: until, shadow: shadow, bannedBy: by, serial: serial)
        return true
    }

    /// Removes the chat ban of `userID`; false when there was none.
    mutating func removeChatBan(_ userID: UserID) -> Bool {
        chatBans.removeValue(forKey: userID) != nil
    }

    /// The chat bans that ended at `now` (removed), in the order they were made.
    mutating func endChatBans(now: Int64) -> [ChatBan] {
        let ended = chatBans.values.filter { ($0.until ?? .max) <= now }.sorted { $0.serial < $1.serial }
        for ban in ended { chatBans.removeValue(forKey: ban.userID) }
        return ended
    }

    mutating func setSlowMode(_ seconds: Int) {
        slowModeSeconds = seconds
        if seconds == 0 { clocks = SlowModeClocks() }
    }

    /// A snapshot's chat state (Takeover.swift).
    init(paused: Bool, slowModeSeconds: Int, chatBans: [ChatBan]) {
        self.paused = paused
        self.slowModeSeconds = slowModeSeconds
        for var ban in chatBans {
            serial += 1
            ban.serial = serial
            self.chatBans[ban.userID] = ban
        }
    }
}

/// Slow mode's per-user clocks: when each user last sent a message to
/// everyone. A clock older than the slow-mode interval is expired and dropped
/// (oldest first: the clocks are kept in sending order, so the expired ones
/// are always at the front). At most `capacity` clocks: when every one of
/// them is live, a user without a clock waits for the oldest to expire.
struct SlowModeClocks: Sendable, Equatable {
    static let capacity = 10_000

    private var last: [UserID: Int64] = [:]
    /// (user, sent at) in sending order; a user's older entries are stale
    /// (`last` holds its newest) and are skipped when they reach the front.
    private var order = FIFO<(user: UserID, at: Int64)>()

    var count: Int { last.count }

    static func == (a: SlowModeClocks, b: SlowModeClocks) -> Bool { a.last == b.last }

    /// Drops the clocks that expired at `now` for an interval of `intervalMs`.
    mutating func prune(now: Int64, intervalMs: Int64) {
        while let front = order.first {
            let current = last[front.user] == front.at
            if current, front.at + intervalMs > now { break }
            if current { last.removeValue(forKey: front.user) }
            order.removeFirst()
        }
    }

    /// Milliseconds `user` must still wait at `now` (0: it may send now).
    mutating func wait(for user: UserID, now: Int64, intervalMs: Int64) -> Int64 {
        prune(now: now, intervalMs: intervalMs)
        if let sent = last[user] { return sent + intervalMs - now }
        if last.count >= Self.capacity, let oldest = order.first { return oldest.at + intervalMs - now }
        return 0
    }

    /// `user` sent a message at `now`.
    mutating func sent(_ user: UserID, now: Int64) {
        last[user] = now
        order.append((user, now))
    }
}
