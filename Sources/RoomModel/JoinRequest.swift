/// A join whose token the server has already verified.
public struct JoinRequest: Sendable {
    /// From the token's `room_id` claim.
    public var roomID: RoomID
    /// The `room_id` param, when the client sent one (must equal the claim).
    public var requestedRoomID: RoomID?
    public var userID: UserID
    public var roleName: String
    /// The token's `name` claim, else the `name` param, else the user id; trimmed (section 27).
    public var name: String
    /// The name is the `name` param (the user's word): 40908 when a moderating peer in the room has it.
    public var nameIsParam: Bool
    /// The token's `avatar` claim.
    public var avatar: String?
    /// The token's `attributes` claim.
    public var attributes: [String: String]
    public var data: String
    public var viewOnly: Bool
    /// `peer_id` param: resume that peer.
    public var resumePeerID: PeerID?
    /// The token's `exp` in ms (section 23's warning); nil: not tracked.
    public var tokenExpiresAt: Int64?
    /// The token expired already (a resume inside the grace may use it, section 23).
    public var tokenExpired: Bool

    public init(
        roomID: RoomID,
        requestedRoomID: RoomID? = nil,
        userID: UserID,
        roleName: String,
        name: String,
        nameIsParam: Bool = false,
        avatar: String? = nil,
        attributes: [String: String] = [:],
        data: String = "",
        viewOnly: Bool = false,
        resumePeerID: PeerID? = nil,
        tokenExpiresAt: Int64? = nil,
        tokenExpired: Bool = false
    ) {
        self.roomID = roomID
        self.requestedRoomID = requestedRoomID
        self.userID = userID
        self.roleName = roleName
        self.name = name
        self.nameIsParam = nameIsParam
        self.avatar = avatar
        self.attributes = attributes
        self.data = data
        self.viewOnly = viewOnly
        self.resumePeerID = resumePeerID
        self.tokenExpiresAt = tokenExpiresAt
        self.tokenExpired = tokenExpired
    }
}

/// What a successful join produced.
public struct JoinOutcome {
    public var peer: Peer
    public var room: Room
    /// The other peers, in join order, each with whether the caller sees its tracks.
    public var others: [(peer: Peer, withTracks: Bool)]
    public var resumed: Bool
    /// For a resume: the peer's previous endpoint (a connection the server
    /// closes with 4003, or its held pushes).
    public var replacedEndpoint: PeerEndpoint?
    public var deliveries: [Delivery]
}
