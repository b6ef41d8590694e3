import RoomModel
import RoomProtocol

/// REST reactions (PROTOCOL.md section 20): `GET /v2/active-rooms/{room_id}/reactions`.
extension RestAPI {
    /// `{counts:[{target, type, total}]}`: every pair with a total above 0 —
    /// the stream, the contestants by id, the messages oldest first — a page
    /// of at most a quarter of `max_outbound_bytes` of counts (whole
    /// targets). A page cut short adds `more: true` and `last` (the last
    /// target listed), to pass as `?start=` for the next page.
    func getReactions(_ roomID: RoomID, _ request: HTTPRequest) throws(RoomError) -> HTTPResponse {
        let budget = max(1, registry.settings.limits.maxOutboundBytes / 4)
        let start = request.query["start"]
        let page: (counts: [ReactionCount], last: String?)
        do throws(RoomError) {
            page = try registry.reactionsPage(in: try room(roomID), after: start, budget: budget)
        } catch  where error.code == .messageNotFound {
            return cursorGone(error)
        }
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.reactionCounts(page.counts)
                if let last = page.last {
                    w.field("more", true)
                    w.field("last", last)
                }
            }
        )
    }
}
