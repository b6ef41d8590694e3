import RoomProtocol
import RoomWire

/// A poll with its questions and results: every stored field of `Poll`
/// but the stats bookkeeping (`on-poll-stats` starts over on the new node).
/// The `polls` section of a `RoomSnapshot` is an array of them, in the
/// book's order, next to `poll_serial`:
///
///     {"id", "created_by", "created_at", "sequence", "title", "type", "duration",
///      "anonymous", "visibility", "vote", "responses", "state", "started_by",
///      "stopped_by", "started_at", "stopped_at",
///      "questions":[{"index", "text", "type", "skippable", "weight",
///                    "answer_min_len", "answer_max_len", "options", "answer"}],
///      "tallies":[{"option_counts", "skipped", "total", "correct"}],
///      "voters":[{"user_id", "peer": ActorRef, "answered", "score", "correct_responses",
///                 "total_responses", "duration", "records"}],
///      "records":[{"question", "options", "text", "skipped", "user_id", "peer": ActorRef}],
///      "total_responses"}
///
/// Voters are sorted by user id.
public struct PollSnapshot: Sendable, Equatable {
    var id: String
    var createdBy: PeerID?
    var createdAt: Int64
    var sequence: Int
    var title: String
    var type: PollType
    var duration: Int
    var anonymous: Bool
    var visibility: Bool
    var vote: [String]?
    var responses: [String]?
    var state: PollState
    var startedBy: PeerID?
    var stoppedBy: PeerID?
    var startedAt: Int64?
    var stoppedAt: Int64?
    var questions: [PollQuestion]
    var tallies: [QuestionTally]
    var voters: [UserID: PollVoter]
    var records: [PollRecord]
    var totalResponses: Int
}

extension PollSnapshot {
    init(_ poll: Poll) {
        self.init(
            id: poll.id,
            createdBy: poll.createdBy,
            createdAt: poll.createdAt,
            sequence: poll.sequence,
            title: poll.title,
            type: poll.type,
            duration: poll.duration,
            anonymous: poll.anonymous,
            visibility: poll.visibility,
            vote: poll.vote,
            responses: poll.responses,
            state: poll.state,
            startedBy: poll.startedBy,
            stoppedBy: poll.stoppedBy,
            startedAt: poll.startedAt,
            stoppedAt: poll.stoppedAt,
            questions: poll.questions,
            tallies: poll.tallies,
            voters: poll.voters,
            records: poll.records,
            totalResponses: poll.totalResponses
        )
    }

    /// Polls with unique ids (what restoring relies on).
    static func check(_ polls: [PollSnapshot]) throws(RoomSnapshotError) {
        var pollIDs: Set<String> = []
        for (i, poll) in polls.enumerated() where !pollIDs.insert(poll.id).inserted {
            throw RoomSnapshotError(path: "polls[\(i)].id", problem: "duplicate poll id \"\(poll.id)\"")
        }
    }

    /// A poll from its JSON: besides the types, what voting and the
    /// encoders index by is checked — one tally per question and one count
    /// per option, records of existing questions, voters' records that exist.
    init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        let questions = try r.objects("questions", PollQuestion.init)
        let tallies = try r.objects("tallies") { t throws(RoomSnapshotError) in
            var tally = QuestionTally(options: 0)
            tally.optionCounts = try t.ints("option_counts")
            tally.skipped = try t.int("skipped")
            tally.total = try t.int("total")
            tally.correct = try t.int("correct")
            return tally
        }
        if !tallies.isEmpty, tallies.count != questions.count {
            throw r.failure("tallies", "expected none or one per question (\(questions.count)), got \(tallies.count)")
        }
        for (i, tally) in tallies.enumerated() where tally.optionCounts.count != questions[i].options.count {
            throw RoomSnapshotError(
                path: "\(r.path("tallies"))[\(i)].option_counts",
                problem:
                    "expected one count per option (\(questions[i].options.count)), got \(tally.optionCounts.count)"
            )
        }
        let records = try r.objects("records") { e throws(RoomSnapshotError) in
            let question = try e.int("question")
            if question < 1 || question > questions.count {
                throw e.failure("question", "the poll has no question \(question)")
            }
            return try PollRecord(
                question: question,
                options: e.ints("options"),
                text: e.nullable("text", e.string),
                skipped: e.bool("skipped"),
                userID: e.id("user_id"),
                peer: e.object("peer", ActorRef.init)
            )
        }
        var voters: [UserID: PollVoter] = [:]
        _ = try r.objects("voters") { v throws(RoomSnapshotError) in
            let voter = try PollVoter(
                userID: v.id("user_id"),
                peer: v.object("peer", ActorRef.init),
                answered: v.uint32("answered"),
                score: v.int("score"),
                correctResponses: v.int("correct_responses"),
                totalResponses: v.int("total_responses"),
                duration: v.int64("duration"),
                records: v.ints("records")
            )
            if voters.updateValue(voter, forKey: voter.userID) != nil {
                throw v.failure("user_id", "duplicate voter \"\(voter.userID)\"")
            }
            for (j, index) in voter.records.enumerated() where !records.indices.contains(index) {
                throw RoomSnapshotError(
                    path: "\(v.path("records"))[\(j)]",
                    problem:
                        "no record \(index) (the poll has \(records.count))"
                )
            }
        }
        try self.init(
            id: r.string("id"),
            createdBy: r.nullable("created_by", r.id),
            createdAt: r.int64("created_at"),
            sequence: r.int("sequence"),
            title: r.string("title"),
            type: r.oneOf("type", PollType.self),
            duration: r.int("duration"),
            anonymous: r.bool("anonymous"),
            visibility: r.bool("visibility"),
            vote: r.nullable("vote", r.strings),
            responses: r.nullable("responses", r.strings),
            state: r.oneOf("state", PollState.self),
            startedBy: r.nullable("started_by", r.id),
            stoppedBy: r.nullable("stopped_by", r.id),
            startedAt: r.nullable("started_at", r.int64),
            stoppedAt: r.nullable("stopped_at", r.int64),
            questions: questions,
            tallies: tallies,
            voters: voters,
            records: records,
            totalResponses: r.int("total_responses")
        )
    }
}

