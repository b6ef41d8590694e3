import RoomWire

/// An id that is a string on the wire and a type of its own everywhere else:
/// a room's, a peer's or a user's id. Holds whatever string the edge read
/// (the JSON-RPC params, a REST path or body, a token's claims, a saved
/// state, a node message) and checks nothing itself: the edge validates.
/// `description` is the id itself, so log lines and error texts read as
/// before; equality, hashing and order are the string's.
public protocol StringID: Hashable, Comparable, Sendable, CustomStringConvertible {
    var rawValue: String { get }
    init(_ rawValue: String)
}

extension StringID {
    @inlinable public var description: String { rawValue }
    /// String order: listings, saved states and ticks sort ids.
    @inlinable public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// A room's id (`room_id`).
public struct RoomID: StringID {
    public let rawValue: String
    @inlinable public init(_ rawValue: String) { self.rawValue = rawValue }
}

/// A peer's id (`peer_id`): one session of a user in a room, made by the room's id generator.
public struct PeerID: StringID {
    public let rawValue: String
    @inlinable public init(_ rawValue: String) { self.rawValue = rawValue }
}

/// A user's id (`user_id`): who the app says the peer is (its token's `user_id`).
public struct UserID: StringID {
    public let rawValue: String
    @inlinable public init(_ rawValue: String) { self.rawValue = rawValue }
}

extension JSONWriter {
    /// `"name": "id"`.
    @inlinable public mutating func field(_ name: String, _ id: some StringID) { field(name, id.rawValue) }

    /// The id as a JSON string.
    @inlinable public mutating func string(_ id: some StringID) { string(id.rawValue) }

    /// The ids as an array of JSON strings.
    @inlinable public mutating func strings<ID: StringID>(_ ids: some Sequence<ID>) {
        strings(ids.lazy.map(\.rawValue))
    }
}
