import RoomCollections
import RoomProtocol
import RoomWire

/// What `react` counts (PROTOCOL.md section 20): a message of the history,
/// the show itself, or a contestant of a battle vote.
public enum ReactionTarget: Hashable, Sendable {
    case message(String)
    case stream
    case contestant(String)

    static let contestantPrefix = "contestant:"

    /// `"stream"`, `"contestant:<id>"`, or else a message id; nil for a
    /// contestant whose id does not match `[A-Za-z0-9_-]{1,64}`.
    public init?(_ name: String) {
        if name == "stream" {
            self = .stream
        } else if name.hasPrefix(Self.contestantPrefix) {
            let id = String(name.dropFirst(Self.contestantPrefix.count))
            guard Self.isValidContestant(id) else { return nil }
            self = .contestant(id)
        } else {
            self = .message(name)
        }
    }

    /// The target as the wire names it.
    public var name: String {
        switch self {
        case .message(let id): id
        case .stream: "stream"
        case .contestant(let id): Self.contestantPrefix + id
        }
    }

    /// Taps add up (stream, contestants); a message takes one reaction of each type per user.
    public var isTap: Bool {
        if case .message = self { false } else { true }
    }

    static func isValidContestant(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { b in
                switch b {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }
}

/// A room session's reactions and taps (PROTOCOL.md section 20): per
/// target and type, the total and each user's share (by `user_id`), and
/// which totals changed since the last `on-reactions`.
///
/// Bounds: at most `maxContestants` contestant targets per session, and
/// `maxUserEntries` (target, type, user) entries with a count, all targets
/// together (40907 beyond either). A message's reactions go with the
/// message (deleted, cleared, dropped from the ring), so they never
/// outnumber the history's messages.
///
/// Costs: everything is indexed by target, so dropping a message's
/// reactions costs what it holds (its pairs and their users), never a scan
/// of the room's: `message-delete`, the ring's eviction and `chat-clear`
/// (each cleared message's) stay O(what they remove). One push carries at
/// most `pushBudget` bytes of encoded counts; the rest waits, in order.
public struct Reactions: Sendable {
    public static let maxContestants = 100
    public static let maxUserEntries = 100_000
    /// The most bytes of encoded counts (each `{"target","type","total"}`
    /// and its comma, JSON escapes included) one `on-reactions` carries; at
    /// least one count. What does not fit waits for the next push.
    public static let pushBudget = 16 * 1024

    /// target name → type → tally; a tally's total is above 0 (a pair whose
    /// total fell to 0 is removed).
    private var tallies: [String: [String: Tally]] = [:]
    /// (target, type, user) entries with a count above 0.
    public private(set) var userEntries = 0
    /// Contestant targets of the session (taps cannot be taken back, so they only grow).
    public private(set) var contestantCount = 0
    /// The contestant targets tapped (at most `maxContestants`), so that
    /// listing them never scans the messages' targets.
    private var contestants: Set<String> = []
    /// Pairs whose total changed since the last push, in the order of their
    /// first change, and the total the peers last heard for each. A pair is
    /// pending while `heard` holds it: dropping a message takes its pairs
    /// out of `heard` (through `pendingTypes`) and leaves their places in
    /// `pending`, which the next push skips. So `pending` is at most the
    /// changes since the last push, and a drop never scans it.
    private var pending = FIFO<Pair>()
    private var heard: [Pair: Int] = [:]
    /// The types of the pending pairs, by target.
    private var pendingTypes: [String: [String]] = [:]

    struct Tally: Sendable, Equatable {
        var total = 0
        var users: [UserID: Int] = [:]
    }

    struct Pair: Hashable, Sendable {
        var target: String
        var type: String
    }

    public init() {}

    /// Whether some total changed since the last push.
    public var hasPending: Bool { !heard.isEmpty }

    /// Whether a change of `target` waits for a push.
    func isPending(_ target: String) -> Bool { pendingTypes[target] != nil }

    public func total(_ target: String, _ type: String) -> Int { tallies[target]?[type]?.total ?? 0 }

    /// `user`'s own count on (target, type).
    public func count(of user: UserID, _ target: String, _ type: String) -> Int {
        tallies[target]?[type]?.users[user] ?? 0
    }

    /// The pairs of `target` with a total above 0, in the order of `types`,
    /// with `user`'s own count as `mine` when given.
    public func counts(of target: String, types: [String], mine user: UserID? = nil) -> [ReactionCount] {
        guard let byType = tallies[target] else { return [] }
        return types.compactMap { type in
            guard let tally = byType[type] else { return nil }
            return ReactionCount(
                target: target,
                type: type,
                total: tally.total,
                mine: user.map { tally.users[$0] ?? 0 }
            )
        }
    }

    /// The contestant targets with a count, by name.
    var contestantNames: [String] {
        contestants.filter { tallies[$0] != nil }.sorted()
    }

    // MARK: changes

    /// Adds `count` to `user`'s share of (target, type); on a message a
    /// user's share is at most 1 and a repeat changes nothing.
    /// Returns the total after. 40907 when it would take a new contestant
    /// or a new user entry beyond the bounds.
    mutating func add(_ count: Int, by user: UserID, on target: ReactionTarget, type: String) throws(RoomError) -> Int {
        let name = target.name
        let share = tallies[name]?[type]?.users[user] ?? 0
        let before = tallies[name]?[type]?.total ?? 0
        if !target.isTap, share > 0 { return before }
        if share == 0, userEntries >= Self.maxUserEntries {
            throw RoomError(
                .tooMany,
                "too many reactions: the room keeps at most \(Self.maxUserEntries) (target, type, user) counts"
            )
        }
        if case .contestant = target, tallies[name] == nil {
            if contestantCount >= Self.maxContestants {
                throw RoomError(.tooMany, "target: at most \(Self.maxContestants) contestants per room session")
            }
            contestantCount += 1
            contestants.insert(name)
        }
        if share == 0 { userEntries += 1 }
        let total = Self.adding(before, count)
        // In place: a tally's users may be many (no copy per tap).
        tallies[name, default: [:]][type, default: Tally()].users[user] = Self.adding(share, count)
        tallies[name, default: [:]][type, default: Tally()].total = total
        changed(Pair(target: name, type: type), from: before)
        return total
    }

    /// Removes `user`'s reaction of `type` from message `target`; nothing
    /// when there is none. Returns the total after.
    mutating func remove(by user: UserID, on target: String, type: String) -> Int {
        let before = total(target, type)
        guard let share = tallies[target]?[type]?.users.removeValue(forKey: user) else { return before }
        userEntries -= 1
        let total = before - share
        if total > 0 {
            tallies[target]?[type]?.total = total
        } else {
            tallies[target]?[type] = nil
            if tallies[target]?.isEmpty == true { tallies[target] = nil }
        }
        changed(Pair(target: target, type: type), from: before)
        return total
    }

    /// A message left the history (deleted, dropped from the ring): its
    /// reactions go, and are not pushed. O(its pairs and their users).
    mutating func drop(message id: String) {
        if let byType = tallies.removeValue(forKey: id) {
            for tally in byType.values { userEntries -= tally.users.count }
        }
        if let types = pendingTypes.removeValue(forKey: id) {
            for type in types { heard.removeValue(forKey: Pair(target: id, type: type)) }
            if heard.isEmpty { pending.removeAll(keepingCapacity: true) }
        }
    }

    /// `chat-clear`: the reactions of `messages` (the cleared history's ids)
    /// go, not pushed; taps stay. O(what they held).
    mutating func drop(messages: some Sequence<String>) {
        for id in messages { drop(message: id) }
    }

    /// The pairs whose total differs from what the peers last heard, in the
    /// order they first changed, as many as fit in `budget` bytes encoded
    /// (at least one); the peers have heard them after this. The others stay
    /// pending, in their order, for the next push (`hasPending`).
    mutating func takeChanged(budget: Int = pushBudget) -> [ReactionCount] {
        var counts: [ReactionCount] = []
        var used = 2  // []
        while let pair = pending.first {
            guard let before = heard[pair] else {  // dropped with its message, or already taken
                pending.removeFirst()
                continue
            }
            let now = total(pair.target, pair.type)
            if now != before {
                let count = ReactionCount(target: pair.target, type: pair.type, total: now)
                let size = Self.encodedSize(count)
                if !counts.isEmpty, used + size > budget { break }
                used += size
                counts.append(count)
            }
            pending.removeFirst()
            heard.removeValue(forKey: pair)
            pendingTypes[pair.target]?.removeAll { $0 == pair.type }  // a target's types: at most 32
            if pendingTypes[pair.target]?.isEmpty == true { pendingTypes.removeValue(forKey: pair.target) }
        }
        if heard.isEmpty { pending.removeAll(keepingCapacity: true) }
        return counts
    }

    /// The bytes `count` takes in a push's `counts`: its object and a comma.
    static func encodedSize(_ count: ReactionCount) -> Int {
        var w = JSONWriter(reserving: count.target.utf8.count + count.type.utf8.count + 48)
        count.encode(into: &w)
        return w.bytes.count + 1
    }

    private mutating func changed(_ pair: Pair, from before: Int) {
        if heard[pair] == nil {
            heard[pair] = before
            pending.append(pair)
            pendingTypes[pair.target, default: []].append(pair.type)
        }
    }

    /// `a + b`, at most `Int.max` (a total never wraps).
    private static func adding(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : sum
    }
}

// MARK: snapshots (ReactionSnapshot.swift)

extension Reactions {
    /// The tallies of `names` (in that order) for a snapshot: totals, the
    /// totals heard of their pending pairs (a pair whose total fell to 0 has
    /// a total of 0), and the users' counts. Targets with neither are left out.
    func snapshot(of names: [String]) -> [ReactionTargetSnapshot] {
        var heardByTarget: [String: [String: Int]] = [:]
        for (pair, before) in heard { heardByTarget[pair.target, default: [:]][pair.type] = before }
        return names.compactMap { name in
            var totals: [String: Int] = [:]
            var users: [String: [UserID: Int]] = [:]
            for (type, tally) in tallies[name] ?? [:] {
                totals[type] = tally.total
                users[type] = tally.users
            }
            let heardTotals = heardByTarget[name] ?? [:]
            for type in heardTotals.keys where totals[type] == nil { totals[type] = 0 }
            if totals.isEmpty { return nil }
            return ReactionTargetSnapshot(target: name, totals: totals, heard: heardTotals, users: users)
        }
    }

    /// Reactions as a snapshot saved them: only `types`, only the targets
    /// `keep` accepts (messages still in the history). A saved total may be
    /// above the sum of the users kept (the snapshot's budget).
    init(restoring saved: [ReactionTargetSnapshot], types: [String], keep: (ReactionTarget) -> Bool) {
        let known = Set(types)
        for target in saved {
            guard let parsed = ReactionTarget(target.target), keep(parsed) else { continue }
            if case .contestant = parsed, contestantCount >= Self.maxContestants { continue }
            var byType: [String: Tally] = [:]
            for (type, total) in target.totals.sorted(by: { $0.key < $1.key }) where known.contains(type) {
                if let before = target.heard[type] { changed(Pair(target: target.target, type: type), from: before) }
                guard total > 0 else { continue }
                var users = target.users[type] ?? [:]
                if userEntries + users.count > Self.maxUserEntries { users = [:] }
                userEntries += users.count
                byType[type] = Tally(total: total, users: users)
            }
            if case .contestant = parsed {
                contestantCount += 1
                contestants.insert(target.target)
            }
            if !byType.isEmpty { tallies[target.target] = byType }
        }
    }
}