extension PollQuestion {
    fileprivate init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        try self.init(
            index: r.int("index"),
            text: r.string("text"),
            type: r.oneOf("type", PollQuestionType.self),
            skippable: r.bool("skippable"),
            weight: r.int("weight"),
            answerMinLen: r.nullable("answer_min_len", r.int),
            answerMaxLen: r.nullable("answer_max_len", r.int),
            options: r.strings("options"),
            answer: r.nullable("answer", r.ints)
        )
    }
}

extension Poll {
    /// The poll `saved` in `room` (not yet added to its book nor timed).
    convenience init(restoring saved: PollSnapshot, room: Room) {
        self.init(
            id: saved.id,
            info: PollInfoInput(
                title: saved.title,
                type: saved.type,
                duration: saved.duration,
                anonymous: saved.anonymous,
                visibility: saved.visibility,
                vote: saved.vote,
                responses: saved.responses
            ),
            createdBy: saved.createdBy,
            createdAt: saved.createdAt,
            sequence: saved.sequence,
            room: room
        )
        state = saved.state
        startedBy = saved.startedBy
        stoppedBy = saved.stoppedBy
        startedAt = saved.startedAt
        stoppedAt = saved.stoppedAt
        questions = saved.questions
        tallies = saved.tallies
        voters = saved.voters
        records = saved.records
        totalResponses = saved.totalResponses
    }
}

extension JSONWriter {
    /// The `polls` section.
    mutating func pollsSection(_ polls: [PollSnapshot]) {
        beginArray()
        for poll in polls { pollSnapshot(poll) }
        endArray()
    }

    private mutating func pollSnapshot(_ poll: PollSnapshot) {
        beginObject()
        field("id", poll.id)
        nullable("created_by", poll.createdBy)
        field("created_at", poll.createdAt)
        field("sequence", poll.sequence)
        field("title", poll.title)
        field("type", poll.type.rawValue)
        field("duration", poll.duration)
        field("anonymous", poll.anonymous)
        field("visibility", poll.visibility)
        nullable("vote", poll.vote)
        nullable("responses", poll.responses)
        field("state", poll.state.rawValue)
        nullable("started_by", poll.startedBy)
        nullable("stopped_by", poll.stoppedBy)
        nullable("started_at", poll.startedAt)
        nullable("stopped_at", poll.stoppedAt)
        key("questions")
        beginArray()
        for question in poll.questions {
            beginObject()
            field("index", question.index)
            field("text", question.text)
            field("type", question.type.rawValue)
            field("skippable", question.skippable)
            field("weight", question.weight)
            nullable("answer_min_len", question.answerMinLen)
            nullable("answer_max_len", question.answerMaxLen)
            key("options")
            strings(question.options)
            key("answer")
            if let answer = question.answer { ints(answer) } else { null() }
            endObject()
        }
        endArray()
        key("tallies")
        beginArray()
        for tally in poll.tallies {
            beginObject()
            key("option_counts")
            ints(tally.optionCounts)
            field("skipped", tally.skipped)
            field("total", tally.total)
            field("correct", tally.correct)
            endObject()
        }
        endArray()
        key("voters")
        beginArray()
        for voter in poll.voters.values.sorted(by: { $0.userID < $1.userID }) {
            beginObject()
            field("user_id", voter.userID)
            key("peer")
            actor(voter.peer)
            key("answered")
            int(voter.answered)
            field("score", voter.score)
            field("correct_responses", voter.correctResponses)
            field("total_responses", voter.totalResponses)
            field("duration", voter.duration)
            key("records")
            ints(voter.records)
            endObject()
        }
        endArray()
        key("records")
        beginArray()
        for record in poll.records {
            beginObject()
            field("question", record.question)
            key("options")
            ints(record.options)
            nullable("text", record.text)
            field("skipped", record.skipped)
            field("user_id", record.userID)
            key("peer")
            actor(record.peer)
            endObject()
        }
        endArray()
        field("total_responses", poll.totalResponses)
        endObject()
    }
}
