/// A peer's `info.avatar` and `attributes` (PROTOCOL.md section 27): from the
/// token's claims at join, then `peer-attributes-set` and REST. At most 16
/// string values, keys `[A-Za-z0-9_.-]{1,64}`, values at most 256 bytes;
/// an avatar at most 512 bytes.
public enum PeerAttributes {
    public static let maxCount = 16
    public static let maxKeyBytes = 64
    public static let maxValueBytes = 256
    public static let maxAvatarBytes = 512

    /// `[A-Za-z0-9_.-]{1,64}`.
    public static func isValidKey(_ key: String) -> Bool {
        (1...maxKeyBytes).contains(key.utf8.count)
            && key.utf8.allSatisfy { b in
                (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39)
                    || b == UInt8(ascii: "_") || b == UInt8(ascii: ".") || b == UInt8(ascii: "-")
            }
    }

    /// A key as a call names it: -32602 unless valid.
    public static func checkKey(_ key: String, field: String) throws(RoomError) {
        if !isValidKey(key) {
            throw .invalidParams("\(field): key \"\(key)\" does not match [A-Za-z0-9_.-]{1,64}")
        }
    }

    /// A value: 41300 over 256 bytes.
    public static func checkValue(_ value: String, key: String, field: String) throws(RoomError) {
        let size = value.utf8.count
        if size > maxValueBytes {
            throw RoomError(.tooLarge, "\(field).\(key): \(size) bytes is over the limit of \(maxValueBytes)")
        }
    }

    /// A whole set of attributes (a token's claim): every key and value, and at most 16.
    public static func check(_ values: [String: String], field: String) throws(RoomError) {
        if values.count > maxCount { throw .invalidParams("\(field): at most \(maxCount) keys") }
        for key in values.keys.sorted() {
            try checkKey(key, field: field)
            try checkValue(values[key]!, key: key, field: field)
        }
    }
}

extension RoomRegistry {
    /// `peer-attributes-set` (and REST's `attributes`): `set` gives keys new
    /// values (`nil` deletes), `delete` deletes keys, keys not named keep
    /// their values. One's own peer needs `updateOwnMetadata`, another
    /// peer a moderating role (`moderates`); the REST API needs neither.
    /// A key both set and deleted, a bad key or a 17th key is -32602, a
    /// value over 256 bytes 41300. Pushes `on-peer-update` with `changed:
    /// ["attributes"]` under section 28's rule; nothing changed, no push.
    public func setAttributes(
        of peer: Peer,
        set: [(key: String, value: String?)],
        delete: [String],
        by initiator: Initiator
    ) throws(RoomError) -> [Delivery] {
        if case .peer(let caller) = initiator {
            if caller === peer {
                try requireOwnMetadata(caller, "peer-attributes-set")
            } else {
                try caller.requireUnrestricted("peer-attributes-set")
                if !Self.moderates(caller.role) {
                    throw RoomError(
                        .permissionDenied,
                        "permission denied: another peer's attributes need a moderating role (changeRole or removeOthers)"
                    )
                }
            }
        }
        let attributes = try mergedAttributes(of: peer, set: set, delete: delete)
        if attributes == peer.attributes { return [] }
        peer.attributes = attributes
        return peerUpdate(peer, changed: [.attributes])
    }

    /// `peer`'s attributes after the change, checked (REST checks before it changes anything).
    public func mergedAttributes(
        of peer: Peer,
        set: [(key: String, value: String?)],
        delete: [String]
    ) throws(RoomError) -> [String: String] {
        var attributes = peer.attributes
        var named: Set<String> = []
        for (key, value) in set {
            try PeerAttributes.checkKey(key, field: "set")
            named.insert(key)
            if let value {
                try PeerAttributes.checkValue(value, key: key, field: "set")
                attributes[key] = value
            } else {
                attributes[key] = nil
            }
        }
        for key in delete {
            try PeerAttributes.checkKey(key, field: "delete")
            if named.contains(key) { throw .invalidParams("delete: key \"\(key)\" is also in set") }
            attributes[key] = nil
        }
        if attributes.count > PeerAttributes.maxCount {
            throw .invalidParams("set: a peer has at most \(PeerAttributes.maxCount) attributes")
        }
        return attributes
    }
}
