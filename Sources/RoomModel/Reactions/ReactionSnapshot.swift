import RoomWire

/// One reaction target of a snapshot's `reactions` section (1.2, section
/// 20): its totals by type, the totals its peers last heard for the types
/// changed since the last `on-reactions` (pushed again by the node that
/// takes the room over), and the users' own counts by type. In JSON:
///
///     {"target", "totals":{type: total}, "heard":{type: total},
///      "users":{type: {user_id: count}}}
///
/// A total is above 0, or 0 for a pair still to be pushed (its reactions
/// were taken back). A total may be above the sum of its users: the users'
/// counts are what the snapshot's budget kept.
public struct ReactionTargetSnapshot: Sendable, Equatable {
    public var target: String
    public var totals: [String: Int]
    public var heard: [String: Int]
    public var users: [String: [UserID: Int]]

    public init(target: String, totals: [String: Int], heard: [String: Int], users: [String: [UserID: Int]]) {
        self.target = target
        self.totals = totals
        self.heard = heard
        self.users = users
    }
}

extension RoomSnapshot {
    /// The most JSON the reactions take in a snapshot. Next to the chat's
    /// 512 KiB this leaves 232 KiB of the bus's 1000-KiB value for the rest.
    public static let reactionsBudgetBytes = 256 * 1024

    /// What of `saved` (stream, contestants, then messages newest first) a
    /// snapshot keeps within `budget` bytes of JSON: first every total —
    /// those of the stream and the contestants always (their bounds keep
    /// them under 200 KiB), those of the messages newest first while they
    /// fit, and only of messages `keep` accepts (those the snapshot's chat
    /// keeps) — then the totals heard of pairs still to be pushed, then the
    /// users' counts, in the same order, while they fit.
    static func reactionsWithin(
        _ budget: Int,
        _ saved: [ReactionTargetSnapshot],
        keep: (String) -> Bool
    ) -> [ReactionTargetSnapshot] {
        var used = 2  // []
        var kept: [ReactionTargetSnapshot] = []
        for target in saved where keep(target.target) {
            var skeleton = target
            skeleton.heard = [:]
            skeleton.users = [:]
            var w = JSONWriter()
            w.reactionTarget(skeleton)
            let size = w.bytes.count + 1
            let isTap = ReactionTarget(target.target)?.isTap ?? false
            if !isTap, used + size > budget { break }
            used += size
            kept.append(skeleton)
        }
        var byTarget: [String: ReactionTargetSnapshot] = [:]
        for target in saved { byTarget[target.target] = target }
        for i in kept.indices {
            let heard = byTarget[kept[i].target]?.heard ?? [:]
            for (type, total) in heard.sorted(by: { $0.key < $1.key }) {
                let size = encodedLength(type) + String(total).utf8.count + 2
                if used + size > budget { break }
                used += size
                kept[i].heard[type] = total
            }
        }
        for i in kept.indices {
            let users = byTarget[kept[i].target]?.users ?? [:]
            for (type, counts) in users.sorted(by: { $0.key < $1.key }) {
                var fitted: [UserID: Int] = [:]
                var size = encodedLength(type) + 4  // "type":{},
                for (user, count) in counts.sorted(by: { $0.key < $1.key }) {
                    let entry = encodedLength(user.rawValue) + String(count).utf8.count + 2
                    if used + size + entry > budget { break }
                    size += entry
                    fitted[user] = count
                }
                if fitted.isEmpty { continue }
                used += size
                kept[i].users[type] = fitted
            }
        }
        return kept
    }

    private static func encodedLength(_ s: String) -> Int {
        var w = JSONWriter(reserving: s.utf8.count + 8)
        w.string(s)
        return w.bytes.count
    }
}

