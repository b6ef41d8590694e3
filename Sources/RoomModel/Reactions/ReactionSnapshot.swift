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
/// were taken back). A total may be above the sum of its users (a snapshot
/// saved before 1.3 kept the users' counts within a budget).
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

extension JSONWriter {
    /// The `reactions` section: every target, whole (1.3: nothing is cut).
    mutating func reactionsSection(_ reactions: [ReactionTargetSnapshot]) {
        beginArray()
        for target in reactions { reactionTarget(target) }
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
