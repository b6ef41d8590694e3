import RoomModel
import RoomProtocol
import RoomWire

/// REST of polls (1.3, PROTOCOL.md section 32): `POST
/// /v2/active-rooms/{room_id}/polls` (`poll-info-set`'s params and
/// `poll-questions-set`'s `questions` in one body; a new poll, `created_by`
/// null) → `{poll_id}`; `POST …/polls/{poll_id}/start|stop` (as `poll-start`
/// and `poll-stop`: the same pushes, `started_by`/`stopped_by` null, the
/// webhook's `by` the server PeerRef); `GET …/polls/{poll_id}/results` (as
/// `poll-result`, with the quiz's correct answers).
extension RestAPI {
    func polls(
        _ roomID: RoomID,
        _ parts: ArraySlice<String>,
        _ request: HTTPRequest
    ) throws(RoomError)
        -> HTTPResponse?
    {
        let parts = Array(parts)
        switch (request.method, parts.count) {
        case (.post, 0): return try createPoll(roomID, try body(request))
        case (.post, 2) where parts[1] == "start": return try startPoll(roomID, parts[0])
        case (.post, 2) where parts[1] == "stop": return try stopPoll(roomID, parts[0])
        case (.get, 2) where parts[1] == "results": return try pollResults(roomID, parts[0])
        default: return nil
        }
    }

    private func createPoll(_ roomID: RoomID, _ params: Params) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        let info = try Dispatcher.pollInfoInput(params)
        let questions = try Dispatcher.questionInputs(params, required: false)
        let poll = try registry.preparePoll(info, questions: questions, in: room)
        logger.info("poll created", metadata: ["room": "\(roomID)", "poll": "\(poll.id)", "by": "rest"])
        return .json(200, encoded: Dispatcher.encode { w in w.field("poll_id", poll.id) })
    }

    private func startPoll(_ roomID: RoomID, _ pollID: String) throws(RoomError) -> HTTPResponse {
        let (poll, deliveries) = try registry.startPoll(by: .server, in: try room(roomID), pollID: pollID)
        fanOut.fanOut(deliveries)
        logger.info("poll started", metadata: ["room": "\(roomID)", "poll": "\(poll.id)", "by": "rest"])
        return .json(200, encoded: Self.pollAnswer(poll))
    }

    private func stopPoll(_ roomID: RoomID, _ pollID: String) throws(RoomError) -> HTTPResponse {
        let (poll, deliveries) = try registry.stopPoll(by: .server, in: try room(roomID), pollID: pollID)
        fanOut.fanOut(deliveries)
        logger.info("poll stopped", metadata: ["room": "\(roomID)", "poll": "\(poll.id)", "by": "rest"])
        return .json(200, encoded: Self.pollAnswer(poll))
    }

    /// `{poll_id, duration}`, as `poll-start` and `poll-stop` answer.
    private static func pollAnswer(_ poll: Poll) -> [UInt8] {
        Dispatcher.encode { w in
            w.field("poll_id", poll.id)
            w.field("duration", poll.duration)
        }
    }

    private func pollResults(_ roomID: RoomID, _ pollID: String) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        guard let poll = room.polls[pollID] else { throw RoomError(.pollNotFound, "poll_id: no poll \"\(pollID)\"") }
        let maxUser = poll.eligibleVoterCount(in: room, roleNames: registry.template.roleNames)
        return .json(
            200,
            encoded: Dispatcher.encode { w in w.pollResultFields(poll, maxUser: maxUser, withCorrect: true) }
        )
    }
}
