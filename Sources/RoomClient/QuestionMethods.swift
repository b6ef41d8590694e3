import RoomWire

// Audience Q&A (PROTOCOL.md section 21). Same conventions as Methods.swift
// and Models.swift.

extension RoomClient {
    // MARK: - Audience Q&A

    /// Asks a question (`question-add {text}`); every peer hears of it in the
    /// next ``RoomEvent/questions(changed:removed:)``.
    ///
    /// - Throws: `rpc` with 40300 (`view_and_polls_only`), 41300 (over
    ///   `max_chat_bytes`), 40907 (`max_questions` asked), -32602.
    public func askQuestion(_ text: String, timeout: Duration? = nil) async throws -> AudienceQuestion {
        let result = try await call("question-add", ["text": .string(text)], timeout: timeout)
        return try decode("question-add", result) { try AudienceQuestion(WireReader($0, path: "")) }
    }

    /// Votes on a question (`question-vote`): one vote per user, replaced by
    /// a later one; `.none` withdraws it.
    ///
    /// - Throws: `rpc` with 40406 (unknown, or hidden without `moderateChat`).
    public func voteQuestion(
        _ questionID: String,
        _ vote: AudienceQuestion.Vote,
        timeout: Duration? = nil
    ) async throws -> AudienceQuestion {
        let result = try await call(
            "question-vote",
            ["question_id": .string(questionID), "vote": .string(vote.rawValue)],
            timeout: timeout
        )
        return try decode("question-vote", result) { try AudienceQuestion(WireReader($0, path: "")) }
    }

    /// A page of questions (`question-list`): `.top` (pinned, then score,
    /// then oldest) or `.new`; `hidden` needs `moderateChat`.
    public func questions(
        state: AudienceQuestion.State = .open,
        order: AudienceQuestion.Order = .top,
        offset: Int = 0,
        limit: Int = 20,
        timeout: Duration? = nil
    ) async throws -> (questions: [AudienceQuestion], total: Int) {
        let result = try await call(
            "question-list",
            [
                "state": .string(state.rawValue), "order": .string(order.rawValue), "offset": .int(offset),
                "limit": .int(limit),
            ],
            timeout: timeout
        )
        return try decode("question-list", result) {
            let r = WireReader($0, path: "")
            return (try r.elements("questions").map { try AudienceQuestion($0) }, try r.int("total"))
        }
    }

    /// Answers, hides, reopens or pins a question (`question-update`,
    /// `moderateChat`; the asker may only hide its own).
    public func updateQuestion(
        _ questionID: String,
        state: AudienceQuestion.State? = nil,
        pinned: Bool? = nil,
        timeout: Duration? = nil
    ) async throws -> AudienceQuestion {
        let result = try await call(
            "question-update",
            params([
                "question_id": .string(questionID), "state": state.map { .string($0.rawValue) },
                "pinned": pinned.map { .bool($0) },
            ]),
            timeout: timeout
        )
        return try decode("question-update", result) { try AudienceQuestion(WireReader($0, path: "")) }
    }

    /// Deletes a question (`question-delete`): the asker, or `moderateChat`.
    public func deleteQuestion(_ questionID: String, timeout: Duration? = nil) async throws {
        _ = try await call("question-delete", ["question_id": .string(questionID)], timeout: timeout)
    }
}

/// An audience question: `{question_id, text, asked_by, asked_at, up, down, score, state, pinned}`.
public struct AudienceQuestion: Sendable, Equatable {
    public typealias State = QuestionState
    public typealias Vote = QuestionVote
    public typealias Order = QuestionOrder

    public var questionID: String
    public var text: String
    public var askedBy: PeerRef
    /// ms since the epoch.
    public var askedAt: Int64
    public var up: Int
    public var down: Int
    /// `up - down`.
    public var score: Int
    public var state: State
    public var pinned: Bool

    init(_ r: WireReader) throws {
        try r.requireObject()
        questionID = try r.string("question_id")
        text = try r.string("text")
        askedBy = try PeerRef(r.child("asked_by"))
        askedAt = try r.int64("asked_at")
        up = try r.int("up")
        down = try r.int("down")
        score = try r.int("score")
        state = try r.choice("state")
        pinned = try r.bool("pinned")
    }
}
