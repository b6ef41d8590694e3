import RoomModel
import RoomProtocol
import RoomWire

/// REST of polls (1.3, PROTOCOL.md section 32): `GET
/// /v2/active-rooms/{room_id}/polls?state=&offset=&limit=` (the session's
/// polls, newest first, each with its questions, as `poll-list` and
/// `poll-questions-get` together); `POST
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
        case (.get, 0): return try listPolls(roomID, request)
        case (.post, 0): return try createPoll(roomID, try body(request))
        case (.post, 2) where parts[1] == "start": return try startPoll(roomID, parts[0])
        case (.post, 2) where parts[1] == "stop": return try stopPoll(roomID, parts[0])
        case (.get, 2) where parts[1] == "results": return try pollResults(roomID, parts[0])
        default: return nil
        }
    }

    /// `{polls:[PollInfo with questions…], total, more?}`: a page (`offset`
    /// 0, `limit` 1–100, default 50) of the polls of `state` (all without),
    /// newest first, with the quiz answers (the REST API is the operator's);
    /// cut at a quarter of `max_outbound_bytes` (`more`, at least one poll).
    private func listPolls(_ roomID: RoomID, _ request: HTTPRequest) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        let query = Params(.object(request.query.map { JSON.Member($0.key, .string($0.value)) }))
        let polls = registry.listPolls(in: room, state: try query.choice("state", PollState.self))
        let offset = try Self.queryInt(request, "offset", in: 0...Int.max) ?? 0
        let limit = try Self.queryInt(request, "limit", in: 1...100) ?? 50
        let page = polls.dropFirst(min(offset, polls.count)).prefix(limit).map { poll in
            var w = JSONWriter(reserving: 512)
            w.pollInfo(poll, questions: true, withAnswers: true)
            return w.bytes
        }
        let budget = listBudget
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.key("polls")
                let cut = w.leadingArray(Array(page), within: budget, size: \.count) { w, encoded in w.raw(encoded) }
                w.field("total", polls.count)
                if cut || offset + page.count < polls.count { w.field("more", true) }
            }
        )
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
