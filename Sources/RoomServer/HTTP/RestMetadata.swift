import RoomModel
import RoomWire

/// REST session store (PROTOCOL.md section 14): `GET` / `POST /v2/active-rooms/{room_id}/metadata`.
extension RestAPI {
    func getMetadata(_ roomID: RoomID) throws(RoomError) -> HTTPResponse {
        .json(200, encoded: Dispatcher.metadataEntries(try room(roomID).sessionStore))
    }

    /// `{key, value}` → Entry; `updated_by` is the server PeerRef.
    func setMetadata(_ roomID: RoomID, _ params: Params) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        let key = try params.requiredString("key")
        guard let value = params.members["value"] else { throw .invalidParams("value: required (null deletes)") }
        let (entry, deliveries) = try registry.setMetadata(by: .server, in: room, key: key, value: value)
        fanOut.fanOut(deliveries)
        logger.info("session store set", metadata: ["room": "\(roomID)", "key": "\(key)", "by": "rest"])
        var w = JSONWriter()
        w.sessionEntry(entry)
        return .json(200, encoded: w.bytes)
    }
}
