import RoomModel
import RoomWire

/// `preview` (PROTOCOL.md section 13) and the session store (section 14).
extension Dispatcher {
    static var audienceMethods: [String: Method] {
        [
            "preview": Method(needsJoin: false, handler: Dispatcher.preview),
            "set-metadata": Method(needsJoin: true, handler: Dispatcher.setMetadata),
            "get-metadata": Method(needsJoin: true, handler: Dispatcher.getMetadata),
            "listen-metadata-change": Method(needsJoin: true, handler: Dispatcher.listenMetadataChange),
        ]
    }

    /// `preview {token, room_id?}`: the checks of `join`, nothing joined or pushed.
    func preview(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        if connection.peer != nil { throw RoomError(.alreadyJoined, "this connection already joined") }
        let token = try params.requiredString("token")
        let roomID = try params.string("room_id")
        let grant = try verifier.verifyApp(token)
        let outcome = try registry.preview(JoinRequest(
            roomID: grant.roomID, requestedRoomID: roomID, userID: grant.userID, roleName: grant.role,
            name: grant.name ?? grant.userID, viewOnly: grant.viewOnly))
        logger.debug("preview", metadata: ["room": "\(grant.roomID)", "user": "\(grant.userID)", "role": "\(grant.role)"])
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

    func setMetadata(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        let peer = connection.peer!
        let key = try params.requiredString("key")
        guard let value = params.members["value"] else { throw .invalidParams("value: required (null deletes)") }
        let (entry, deliveries) = try registry.setMetadata(by: .peer(peer), in: peer.room, key: key, value: value)
        fanOut(deliveries)
        var w = JSONWriter()
        w.sessionEntry(entry)
        return w.bytes
    }

    func getMetadata(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        let store = connection.peer!.room.sessionStore
        if let key = try params.string("key") {
            guard RoomRegistry.isValidMetadataKey(key) else { throw .invalidParams("key: must match [A-Za-z0-9_.-]{1,64}") }
            var w = JSONWriter()
            w.sessionEntry(store.entry(key))
            return w.bytes
        }
        return Self.metadataEntries(store)
    }

    static func metadataEntries(_ store: SessionStore) -> [UInt8] {
        encode { w in
            w.key("entries")
            w.array { w in for entry in store.liveEntries { w.sessionEntry(entry) } }
        }
    }

    func listenMetadataChange(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        guard let keys = try params.stringArray("keys") else { throw .invalidParams("keys: required") }
        let listened = try registry.listenMetadata(connection.peer!, keys: keys)
        return Self.encode { w in
            w.key("keys")
            w.strings(listened)
        }
    }
}