extension JSONWriter {
    /// The `reactions` section: the targets kept within
    /// `reactionsBudgetBytes`, those of messages only if the `chat` section
    /// kept them (`keptMessages`).
    mutating func reactionsSection(_ reactions: [ReactionTargetSnapshot], keptMessages: Set<String>) {
        beginArray()
        let keep = { (target: String) in ReactionTarget(target)?.isTap == true || keptMessages.contains(target) }
        for target in RoomSnapshot.reactionsWithin(RoomSnapshot.reactionsBudgetBytes, reactions, keep: keep) {
            reactionTarget(target)
        }
        endArray()
    }

    /// `{"target", "totals", "heard", "users"}`, keys sorted (the same state gives the same bytes).
    mutating func reactionTarget(_ target: ReactionTargetSnapshot) {
        beginObject()
        field("target", target.target)
        key("totals")
        counts(target.totals)
        key("heard")
        counts(target.heard)
        key("users")
        beginObject()
        for (type, users) in target.users.sorted(by: { $0.key < $1.key }) {
            key(type)
            counts(users)
        }
        endObject()
        endObject()
    }

    private mutating func counts(_ counts: [String: Int]) {
        beginObject()
        for (name, count) in counts.sorted(by: { $0.key < $1.key }) { field(name, count) }
        endObject()
    }

    /// Users' counts, in user id order.
    private mutating func counts(_ counts: [UserID: Int]) {
        beginObject()
        for (user, count) in counts.sorted(by: { $0.key < $1.key }) { field(user.rawValue, count) }
        endObject()
    }
}

extension ReactionTargetSnapshot {
    /// Targets with unique names (what restoring relies on).
    static func check(_ reactions: [ReactionTargetSnapshot]) throws(RoomSnapshotError) {
        var targets: Set<String> = []
        for (i, target) in reactions.enumerated() where !targets.insert(target.target).inserted {
            throw RoomSnapshotError(
                path: "reactions[\(i)].target",
                problem: "duplicate target \"\(target.target)\""
            )
        }
    }

    init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        target = try r.string("target")
        if ReactionTarget(target) == nil {
            throw r.failure("target", "a contestant's id must match [A-Za-z0-9_-]{1,64}, got \"\(target)\"")
        }
        totals = try Self.counts(r, "totals", minimum: 0)
        heard = try Self.counts(r, "heard", minimum: 0)
        users = [:]
        let value = try r.value("users")
        guard case .object(let members) = value else {
            throw r.failure("users", "expected object, got \(value.typeName)")
        }
        for member in members {
            if users[member.key] != nil { throw r.failure("users.\(member.key)", "duplicate key") }
            let counts = try Self.counts(member.value, at: r.path("users.\(member.key)"), minimum: 1)
            users[member.key] = Dictionary(uniqueKeysWithValues: counts.map { (UserID($0.key), $0.value) })
        }
        for (type, total) in totals where total == 0 && heard[type] == nil {
            throw r.failure("totals.\(type)", "a total of 0 is saved only for a pair still to be pushed")
        }
        for type in heard.keys.sorted() where totals[type] == nil {
            throw r.failure("heard.\(type)", "no total of this type")
        }
        for type in users.keys.sorted() where totals[type] == nil {
            throw r.failure("users.\(type)", "no total of this type")
        }
    }

    private static func counts(
        _ r: SnapshotReader,
        _ key: String,
        minimum: Int
    ) throws(RoomSnapshotError) -> [String: Int] {
        try counts(r.value(key), at: r.path(key), minimum: minimum)
    }

    /// An object of integers ≥ `minimum` by name.
    private static func counts(_ value: JSON, at path: String, minimum: Int) throws(RoomSnapshotError) -> [String: Int]
    {
        guard case .object(let members) = value else {
            throw RoomSnapshotError(path: path, problem: "expected object, got \(value.typeName)")
        }
        var counts: [String: Int] = [:]
        for member in members {
            let at = "\(path).\(member.key)"
            if counts[member.key] != nil { throw RoomSnapshotError(path: at, problem: "duplicate key") }
            let n = try snapshotInteger(member.value, Int.self, at: at)
            if n < minimum { throw RoomSnapshotError(path: at, problem: "expected at least \(minimum), got \(n)") }
            counts[member.key] = n
        }
        return counts
    }
}
