import RoomModel
import RoomWire

/// The session store (PROTOCOL.md section 14): a room session's key-value store.
extension Dispatcher {
    static var sessionStoreMethods: [String: Method] {
        [
            "set-metadata": .joined(Dispatcher.setMetadata),
            "get-metadata": .joined(Dispatcher.getMetadata),
            "listen-metadata-change": .joined(Dispatcher.listenMetadataChange),
        ]
    }

    func setMetadata(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let key = try params.requiredString("key")
        guard let value = params.members["value"] else { throw .invalidParams("value: required (null deletes)") }
        let (entry, deliveries) = try registry.setMetadata(by: .peer(peer), in: peer.room, key: key, value: value)
        fanOut(deliveries)
        var w = JSONWriter()
        w.sessionEntry(entry)
        return w.bytes
    }

    func getMetadata(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let store = call.peer.room.sessionStore
        if let key = try params.string("key") {
            guard RoomRegistry.isValidMetadataKey(key) else {
                throw .invalidParams("key: must match [A-Za-z0-9_.-]{1,64}")
            }
            var w = JSONWriter()
            w.sessionEntry(store.entry(key))
            return w.bytes
        }
        return Self.metadataEntries(store)
    }

    func listenMetadataChange(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        guard let keys = try params.stringArray("keys") else { throw .invalidParams("keys: required") }
        let listened = try registry.listenMetadata(call.peer, keys: keys)
        return Self.encode { w in
            w.key("keys")
            w.strings(listened)
        }
    }

    static func metadataEntries(_ store: SessionStore) -> [UInt8] {
        encode { w in
            w.key("entries")
            w.array { w in for entry in store.liveEntries { w.sessionEntry(entry) } }
        }
    }
}
