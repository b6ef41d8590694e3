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
/// of the room's: `message-delete` and the ring's eviction stay O(what they
/// remove). The messages' tallies and changes are kept apart from the taps'
/// (stream, contestants), so `chat-clear` takes them out whole in O(1)
/// (`dropMessages`) and hands them to its caller, which frees them off the
/// service thread. One push carries at most `pushBudget` bytes of encoded
/// counts; the rest waits, in order.
public struct Reactions: Sendable {
    public static let maxContestants = 100
    public static let maxUserEntries = 100_000
    /// The most bytes of encoded counts (each `{"target","type","total"}`
    /// and its comma, JSON escapes included) one `on-reactions` carries; at
    /// least one count. What does not fit waits for the next push.
    public static let pushBudget = 16 * 1024

    /// The messages' tallies and changes: what `chat-clear` drops whole.
    private var messages = Table()
    /// The stream's and the contestants' (taps cannot be taken back; a clear leaves them).
    private var taps = Table()
    /// Contestant targets of the session (taps cannot be taken back, so they only grow).
    public private(set) var contestantCount = 0
    /// The contestant targets tapped (at most `maxContestants`), so that
    /// listing them never scans the messages' targets.
    private var contestants: Set<String> = []
    /// Changes counted so far: a pending pair's `order`, by which
    /// `takeChanged` merges the two tables' changes in the order they came.
    private var changes = 0

    struct Tally: Sendable, Equatable {
        var total = 0
        var users: [UserID: Int] = [:]
    }

    struct Pair: Hashable, Sendable {
        var target: String
        var type: String
    }

    /// A pair whose total changed since the last push: when it first
    /// changed (`changes`), and the total the peers last heard.
    struct Heard: Sendable {
        var order: Int
        var before: Int
    }

    /// The tallies and pending changes of one kind of target (messages, or
    /// taps). Pairs whose total changed since the last push wait in
    /// `pending`, in the order of their first change; a pair is pending
    /// while `heard` holds it with that order. Dropping a message takes its
    /// pairs out of `heard` (through `pendingTypes`) and leaves their places
    /// in `pending`, which the next push skips. So `pending` is at most the
    /// changes since the last push, and a drop never scans it.
    struct Table: Sendable {
        /// target name → type → tally; a tally's total is above 0 (a pair
        /// whose total fell to 0 is removed).
        var tallies: [String: [String: Tally]] = [:]
        /// (target, type, user) entries with a count above 0.
        var userEntries = 0
        var pending = FIFO<(pair: Pair, order: Int)>()
        var heard: [Pair: Heard] = [:]
        /// The types of the pending pairs, by target.
        var pendingTypes: [String: [String]] = [:]

        func total(_ target: String, _ type: String) -> Int { tallies[target]?[type]?.total ?? 0 }

        /// The oldest change still pending, its gone places skipped (and forgotten).
        mutating func firstPending() -> (pair: Pair, order: Int)? {
            while let first = pending.first {
                if heard[first.pair]?.order == first.order { return first }
                pending.removeFirst()
            }
            return nil
        }

        /// The first pending change was pushed (or found unchanged).
        mutating func takeFirst() {
            let pair = pending.removeFirst().pair
            heard.removeValue(forKey: pair)
            pendingTypes[pair.target]?.removeAll { $0 == pair.type }  // a target's types: at most 32
            if pendingTypes[pair.target]?.isEmpty == true { pendingTypes.removeValue(forKey: pair.target) }
            if heard.isEmpty { pending.removeAll(keepingCapacity: true) }
        }

        mutating func changed(_ pair: Pair, from before: Int, order: Int) -> Bool {
            guard heard[pair] == nil else { return false }
            heard[pair] = Heard(order: order, before: before)
            pending.append((pair, order))
            pendingTypes[pair.target, default: []].append(pair.type)
            return true
        }

        /// Message `id`'s tallies and pending changes go. O(its pairs and their users).
        mutating func drop(_ id: String) {
            if let byType = tallies.removeValue(forKey: id) {
                for tally in byType.values { userEntries -= tally.users.count }
            }
            if let types = pendingTypes.removeValue(forKey: id) {
                for type in types { heard.removeValue(forKey: Pair(target: id, type: type)) }
                if heard.isEmpty { pending.removeAll(keepingCapacity: true) }
            }
        }
    }

