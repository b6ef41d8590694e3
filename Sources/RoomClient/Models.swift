import RoomWire

// The objects of PROTOCOL.md section 3, decoded from RoomWire `JSON`.
//
// Every model has `init(json:)`, which throws `WireError`
// naming the offending path when the value does not have the protocol's
// shape, and a public memberwise initializer so tests can build expected
// values. Times are milliseconds since the Unix epoch.

/// The result of ``RoomClient/join(token:name:data:roomID:peerID:timeout:)``.
public struct JoinResult: Sendable, Equatable {
    /// The caller's own peer, with all its tracks.
    public var peer: Peer
    /// The room joined.
    public var room: Room
    /// The caller's policy.
    public var policy: Policy
    /// Every other peer (large rooms: see PROTOCOL.md section 12), each with
    /// only the tracks the caller's role subscribes to.
    public var peers: [Peer]
    /// True when `peerID` resumed a peer in its reconnect grace.
    public var resumed: Bool
    /// The newest messages of the room's history and its pin (1.2, section 19).
    public var chat: ChatBackfill

    /// Builds a join result.
    public init(
        peer: Peer,
        room: Room,
        policy: Policy,
        peers: [Peer],
        resumed: Bool,
        chat: ChatBackfill = ChatBackfill()
    ) {
        self.peer = peer
        self.room = room
        self.policy = policy
        self.peers = peers
        self.resumed = resumed
        self.chat = chat
    }

    /// Decodes a `join` result. Throws ``RoomClientError/invalidPayload(_:)``.
    public init(json: JSON) throws {
        try self.init(WireReader(json, path: "join result"))
    }

    init(_ r: WireReader) throws {
        try r.requireObject()
        peer = try Peer(r.child("peer"))
        room = try Room(r.child("room"))
        policy = try Policy(r.child("policy"))
        peers = try r.elements("peers").map { try Peer($0) }
        resumed = try r.bool("resumed")
        chat = r.has("chat") ? try ChatBackfill(r.child("chat")) : ChatBackfill()
    }
}

extension Peer {
    /// True if the peer is in the hand-raise group `_handraise`.
    public var isHandRaised: Bool { groups.contains(RoomClient.handRaiseGroup) }
}
