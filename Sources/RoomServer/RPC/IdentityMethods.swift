import RoomModel
import RoomWire

/// `peer-attributes-set` (PROTOCOL.md section 27).
extension Dispatcher {
    static var identityMethods: [String: Method] {
        ["peer-attributes-set": .joined(Dispatcher.peerAttributesSet)]
    }

    /// `{peer_id?, set?, delete?}` → `{peer}`: the caller's peer, or (a
    /// moderating role) another one of its room.
    func peerAttributesSet(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let caller = call.peer
        var target = caller
        if let id = try params.peerID("peer_id"), id != caller.id {
            guard let other = caller.room.peer(id) else {
                throw RoomError(.peerNotFound, "peer_id: peer \"\(id)\" is not in the room")
            }
            target = other
        }
        let set = try params.attributeSet("set")
        let delete = try params.stringArray("delete") ?? []
        fanOut(try registry.setAttributes(of: target, set: set, delete: delete, by: .peer(caller)))
        return Self.encode { w in
            w.key("peer")
            w.peer(target, withTracks: true)
        }
    }
}

extension Params {
    /// `{key: string or null}` at `key` (`peer-attributes-set`'s `set`,
    /// REST's `attributes`); a value that is neither is -32602 naming it.
    func attributeSet(_ key: String) throws(RoomError) -> [(key: String, value: String?)] {
        guard let object = value(key) else { return [] }
        guard case .object(let entries) = object else {
            throw .invalidParams("\(key): expected an object, got \(object.typeName)")
        }
        var set: [(key: String, value: String?)] = []
        for entry in entries {
            switch entry.value {
            case .string(let text): set.append((entry.key, text))
            case .null: set.append((entry.key, nil))
            default:
                throw .invalidParams("\(key).\(entry.key): expected a string or null, got \(entry.value.typeName)")
            }
        }
        return set
    }
}
