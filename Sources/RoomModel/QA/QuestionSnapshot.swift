import RoomWire

// The `qa` section of a `RoomSnapshot` (format 2, 1.2 section 21):
//
//     {"added", "questions":[{"id", "text", "asked_by": ActorRef, "asked_at",
//       "up", "down", "state", "pinned"}], "votes":[{"id", "up":[user_id], "down":[user_id]}]}
//
// The questions keep the newest within `qaBudgetBytes`, and who voted how
// within `votesBudgetBytes` (the counts are always kept; a user whose vote
// was left out may vote again).

extension RoomSnapshot {
    /// The most JSON the questions take; older questions are left out.
    public static let qaBudgetBytes = 128 * 1024
    /// The most JSON the votes (who voted how) take; the counts are kept anyway.
    public static let votesBudgetBytes = 32 * 1024
}

extension JSONWriter {
    /// The `qa` section.
    mutating func qaSection(_ questions: [Question], added: Int) {
        // The newest within the budgets, written oldest first.
        let encoded = JSONWriter.newest(questions, within: RoomSnapshot.qaBudgetBytes) { w, question in
            w.beginObject()
            w.field("id", question.id)
            w.field("text", question.text)
            w.key("asked_by")
            w.actor(question.askedBy)
            w.field("asked_at", question.askedAt)
            w.field("up", question.up)
            w.field("down", question.down)
            w.field("state", question.state.rawValue)
            w.field("pinned", question.pinned)
            w.endObject()
        }
        let voted = questions.suffix(encoded.count).filter { !$0.votes.isEmpty }
        let votes = JSONWriter.newest(voted, within: RoomSnapshot.votesBudgetBytes) { w, question in
            w.beginObject()
            w.field("id", question.id)
            w.key("up")
            w.strings(question.votes.filter { $0.value }.keys.sorted())
            w.key("down")
            w.strings(question.votes.filter { !$0.value }.keys.sorted())
            w.endObject()
        }
        beginObject()
        field("added", added)
        key("questions")
        beginArray()
        for bytes in encoded { raw(bytes) }
        endArray()
        key("votes")
        beginArray()
        for bytes in votes { raw(bytes) }
        endArray()
        endObject()
    }
}

/// The `qa` section read back.
struct QASnapshot {
    var questions: [Question] = []
    var added = 0

    init() {}

    init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        added = try r.int("added")
        var byID: [String: Int] = [:]
        var read: [Question] = []
        _ = try r.objects("questions") { q throws(RoomSnapshotError) in
            let id = try q.string("id")
            if byID[id] != nil { throw q.failure("id", "duplicate question id \"\(id)\"") }
            byID[id] = read.count
            read.append(
                Question(
                    id: id,
                    text: try q.string("text"),
                    askedBy: try q.object("asked_by", ActorRef.init),
                    askedAt: try q.int64("asked_at"),
                    state: try q.oneOf("state", Question.State.self),
                    pinned: try q.bool("pinned"),
                    up: try q.int("up"),
                    down: try q.int("down"),
                    votes: [:]
                )
            )
        }
        _ = try r.objects("votes") { v throws(RoomSnapshotError) in
            let id = try v.string("id")
            guard let index = byID[id] else { throw v.failure("id", "no question \"\(id)\"") }
            var votes: [UserID: Bool] = [:]
            for user in try v.strings("up") { votes[UserID(user)] = true }
            for user in try v.strings("down") { votes[UserID(user)] = false }
            let q = read[index]
            read[index] = Question(
                id: q.id,
                text: q.text,
                askedBy: q.askedBy,
                askedAt: q.askedAt,
                state: q.state,
                pinned: q.pinned,
                up: q.up,
                down: q.down,
                votes: votes
            )
        }
        questions = read
    }
}
