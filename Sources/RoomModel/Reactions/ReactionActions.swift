import RoomProtocol

/// Reactions and tap votes (PROTOCOL.md section 20): what peers (and the
/// REST API) do with a room's `Reactions`. Anyone in the room may react,
/// tap and unreact, `view_and_polls_only` peers too. Counts are per user
/// (`user_id`). Nothing is pushed per call: `tickReactions` pushes the
/// changed totals, coalesced, every `settings.reactions.interval_ms`.
extension RoomRegistry {
    /// Taps one `react` may add on the stream or a contestant.
    public static let maxTapsPerCall = 50
    /// Targets one `reactions-get` may ask for.
    public static let maxReactionTargets = 100

    /// `react {target, type, count}`: the total after the call.
    public func react(
        _ peer: Peer,
        target name: String,
        type: String,
        count: Int = 1
    ) throws(RoomError) -> ReactionCount {
        let target = try reactionTarget(name, field: "target")
        try requireReactionType(type)
        if target.isTap {
            guard (1...Self.maxTapsPerCall).contains(count) else {
                throw .invalidParams("count: must be between 1 and \(Self.maxTapsPerCall), got \(count)")
            }
        } else if count != 1 {
            throw .invalidParams("count: a message takes one reaction of each type per user (count 1), got \(count)")
        }
        let room = peer.room
        try requireMessage(target, in: room, field: "target")
        let total = try room.reactions.add(count, by: peer.userID, on: target, type: type)
        if room.reactions.hasPending { reactionSchedule.schedule(room) }
        let result = ReactionCount(target: name, type: type, total: total)
        room.feed?.reaction(result, at: clock.nowMillis())
        return result
    }

    /// `unreact {target, type}`: takes the caller's reaction of `type` off a
    /// message (none there: nothing changes). Taps cannot be taken back.
    public func unreact(_ peer: Peer, target name: String, type: String) throws(RoomError) -> ReactionCount {
        let target = try reactionTarget(name, field: "target")
        if target.isTap {
            throw .invalidParams("target: taps cannot be taken back, unreact takes a message id, got \"\(name)\"")
        }
        try requireReactionType(type)
        let room = peer.room
        try requireMessage(target, in: room, field: "target")
        let total = room.reactions.remove(by: peer.userID, on: name, type: type)
        if room.reactions.hasPending { reactionSchedule.schedule(room) }
        let result = ReactionCount(target: name, type: type, total: total)
        room.feed?.reaction(result, at: clock.nowMillis())
        return result
    }

    /// `reactions-get {targets}`: each target's pairs with a total above 0
    /// (in the order of `settings.reactions.types`), with the caller's own
    /// count; a target asked for twice is listed once. At most `budget`
    /// bytes of encoded counts (with their commas), whole targets, at least
    /// one: `more` when targets with counts were left out (the answer covers
    /// the targets asked up to the last one it lists).
    public func reactionsPage(
        for peer: Peer,
        targets names: [String],
        budget: Int
    ) throws(RoomError) -> (counts: [ReactionCount], more: Bool) {
        if names.count > Self.maxReactionTargets {
            throw .invalidParams("targets: at most \(Self.maxReactionTargets), got \(names.count)")
        }
        var seen: Set<String> = []
        var unique: [String] = []
        for (i, name) in names.enumerated() {
            let target = try reactionTarget(name, field: "targets[\(i)]")
            try requireMessage(target, in: peer.room, field: "targets[\(i)]")
            if seen.insert(name).inserted { unique.append(name) }
        }
        let types = settings.reactions.types
        var page = ReactionPage(budget: budget)
        for name in unique where !page.add(peer.room.reactions.counts(of: name, types: types, mine: peer.userID)) {
            return (page.counts, true)
        }
        return (page.counts, false)
    }

    /// `reactions-get` unbounded (tests, tools).
    public func reactions(for peer: Peer, targets names: [String]) throws(RoomError) -> [ReactionCount] {
        try reactionsPage(for: peer, targets: names, budget: .max).counts
    }

    /// Every pair with a total above 0, unbounded (tests, tools): the stream,
    /// the contestants by id, then the messages oldest first.
    public func allReactions(in room: Room) -> [ReactionCount] {
        (try? reactionsPage(in: room, after: nil, budget: .max).counts) ?? []
    }

