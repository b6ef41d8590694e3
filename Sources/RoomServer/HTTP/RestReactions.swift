import RoomModel

/// REST reactions (PROTOCOL.md section 20): `GET /v2/active-rooms/{room_id}/reactions`.
extension RestAPI {
    /// `{counts:[{target, type, total}]}`: every pair with a total above 0 —
    /// the stream, the contestants by id, the messages oldest first.
    func getReactions(_ roomID: RoomID) throws(RoomError) -> HTTPResponse {
        let counts = registry.allReactions(in: try room(roomID))
        return .json(200, encoded: Dispatcher.encode { w in w.reactionCounts(counts) })
    }
}
