import RoomWire

// Typed calls of polls and quizzes (PROTOCOL.md section 15). Same
// conventions as Methods.swift (nil optionals are left out, `timeout`
// defaults to 5 s, protocol errors are `rpc`).

extension RoomClient {
    // MARK: - Polls and quizzes: writing (pollWrite)

    /// Creates a poll or quiz, or edits one still `created` (`poll-info-set`).
    ///
    /// - Parameters:
    ///   - pollID: Nil makes a new id; an unknown id creates the poll with that id.
    ///   - duration: Seconds after `poll-start` at which the server stops it (0 = never).
    ///   - vote: Roles that may vote (nil = every role).
    ///   - responses: Roles that may read every response (nil = none but `pollWrite`).
    /// - Returns: The poll id.
    /// - Throws: `rpc` with 40300, 40904 (not `created`), 40907 (`max_polls`), 41300 (title), 40402, -32602.
    @discardableResult
    public func setPollInfo(
        pollID: String? = nil,
        title: String,
        type: PollType,
        duration: Int? = nil,
        anonymous: Bool? = nil,
        visibility: Bool? = nil,
        vote: [String]? = nil,
        responses: [String]? = nil,
        timeout: Duration? = nil
    ) async throws -> String {
        let result = try await call(
            "poll-info-set",
            params([
                "poll_id": pollID.map(JSON.string), "title": .string(title), "type": .string(type.rawValue),
                "duration": duration.map { .int($0) }, "anonymous": anonymous.map(JSON.bool),
                "visibility": visibility.map(JSON.bool), "vote": vote.map { .array($0.map(JSON.string)) },
                "responses": responses.map { .array($0.map(JSON.string)) },
            ]),
            timeout: timeout
        )
        return try decode("poll-info-set", result) { try WireReader($0, path: "").string("poll_id") }
    }

    /// Replaces every question of a `created` poll (`poll-questions-set`).
    ///
    /// - Returns: The number of questions.
    /// - Throws: `rpc` with 40300, 40404, 40904, 40907 (> 20 questions or > 10 options), 41300, -32602.
    @discardableResult
    public func setPollQuestions(
        pollID: String,
        _ questions: [PollQuestionDraft],
        timeout: Duration? = nil
    )
        async throws -> Int
    {
        let result = try await call(
            "poll-questions-set",
            ["poll_id": .string(pollID), "questions": .array(questions.map(\.json))],
            timeout: timeout
        )
        return try decode("poll-questions-set", result) { try WireReader($0, path: "").int("total_questions") }
    }

    /// Starts a poll (`poll-start`): every peer that may read or vote gets ``RoomEvent/pollStarted(_:)``.
    ///
    /// - Throws: `rpc` with 40300, 40404, 40904 (not `created`, or no questions).
    public func startPoll(_ pollID: String, timeout: Duration? = nil) async throws {
        _ = try await call("poll-start", ["poll_id": .string(pollID)], timeout: timeout)
    }

    /// Stops a poll (`poll-stop`): the same peers get ``RoomEvent/pollStopped(_:)``.
    ///
    /// - Throws: `rpc` with 40300, 40404, 40904 (not started).
    public func stopPoll(_ pollID: String, timeout: Duration? = nil) async throws {
        _ = try await call("poll-stop", ["poll_id": .string(pollID)], timeout: timeout)
    }

    // MARK: - Voting

    /// Votes (`poll-response`): one answer per user per question.
    ///
    /// Each answer gets its own outcome: a second answer to a question is
    /// 40906 in its entry, a malformed one -32602, the others still count.
    ///
    /// - Throws: `rpc` with 40300 (may not vote), 40404, 40904 (not started), -32602.
    public func respondToPoll(
        pollID: String,
        _ answers: [PollAnswer],
        timeout: Duration? = nil
    ) async throws
        -> [PollAnswerOutcome]
    {
        let result = try await call(
            "poll-response",
            ["poll_id": .string(pollID), "responses": .array(answers.map(\.json))],
            timeout: timeout
        )
        return try decode("poll-response", result) {
            try WireReader($0, path: "").elements("result").map { try PollAnswerOutcome($0) }
        }
    }

    // MARK: - Reading

    /// A poll's info (`poll-info-get`). Throws `rpc` 40404 or 40300.
    public func pollInfo(_ pollID: String, timeout: Duration? = nil) async throws -> PollInfo {
        let result = try await call("poll-info-get", ["poll_id": .string(pollID)], timeout: timeout)
        return try decode("poll-info-get", result) { try PollInfo(WireReader($0, path: "")) }
    }