    /// REST `GET …/reactions`: every pair with a total above 0 — the
    /// stream, the contestants by id, then the messages oldest first —
    /// from the target after `start` (nil: from the stream), whole targets
    /// within `budget` bytes of encoded counts (at least one target with
    /// counts). `last`: the last target listed when more may follow (pass it
    /// as `start`), nil at the end. A `start` that is a message no longer in
    /// the history is 40405.
    public func reactionsPage(
        in room: Room,
        after start: String?,
        budget: Int
    ) throws(RoomError) -> (counts: [ReactionCount], last: String?) {
        let types = settings.reactions.types
        let reactions = room.reactions
        var page = ReactionPage(budget: budget)
        var after: ReactionTarget? = nil
        if let start {
            after = try reactionTarget(start, field: "start")
            try requireMessage(after!, in: room, field: "start")
        }
        var names: [String] = []
        switch after {
        case nil: names = ["stream"] + reactions.contestantNames
        case .stream: names = reactions.contestantNames
        case .contestant: names = reactions.contestantNames.filter { $0 > start! }
        case .message: break
        }
        for name in names where !page.add(reactions.counts(of: name, types: types)) {
            return (page.counts, page.last)
        }
        var afterMessage: String? = nil
        if case .message(let id) = after { afterMessage = id }
        var full = false
        _ = room.chat.forEach(after: afterMessage) { message in
            if !page.add(reactions.counts(of: message.id, types: types)) {
                full = true
                return false
            }
            return true
        }
        return (page.counts, full ? page.last : nil)
    }

    /// The most bytes of encoded counts one `on-reactions` carries:
    /// `Reactions.pushBudget`, and at most a quarter of `max_outbound_bytes`.
    public var reactionPushBudget: Int {
        max(1, min(Reactions.pushBudget, settings.limits.maxOutboundBytes / 4))
    }

    /// One reactions tick (the server calls it every `interval_ms`): each
    /// room whose totals changed since its last push gets one `on-reactions`
    /// with those totals, to every peer, encoded once. A total that changed
    /// and came back (a react undone) is not pushed; nothing changed, no push.
    /// A push holds at most `reactionPushBudget` bytes of counts, the oldest
    /// changes first; the room stays due with the rest, for the next tick.
    public func tickReactions() -> [Delivery] {
        var deliveries: [Delivery] = []
        let budget = reactionPushBudget
        for id in reactionSchedule.take() {
            guard let room = rooms[id] else { continue }
            let counts = room.reactions.takeChanged(budget: budget)
            if room.reactions.hasPending { reactionSchedule.schedule(room) }  // the rest, next tick
            if !counts.isEmpty { deliveries.append(Delivery(.reactions(counts), to: room.peersInJoinOrder)) }
        }
        return deliveries.nonEmpty
    }

    // MARK: checks

    private func reactionTarget(_ name: String, field: String) throws(RoomError) -> ReactionTarget {
        guard let target = ReactionTarget(name) else {
            throw .invalidParams("\(field): a contestant's id must match [A-Za-z0-9_-]{1,64}, got \"\(name)\"")
        }
        return target
    }

    private func requireMessage(_ target: ReactionTarget, in room: Room, field: String) throws(RoomError) {
        if case .message(let id) = target, room.chat.message(id) == nil {
            throw RoomError(.messageNotFound, "\(field): message \"\(id)\" is not in the room's history")
        }
    }

    private func requireReactionType(_ type: String) throws(RoomError) {
        let types = settings.reactions.types
        guard types.contains(type) else {
            throw .invalidParams("type: unknown reaction \"\(type)\", expected one of \(types.joined(separator: ", "))")
        }
    }
}

/// An answer's counts within a byte budget: whole targets, the first one
/// with counts whatever its size.
struct ReactionPage {
    let budget: Int
    private(set) var counts: [ReactionCount] = []
    /// The target of the last counts taken.
    private(set) var last: String?
    private var used = 2  // []

    init(budget: Int) { self.budget = budget }

    /// Takes one target's counts; false (and takes nothing) when they do not fit.
    mutating func add(_ target: [ReactionCount]) -> Bool {
        guard let first = target.first else { return true }
        let size = target.reduce(0) { $0 + Reactions.encodedSize($1) }
        if !counts.isEmpty, used + size > budget { return false }
        used += size
        counts += target
        last = first.target
        return true
    }
}
