import RoomModel
import RoomWire

/// The audit log over REST (1.3, PROTOCOL.md section 32): `GET
/// /v2/active-rooms/{room_id}/audit?after=&limit=` (the live session) and
/// `GET /v2/rooms/{room_id}/audit?session_id=&after=&limit=` (that session,
/// default the current one, else the latest ended one still held: kept
/// with its feed's record, `window_s` after it ended). `{entries, next,
/// session_id}`; `limit` 100 by default, at most 500; cut to a quarter of
/// `max_outbound_bytes` (at least one entry), `next` still the seq to pass
/// as `after`, null at the end.
extension RestAPI {
    static let sessionPrefix = "/v2/rooms/"
    static let auditSuffix = "/audit"

    /// The room of `/v2/rooms/{room_id}/audit`, or nil.
    static func sessionAuditRoom(in path: String) -> RoomID? {
        guard path.hasPrefix(sessionPrefix), path.hasSuffix(auditSuffix),
            path.utf8.count > sessionPrefix.utf8.count + auditSuffix.utf8.count
        else { return nil }
        let room = path.dropFirst(sessionPrefix.count).dropLast(auditSuffix.count)
        return room.contains("/") ? nil : RoomID(String(room))
    }

    func activeAudit(_ roomID: RoomID, _ request: HTTPRequest) throws(RoomError) -> HTTPResponse {
        let live = try room(roomID)
        return try audit(roomID, session: live.sessionID, request)
    }

    func sessionAudit(_ roomID: RoomID, _ request: HTTPRequest) throws(RoomError) -> HTTPResponse {
        let session = request.query["session_id"]
        if let session, session.isEmpty || session.utf8.count > 128 {
            throw .invalidParams("session_id: 1 to 128 bytes")
        }
        return try audit(roomID, session: session, request)
    }

    private func audit(_ roomID: RoomID, session: String?, _ request: HTTPRequest) throws(RoomError) -> HTTPResponse {
        let after = try Self.auditQueryInt(request, "after", in: 0...Int.max)
        let limit =
            try Self.auditQueryInt(request, "limit", in: 1...Dispatcher.maxAuditLimit) ?? Dispatcher.defaultAuditLimit
        let budget = max(1, registry.settings.limits.maxOutboundBytes / 4)
        switch registry.auditPage(roomID, session: session, after: after, limit: limit, maxBytes: budget) {
        case .noSession:
            let which = session.map { "session \"\($0.prefix(128))\" of room" } ?? "no session of room"
            throw RoomError(.roomNotFound, "\(which) \"\(roomID)\" is held")
        case .page(let sessionID, let page):
            return .json(
                200,
                encoded: Dispatcher.encode { w in
                    w.auditPage(page)
                    w.field("session_id", sessionID)
                }
            )
        }
    }

    /// A query argument as an integer in `range` (nil when absent), else -32602 naming it.
    private static func auditQueryInt(
        _ request: HTTPRequest,
        _ key: String,
        in range: ClosedRange<Int>
    )
        throws(RoomError) -> Int?
    {
        guard let text = request.query[key] else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw .invalidParams(
                "\(key): expected an integer in \(range.lowerBound)...\(range.upperBound), got \"\(text.prefix(32))\""
            )
        }
        return value
    }
}
