import RoomModel
import RoomProtocol
import RoomWire

/// REST of the audience's questions (1.3, PROTOCOL.md section 32): `GET
/// /v2/active-rooms/{room_id}/questions?state=&order=&offset=&limit=` (as
/// `question-list`, a moderator's view: hidden and shadowed ones too) and
/// `PATCH …/questions/{question_id} {state?, pinned?}` (as
/// `question-update`; answers the Question).
extension RestAPI {
    func questions(
        _ roomID: RoomID,
        _ parts: ArraySlice<String>,
        _ request: HTTPRequest
    ) throws(RoomError)
        -> HTTPResponse?
    {
        switch (request.method, parts.count) {
        case (.get, 0): return try listQuestions(roomID, request)
        case (.patch, 1): return try updateQuestion(roomID, parts.first!, try body(request))
        default: return nil
        }
    }

    /// `{questions:[Question…], total, more?}`.
    private func listQuestions(_ roomID: RoomID, _ request: HTTPRequest) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        let query = Params(.object(request.query.map { JSON.Member($0.key, .string($0.value)) }))
        let page = try registry.listQuestions(
            by: .server,
            in: room,
            state: try query.choice("state", Question.State.self) ?? .open,
            order: try query.choice("order", RoomRegistry.QuestionOrder.self) ?? .top,
            offset: try Self.queryInt(request, "offset", in: 0...Int.max) ?? 0,
            limit: try Self.queryInt(request, "limit", in: 1...100) ?? 20
        )
        let budget = listBudget
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.key("questions")
                let cut = w.questions(page.questions, within: budget)
                w.field("total", page.total)
                if cut { w.field("more", true) }
            }
        )
    }

    private func updateQuestion(_ roomID: RoomID, _ id: String, _ params: Params) throws(RoomError) -> HTTPResponse {
        let question = try registry.updateQuestion(
            by: .server,
            in: try room(roomID),
            id,
            state: try params.choice("state", Question.State.self),
            pinned: try params.bool("pinned")
        )
        logger.info("question updated", metadata: ["room": "\(roomID)", "question": "\(id.prefix(64))", "by": "rest"])
        return .json(200, encoded: Dispatcher.encodeQuestion(question))
    }
}
