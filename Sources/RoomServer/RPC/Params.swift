import RoomModel
import RoomTokens
import RoomWire

/// Typed access to a call's `params` object. A member given as `null` counts
/// as absent; a wrong type is -32602 with a message naming the field.
struct Params {
    let members: JSON
    let path: String

    init(_ members: JSON, path: String = "") {
        self.members = members
        self.path = path
    }

    private func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func value(_ key: String) -> JSON? {
        guard let value = members[key], !value.isNull else { return nil }
        return value
    }

    func has(_ key: String) -> Bool { value(key) != nil }

    private func typeError(_ key: String, _ expected: String, _ got: JSON) -> RoomError {
        .invalidParams("\(name(key)): expected \(expected), got \(got.typeName)")
    }

    func string(_ key: String) throws(RoomError) -> String? {
        guard let value = value(key) else { return nil }
        guard let string = value.stringValue else { throw typeError(key, "a string", value) }
        return string
    }

    func requiredString(_ key: String) throws(RoomError) -> String {
        guard let string = try string(key) else { throw .invalidParams("\(name(key)): required") }
        return string
    }

    /// A member that must be given, as a string or as `null` (whose meaning
    /// `null` says in the error, e.g. "null unpins"): nil for `null`.
    func requiredStringOrNull(_ key: String, null meaning: String) throws(RoomError) -> String? {
        guard let value = members[key] else { throw .invalidParams("\(name(key)): required (\(meaning))") }
        switch value {
        case .null: return nil
        case .string(let string): return string
        default: throw typeError(key, "a string or null", value)
        }
    }

    func bool(_ key: String) throws(RoomError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard let bool = value.boolValue else { throw typeError(key, "a boolean", value) }
        return bool
    }

    func int(_ key: String, in range: ClosedRange<Int>) throws(RoomError) -> Int? {
        guard let value = value(key) else { return nil }
        guard let int = value.intValue else { throw typeError(key, "an integer", value) }
        guard range.contains(int) else {
            throw .invalidParams(
                "\(name(key)): must be between \(range.lowerBound) and \(range.upperBound), got \(int)"
            )
        }
        return int
    }

    /// An integer within `range` (ms timestamps); a number that is not a whole one, or out of range, is -32602.
    func int64(_ key: String, in range: ClosedRange<Int64>) throws(RoomError) -> Int64? {
        guard let value = value(key) else { return nil }
        guard let int = value.intValue.map(Int64.init) else { throw typeError(key, "an integer", value) }
        guard range.contains(int) else {
            throw .invalidParams(
                "\(name(key)): must be between \(range.lowerBound) and \(range.upperBound), got \(int)"
            )
        }
        return int
    }

    func stringArray(_ key: String) throws(RoomError) -> [String]? {
        guard let value = value(key) else { return nil }
        guard let items = value.arrayValue else { throw typeError(key, "an array of strings", value) }
        var strings: [String] = []
        for (index, item) in items.enumerated() {
            guard let string = item.stringValue else {
                throw .invalidParams("\(name(key))[\(index)]: expected a string, got \(item.typeName)")
            }
            strings.append(string)
        }
        return strings
    }

    func object(_ key: String) throws(RoomError) -> Params? {
        guard let value = value(key) else { return nil }
        guard case .object = value else { throw typeError(key, "an object", value) }
        return Params(value, path: name(key))
    }

    func requiredObject(_ key: String) throws(RoomError) -> Params {
        guard let object = try object(key) else { throw .invalidParams("\(name(key)): required") }
        return object
    }
}

/// The shape of every id: `[A-Za-z0-9_-]{1,64}` (room ids, track ids, groups).
func isValidID(_ id: String) -> Bool { TokenMinter.isValidRoomID(id) }

extension Params {
    /// A client-chosen id (`[A-Za-z0-9_-]{1,64}`).
    func id(_ key: String, required: Bool = false) throws(RoomError) -> String? {
        guard let value = required ? try requiredString(key) : try string(key) else { return nil }
        guard isValidID(value) else { throw .invalidParams("\(key): must match [A-Za-z0-9_-]{1,64}") }
        return value
    }

    /// A peer's id (`peer_id`, `requested_for`): any string, as the room's peers are keyed.
    func peerID(_ key: String) throws(RoomError) -> PeerID? { try string(key).map(PeerID.init) }

    func requiredPeerID(_ key: String) throws(RoomError) -> PeerID { PeerID(try requiredString(key)) }

    /// A user's id (`user_id`): any string of at most 256 bytes (UTF-8), as
    /// `join` takes it from a token's claim; a longer one is 41300 naming the
    /// field, like the claim's (every call and REST body that names a user).
    func userID(_ key: String) throws(RoomError) -> UserID? {
        guard let value = try string(key) else { return nil }
        try checkUserID(key, value)
        return UserID(value)
    }

    func requiredUserID(_ key: String) throws(RoomError) -> UserID {
        let value = try requiredString(key)
        try checkUserID(key, value)
        return UserID(value)
    }

    private func checkUserID(_ key: String, _ value: String) throws(RoomError) {
        let size = value.utf8.count
        if size > TokenMinter.maxUserIDBytes {
            throw RoomError(
                .tooLarge,
                "\(name(key)): \(size) bytes is over the limit of \(TokenMinter.maxUserIDBytes)"
            )
        }
    }

    /// One of an enum's raw values.
    func choice<T: RawRepresentable & CaseIterable>(
        _ key: String,
        _: T.Type,
        required: Bool = false
    ) throws(RoomError)
        -> T? where T.RawValue == String
    {
        guard let value = required ? try requiredString(key) : try string(key) else { return nil }
        guard let choice = T(rawValue: value) else {
            throw .invalidParams(
                "\(key): expected one of \(T.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(value)\""
            )
        }
        return choice
    }
}

extension Params {
    /// An array of objects, each read with its path (`questions[2]`); nil when absent
    /// unless `required`.
    func objects(_ key: String, required: Bool = false) throws(RoomError) -> [Params]? {
        guard let value = value(key) else {
            if required { throw .invalidParams("\(path.isEmpty ? key : "\(path).\(key)"): required") }
            return nil
        }
        let name = path.isEmpty ? key : "\(path).\(key)"
        guard let items = value.arrayValue else {
            throw .invalidParams("\(name): expected an array, got \(value.typeName)")
        }
        var objects: [Params] = []
        for (index, item) in items.enumerated() {
            guard case .object = item else {
                throw .invalidParams("\(name)[\(index)]: expected an object, got \(item.typeName)")
            }
            objects.append(Params(item, path: "\(name)[\(index)]"))
        }
        return objects
    }
}
