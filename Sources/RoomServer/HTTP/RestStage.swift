import RoomModel
import RoomProtocol
import RoomWire

/// REST of the call-in queue (1.3, PROTOCOL.md section 26): `GET
/// /v2/active-rooms/{room_id}/stage?status=&offset=&limit=`, `POST
/// …/stage/{request_id}/invite {role?}`, `POST …/stage/{request_id}/decline
/// {reason?}`, `POST …/stage/block {user_id, duration_s?}`, `POST
/// …/stage/unblock {user_id}`. The operator acts as the server PeerRef
/// (`invited_by` null); the invitation's token goes only to the invited
/// peer, in its `on-role-change-request`.
extension RestAPI {
    func stage(_ roomID: RoomID, _ parts: ArraySlice<String>, _ request: HTTPRequest) throws(RoomError) -> HTTPResponse?
    {
        switch (request.method, parts.count) {
        case (.get, 0): return try listStage(roomID, request)
        case (.post, 1) where parts.first == "block": return try blockStage(roomID, try body(request))
        case (.post, 1) where parts.first == "unblock": return try unblockStage(roomID, try body(request))
        case (.post, 2) where parts.last == "invite": return try inviteStage(roomID, parts.first!, try body(request))
        case (.post, 2) where parts.last == "decline": return try declineStage(roomID, parts.first!, try body(request))
        default: return nil
        }
    }

    /// `{requests, total, blocked:[{user_id, until|null}], blocked_total}`;
    /// `more` when the requests were cut at a quarter of
    /// `max_outbound_bytes`. The blocks are a page of their own, by user id:
    /// `blocked_offset` (0) and `blocked_limit` (100, at most 1,000).
    private func listStage(_ roomID: RoomID, _ request: HTTPRequest) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        let query = Params(.object(request.query.map { JSON.Member($0.key, .string($0.value)) }))
        let status = try query.choice("status", StageStatus.self) ?? .waiting
        let offset = try Self.queryInt(request, "offset", in: 0...Int.max) ?? 0
        let limit = try Self.queryInt(request, "limit", in: 1...100) ?? 50
        let page = try registry.listStage(by: .server, in: room, status: status, offset: offset, limit: limit)
        let blocked = registry.stageBlocks(
            in: room,
            offset: try Self.queryInt(request, "blocked_offset", in: 0...Int.max) ?? 0,
            limit: try Self.queryInt(request, "blocked_limit", in: 1...1000) ?? 100
        )
        let budget = max(1, registry.settings.limits.maxOutboundBytes / 4)
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.key("requests")
                let cut = w.stageRequests(page.requests, within: budget)
                w.field("total", page.total)
                if cut { w.field("more", true) }
                w.key("blocked")
                w.array { w in
                    for block in blocked.blocks {
                        w.object { w in
                            w.field("user_id", block.userID)
                            w.optionalField("until", block.until)
                        }
                    }
                }
                w.field("blocked_total", blocked.total)
            }
        )
    }

    private func inviteStage(_ roomID: RoomID, _ requestID: String, _ params: Params) throws(RoomError) -> HTTPResponse
    {
        let (request, _, effects) = try registry.inviteToStage(
            by: .server,
            in: try room(roomID),
            requestID: requestID,
            role: try params.string("role")
        )
        _ = fanOut.apply(effects)
        logger.info("stage invite", metadata: ["room": "\(roomID)", "request": "\(requestID)", "by": "rest"])
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.key("request")
                request.encode(into: &w)
            }
        )
    }

    private func declineStage(_ roomID: RoomID, _ requestID: String, _ params: Params) throws(RoomError) -> HTTPResponse
    {
        fanOut.fanOut(
            try registry.declineStage(
                by: .server,
                in: try room(roomID),
                requestID: requestID,
                reason: try params.string("reason")
            )
        )
        return .json(200, [:])
    }

    private func blockStage(_ roomID: RoomID, _ params: Params) throws(RoomError) -> HTTPResponse {
        fanOut.fanOut(
            try registry.blockFromStage(
                by: .server,
                in: try room(roomID),
                userID: try params.requiredUserID("user_id"),
                durationS: try params.int("duration_s", in: RoomRegistry.banDurationRange)
            )
        )
        return .json(200, [:])
    }

    private func unblockStage(_ roomID: RoomID, _ params: Params) throws(RoomError) -> HTTPResponse {
        try registry.unblockFromStage(by: .server, in: try room(roomID), userID: try params.requiredUserID("user_id"))
        return .json(200, [:])
    }

    /// An integer query argument in `range` (-32602 naming it otherwise).
    static func queryInt(
        _ request: HTTPRequest,
        _ key: String,
        in range: ClosedRange<Int>
    ) throws(RoomError)
        -> Int?
    {
        guard let text = request.query[key] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw .invalidParams(
                "\(key): expected an integer in \(range.lowerBound)...\(range.upperBound), got \"\(text)\""
            )
        }
        return value
    }
}