    /// A page of questions (`poll-questions-get {poll_id, index, count}`); `last` when none follow.
    public func pollQuestions(
        _ pollID: String,
        index: Int? = nil,
        count: Int? = nil,
        timeout: Duration? = nil
    )
        async throws -> (questions: [PollQuestion], last: Bool)
    {
        let result = try await call(
            "poll-questions-get",
            params([
                "poll_id": .string(pollID), "index": index.map { .int($0) }, "count": count.map { .int($0) },
            ]),
            timeout: timeout
        )
        return try decode("poll-questions-get", result) { json in
            let r = WireReader(json, path: "")
            return (try r.elements("questions").map { try PollQuestion($0) }, try r.bool("last"))
        }
    }

    /// The polls this peer may see, newest first (`poll-list {state?}`).
    public func polls(state: PollState? = nil, timeout: Duration? = nil) async throws -> [PollInfo] {
        let result = try await call(
            "poll-list",
            params(["state": state.map { .string($0.rawValue) }]),
            timeout: timeout
        )
        return try decode("poll-list", result) {
            try WireReader($0, path: "").elements("polls").map { try PollInfo($0) }
        }
    }

    /// The counts (`poll-result`): `pollWrite`, or anyone who may read once
    /// `visibility` is true or the poll stopped (else 40300).
    public func pollResult(_ pollID: String, timeout: Duration? = nil) async throws -> PollResult {
        let result = try await call("poll-result", ["poll_id": .string(pollID)], timeout: timeout)
        return try decode("poll-result", result) { try PollResult(WireReader($0, path: "")) }
    }

    /// A page of answers (`poll-responses`): `own` = this user's only (anyone
    /// who may vote); else every answer (`pollWrite` or the poll's `responses` roles).
    public func pollResponses(
        _ pollID: String,
        own: Bool = false,
        index: Int? = nil,
        count: Int? = nil,
        timeout: Duration? = nil
    ) async throws -> (responses: [PollResponse], last: Bool) {
        let result = try await call(
            "poll-responses",
            params([
                "poll_id": .string(pollID), "self": .bool(own), "index": index.map { .int($0) },
                "count": count.map { .int($0) },
            ]),
            timeout: timeout
        )
        return try decode("poll-responses", result) { json in
            let r = WireReader(json, path: "")
            return (try r.elements("responses").map { try PollResponse($0) }, try r.bool("last"))
        }
    }

    /// A quiz's leaderboard (`poll-leaderboard`): `pollWrite`, or anyone once
    /// stopped. Score desc, then total duration asc, then peer id.
    ///
    /// - Throws: `rpc` with -32602 (not a quiz), 40300, 40404.
    public func pollLeaderboard(
        _ pollID: String,
        offset: Int? = nil,
        count: Int? = nil,
        timeout: Duration? = nil
    )
        async throws -> PollLeaderboard
    {
        let result = try await call(
            "poll-leaderboard",
            params([
                "poll_id": .string(pollID), "offset": offset.map { .int($0) }, "count": count.map { .int($0) },
            ]),
            timeout: timeout
        )
        return try decode("poll-leaderboard", result) { try PollLeaderboard(WireReader($0, path: "")) }
    }

    /// The session's leaderboard (`poll-leaderboard` without `poll_id`, 1.2):
    /// every stopped quiz added up per user; anyone in the room may read it.
    public func sessionLeaderboard(
        offset: Int? = nil,
        count: Int? = nil,
        timeout: Duration? = nil
    ) async throws -> PollLeaderboard {
        let result = try await call(
            "poll-leaderboard",
            params(["offset": offset.map { .int($0) }, "count": count.map { .int($0) }]),
            timeout: timeout
        )
        return try decode("poll-leaderboard", result) { try PollLeaderboard(WireReader($0, path: "")) }
    }

    /// Sets or corrects a stopped quiz's answers (`poll-answer-set`, `pollWrite`,
    /// 1.2): scores are computed again and every peer that may read the quiz
    /// gets ``RoomEvent/pollAnswer(pollID:answers:)``. Each answer is a
    /// ``PollAnswer`` with `question` and `option` or `options`.
    ///
    /// - Throws: `rpc` with 40904 (the quiz has not stopped), -32602 (not a
    ///   quiz, a text question, bad options), 40300, 40404.
    public func setPollAnswers(
        pollID: String,
        _ answers: [PollAnswer],
        timeout: Duration? = nil
    ) async throws {
        _ = try await call(
            "poll-answer-set",
            ["poll_id": .string(pollID), "answers": .array(answers.map(\.json))],
            timeout: timeout
        )
    }
}
