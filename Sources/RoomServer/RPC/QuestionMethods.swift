import RoomModel
import RoomProtocol
import RoomWire

/// Audience Q&A (PROTOCOL.md section 21).
extension Dispatcher {
    static var questionMethods: [String: Method] {
        [
            "question-add": .joined(Dispatcher.questionAdd),
            "question-vote": .joined(Dispatcher.questionVote),
            "question-list": .joined(Dispatcher.questionList),
            "question-update": .joined(Dispatcher.questionUpdate),
            "question-delete": .joined(Dispatcher.questionDelete),
        ]
    }

    func questionAdd(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let text = try params.requiredString("text")
        // Section 30: the app's hook decides first, and may rewrite the text.
        try peer.requireUnrestricted("question-add")
        let limit = registry.settings.limits.maxChatBytes
        guard
            let rewrite = try hook(
                .question,
                room: peer.room.id,
                &call.hook,
                on: call.connection,
                ids: call.connection.logMetadata,
                check: { rewrite in
                    guard let text = rewrite.text else { return nil }
                    if text.isEmpty { return "text: empty" }
                    return text.utf8.count > limit ? "text: over max_chat_bytes" : nil
                },
                data: { w in
                    w.field("room_id", peer.room.id)
                    w.field("session_id", peer.room.sessionID)
                    w.key("peer")
                    w.peerRef(peer)
                    w.field("text", text)
                }
            )
        else { return [] }  // it waits for its hook
        let question = try registry.addQuestion(by: peer, text: rewrite.text ?? text)
        return Self.encodeQuestion(question)
    }

    func questionVote(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let id = try params.requiredString("question_id")
        let vote = try params.choice("vote", Question.Vote.self, required: true)!
        return Self.encodeQuestion(try registry.voteQuestion(by: call.peer, id, vote))
    }

    func questionList(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let state = try params.choice("state", Question.State.self) ?? .open
        let order = try params.choice("order", RoomRegistry.QuestionOrder.self) ?? .top
        let offset = try params.int("offset", in: 0...Int.max) ?? 0
        let limit = try params.int("limit", in: 1...100) ?? 20
        let page = try registry.listQuestions(
            for: call.peer,
            state: state,
            order: order,
            offset: offset,
            limit: limit
        )
        let budget = chatAnswerBudget
        return Self.encode { w in
            w.key("questions")
            let cut = w.questions(page.questions, within: budget)
            w.field("total", page.total)
            if cut { w.field("more", true) }
        }
    }

    func questionUpdate(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let id = try params.requiredString("question_id")
        let state = try params.choice("state", Question.State.self)
        let pinned = try params.bool("pinned")
        return Self.encodeQuestion(try registry.updateQuestion(by: call.peer, id, state: state, pinned: pinned))
    }

    func questionDelete(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        try registry.deleteQuestion(by: call.peer, try params.requiredString("question_id"))
        return Self.encode { _ in }
    }

    static func encodeQuestion(_ question: Question) -> [UInt8] {
        var w = JSONWriter()
        w.question(question)
        return w.bytes
    }
}

extension JSONWriter {
    /// Question `{question_id, text, asked_by, asked_at, up, down, score, state, pinned}`.
    mutating func question(_ question: Question) {
        question.encode(into: &self)
    }

    /// The first of `questions` that fit in `budget` bytes, at least one;
    /// true when some were left out (`question-list`'s `more`).
    mutating func questions(_ questions: [Question], within budget: Int) -> Bool {
        leadingArray(questions, within: budget, size: \.encodedSize) { $0.question($1) }
    }
}