    /// What `dropMessages` took out: every message's tallies and pending
    /// changes, whole. Opaque; its owner frees it (RoomServer: off the
    /// service thread, a batch at a time: `release(upTo:)`). Empty when
    /// nothing was dropped.
    public struct Dropped: Sendable {
        fileprivate var table = Table()
        /// The tables' entries, moved out so that they go a batch at a time.
        private var targets: [(String, [String: Tally])] = []
        private var pairs: [Pair] = []
        private var types: [[String]] = []
        private var opened = false

        /// Lets go of about `budget` allocations (a message's tallies count
        /// as 8); false once nothing is left. The first call takes the
        /// tables apart: their entries move to arrays (retains, no frees)
        /// and the tables' own storage goes.
        mutating func release(upTo budget: Int) -> Bool {
            if !opened {
                opened = true
                targets = table.tallies.map { ($0.key, $0.value) }
                pairs = Array(table.heard.keys)
                types = Array(table.pendingTypes.values)
                table = Table()
                return true
            }
            var left = budget
            Self.drop(&targets, &left, weight: 8)
            Self.drop(&types, &left, weight: 1)
            Self.drop(&pairs, &left, weight: 1)
            return !(targets.isEmpty && types.isEmpty && pairs.isEmpty)
        }

        static func drop<T>(_ items: inout [T], _ left: inout Int, weight: Int) {
            guard left > 0, !items.isEmpty else { return }
            let n = min(items.count, max(1, left / weight))
            items.removeLast(n)
            left -= n * weight
            if items.isEmpty { items = [] }  // the storage too
        }
    }

    public init() {}

    /// Whether `name` is a tap target (the stream or a contestant), as `ReactionTarget` reads it.
    private static func isTap(_ name: String) -> Bool {
        name == "stream" || name.hasPrefix(ReactionTarget.contestantPrefix)
    }

    private func table(of name: String) -> Table { Self.isTap(name) ? taps : messages }

    /// (target, type, user) entries with a count above 0, all targets together.
    public var userEntries: Int { messages.userEntries + taps.userEntries }

    /// Whether some total changed since the last push.
    public var hasPending: Bool { !messages.heard.isEmpty || !taps.heard.isEmpty }

    /// Whether a change of `target` waits for a push.
    func isPending(_ target: String) -> Bool { table(of: target).pendingTypes[target] != nil }

    public func total(_ target: String, _ type: String) -> Int { table(of: target).total(target, type) }

    /// `user`'s own count on (target, type).
    public func count(of user: UserID, _ target: String, _ type: String) -> Int {
        table(of: target).tallies[target]?[type]?.users[user] ?? 0
    }

    /// The pairs of `target` with a total above 0, in the order of `types`,
    /// with `user`'s own count as `mine` when given.
    public func counts(of target: String, types: [String], mine user: UserID? = nil) -> [ReactionCount] {
        guard let byType = table(of: target).tallies[target] else { return [] }
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
        contestants.filter { taps.tallies[$0] != nil }.sorted()
    }

    // MARK: changes

    /// Adds `count` to `user`'s share of (target, type); on a message a
    /// user's share is at most 1 and a repeat changes nothing.
    /// Returns the total after. 40907 when it would take a new contestant
    /// or a new user entry beyond the bounds.
    mutating func add(_ count: Int, by user: UserID, on target: ReactionTarget, type: String) throws(RoomError) -> Int {
        let name = target.name
        let share = self.count(of: user, name, type)
        let before = total(name, type)
        if !target.isTap, share > 0 { return before }
        if share == 0, userEntries >= Self.maxUserEntries {
            throw RoomError(
                .tooMany,
                "too many reactions: the room keeps at most \(Self.maxUserEntries) (target, type, user) counts"
            )
        }
        if case .contestant = target, taps.tallies[name] == nil {
            if contestantCount >= Self.maxContestants {
                throw RoomError(.tooMany, "target: at most \(Self.maxContestants) contestants per room session")
            }
            contestantCount += 1
            contestants.insert(name)
        }
        let total = Self.adding(before, count)
        if target.isTap {
            Self.set(&taps, name, type, user: user, share: Self.adding(share, count), total: total, new: share == 0)
        } else {
            Self.set(&messages, name, type, user: user, share: Self.adding(share, count), total: total, new: share == 0)
        }
        changed(Pair(target: name, type: type), from: before, tap: target.isTap)
        return total
    }

    /// In place: a tally's users may be many (no copy per tap).
    private static func set(
        _ table: inout Table,
        _ name: String,
        _ type: String,
        user: UserID,
        share: Int,
        total: Int,
        new: Bool
    ) {
        if new { table.userEntries += 1 }
        table.tallies[name, default: [:]][type, default: Tally()].users[user] = share
        table.tallies[name, default: [:]][type, default: Tally()].total = total
    }

