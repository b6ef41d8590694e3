import RoomProtocol

/// A poll of a `RoomSnapshot` from its JSON (RoomSnapshotDecoding.swift):
/// besides the types, what voting and the encoders index by is checked —
/// one tally per question and one count per option, records of existing
/// questions, voters' records that exist.
extension PollSnapshot {
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
                userID: e.string("user_id"),
                peer: e.object("peer", ActorRef.init)
            )
        }
        var voters: [String: PollVoter] = [:]
        _ = try r.objects("voters") { v throws(RoomSnapshotError) in
            let voter = try PollVoter(
                userID: v.string("user_id"),
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
            createdBy: r.nullable("created_by", r.string),
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
            startedBy: r.nullable("started_by", r.string),
            stoppedBy: r.nullable("stopped_by", r.string),
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
