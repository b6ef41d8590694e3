import RoomModel
import RoomWire

/// `preview` (PROTOCOL.md section 13): the checks of `join`, nothing joined or pushed.
extension Dispatcher {
    static var previewMethods: [String: Method] {
        [
            "preview": .open(Dispatcher.preview)
        ]
    }

    /// `preview {token, room_id?}`: the checks of `join`, nothing joined or pushed.
    func preview(_ params: Params, _ call: inout Call) throws(RoomError) -> [UInt8] {
        // Here, not in the dispatcher: after its check of the params object (-32602 first).
        if call.connection.peer != nil { throw RoomError(.alreadyJoined, "this connection already joined") }
        let token = try params.requiredString("token")
        let roomID = try params.string("room_id").map(RoomID.init)
        let grant = try verifier.verifyApp(token)
        let outcome = try registry.preview(
            JoinRequest(
                roomID: grant.roomID,
                requestedRoomID: roomID,
                userID: grant.userID,
                roleName: grant.role,
                name: grant.name ?? grant.userID.rawValue,
                viewOnly: grant.viewOnly
            )
        )
        logger.debug(
            "preview",
            metadata: ["room": "\(grant.roomID)", "user": "\(grant.userID)", "role": "\(grant.role)"]
        )
        return Self.encode { w in
            w.key("room")
            if let room = outcome.room {
                w.room(room, locked: registry.lockedRoomIDs.contains(room.id))
            } else {
                w.null()
            }
            w.key("policy")
            w.raw(policies.encoded[outcome.role.name]!)
            w.field("peer_count", outcome.room?.peerCount ?? 0)
        }
    }
}