    /// Removes `user`'s reaction of `type` from message `target`; nothing
    /// when there is none. Returns the total after.
    mutating func remove(by user: UserID, on target: String, type: String) -> Int {
        let before = messages.total(target, type)
        guard let share = messages.tallies[target]?[type]?.users.removeValue(forKey: user) else { return before }
        messages.userEntries -= 1
        let total = before - share
        if total > 0 {
            messages.tallies[target]?[type]?.total = total
        } else {
            messages.tallies[target]?[type] = nil
            if messages.tallies[target]?.isEmpty == true { messages.tallies[target] = nil }
        }
        changed(Pair(target: target, type: type), from: before, tap: false)
        return total
    }

    /// A message left the history (deleted, dropped from the ring): its
    /// reactions go, and are not pushed. O(its pairs and their users).
    mutating func drop(message id: String) {
        messages.drop(id)
    }

    /// `chat-clear`: every message's reactions and pending changes go, not
    /// pushed; taps stay. O(1): the messages' table is taken out whole and
    /// returned, for the caller to free (off the service thread: freeing
    /// 100,000 counts takes tens of ms).
    mutating func dropMessages() -> Dropped {
        var dropped = Dropped()
        swap(&dropped.table, &messages)
        return dropped
    }

    /// The pairs whose total differs from what the peers last heard, in the
    /// order they first changed, as many as fit in `budget` bytes encoded
    /// (at least one); the peers have heard them after this. The others stay
    /// pending, in their order, for the next push (`hasPending`).
    mutating func takeChanged(budget: Int = pushBudget) -> [ReactionCount] {
        var counts: [ReactionCount] = []
        var used = 2  // []
        while true {
            let message = messages.firstPending()
            let tap = taps.firstPending()
            let fromTaps: Bool
            switch (message, tap) {
            case (nil, nil): return counts
            case (.some(let m), .some(let t)): fromTaps = t.order < m.order
            case (nil, .some): fromTaps = true
            case (.some, nil): fromTaps = false
            }
            let pair = fromTaps ? tap!.pair : message!.pair
            let now = fromTaps ? taps.total(pair.target, pair.type) : messages.total(pair.target, pair.type)
            let before = fromTaps ? taps.heard[pair]?.before : messages.heard[pair]?.before
            if now != before {
                let count = ReactionCount(target: pair.target, type: pair.type, total: now)
                let size = Self.encodedSize(count)
                if !counts.isEmpty, used + size > budget { return counts }
                used += size
                counts.append(count)
            }
            if fromTaps { taps.takeFirst() } else { messages.takeFirst() }
        }
    }

    /// The bytes `count` takes in a push's `counts`: its object and a comma.
    static func encodedSize(_ count: ReactionCount) -> Int {
        var w = JSONWriter(reserving: count.target.utf8.count + count.type.utf8.count + 48)
        count.encode(into: &w)
        return w.bytes.count + 1
    }

    private mutating func changed(_ pair: Pair, from before: Int, tap: Bool) {
        let added =
            tap
            ? taps.changed(pair, from: before, order: changes) : messages.changed(pair, from: before, order: changes)
        if added { changes += 1 }
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
        for table in [taps, messages] {
            for (pair, heard) in table.heard { heardByTarget[pair.target, default: [:]][pair.type] = heard.before }
        }
        return names.compactMap { name in
            var totals: [String: Int] = [:]
            var users: [String: [UserID: Int]] = [:]
            for (type, tally) in table(of: name).tallies[name] ?? [:] {
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
            var entries = 0
            for (type, total) in target.totals.sorted(by: { $0.key < $1.key }) where known.contains(type) {
                if let before = target.heard[type] {
                    changed(Pair(target: target.target, type: type), from: before, tap: parsed.isTap)
                }
                guard total > 0 else { continue }
                var users = target.users[type] ?? [:]
                if userEntries + entries + users.count > Self.maxUserEntries { users = [:] }
                entries += users.count
                byType[type] = Tally(total: total, users: users)
            }
            if case .contestant = parsed {
                contestantCount += 1
                contestants.insert(target.target)
            }
            if parsed.isTap {
                taps.userEntries += entries
                if !byType.isEmpty { taps.tallies[target.target] = byType }
            } else {
                messages.userEntries += entries
                if !byType.isEmpty { messages.tallies[target.target] = byType }
            }
        }
    }
}
