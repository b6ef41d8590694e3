import RoomWire

// The `qa` section of a `RoomSnapshot` (format 2, 1.2 section 21):
//
//     {"added", "questions":[{"id", "text", "asked_by": ActorRef, "asked_at",
//       "up", "down", "state", "pinned"}], "votes":[{"id", "up":[user_id], "down":[user_id]}]}
//
// Every question and every vote is saved (1.3: nothing is cut from a
// room's saved state; `max_questions` bounds them).

extension JSONWriter {
    /// The `qa` section.
    mutating func qaSection(_ questions: [Question], added: Int) {
        beginObject()
        field("added", added)
        key("questions")
        beginArray()
        for question in questions {
            beginObject()
            field("id", question.id)
            field("text", question.text)
            key("asked_by")
            actor(question.askedBy)
            field("asked_at", question.askedAt)
            field("up", question.up)
            field("down", question.down)
            field("state", question.state.rawValue)
            field("pinned", question.pinned)
            if question.shadowed { field("shadowed", true) }  // absent: false (1.3)
            endObject()
        }
        endArray()
        key("votes")
        beginArray()
        for question in questions where !question.votes.isEmpty {
            beginObject()
            field("id", question.id)
            key("up")
            strings(question.votes.filter { $0.value }.keys.sorted())
            key("down")
            strings(question.votes.filter { !$0.value }.keys.sorted())
            endObject()
        }
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
            if q.has("shadowed") { read[read.count - 1].shadowed = try q.bool("shadowed") }
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
