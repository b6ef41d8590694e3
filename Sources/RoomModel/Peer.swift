import RoomConfig
import RoomProtocol

/// A participant of a room. Owned by its `Room`; the server only reads it and
/// keeps its connection in `endpoint`, which the model never inspects.
public final class Peer {
    public let id: PeerID
    public let userID: UserID
    public let joinedAt: Int64
    /// Join order within the room, for deterministic listings.
    let sequence: Int
    public internal(set) var role: Role
    public internal(set) var name: String
    public internal(set) var data: String
    /// `info.avatar`: the token's `avatar` claim (section 27), nil when none.
    public internal(set) var avatar: String?
    /// `attributes` (section 27): the token's claim, then `peer-attributes-set`.
    public internal(set) var attributes: [String: String] = [:]
    public internal(set) var groups: [String] = []
    public internal(set) var tracks: [Track] = []
    /// `user_restrictions: "view_and_polls_only"` from the token.
    public let viewOnly: Bool
    /// The room, while the peer is in it: read `hasLeft` first wherever a
    /// peer may outlive its membership (e.g. a delivery built before it left).
    public internal(set) unowned var room: Room
    /// Set when the peer leaves its room: from then on `room` may be gone.
    public internal(set) var hasLeft = false
    /// The server's connection to the peer (or what holds its pushes during
    /// the reconnect grace). Opaque to the model.
    public var endpoint: PeerEndpoint? {
        didSet { endpointReference = endpoint.map { Unmanaged.passUnretained($0) } }
    }
    /// `endpoint` without a strong reference, for a server's fan-out loop
    /// (no reference counting per recipient); valid only while `endpoint`
    /// holds the same object.
    public private(set) var endpointReference: Unmanaged<PeerEndpoint>?
    /// Set while the peer's connection is lost: when its reconnect grace ends.
    public internal(set) var graceDeadline: Int64?
    /// Its `GraceEnd` in the registry's deadlines, while in its grace.
    var graceEntry: DeadlineID?
    /// When the peer's token expires (ms; its `exp`), nil when not known
    /// (a restored peer, a harness' join without a token); TokenExpiry.swift.
    public internal(set) var tokenExpiresAt: Int64?
    /// When the peer is told its token expires soon; nil once told or never.
    var tokenWarnAt: Int64?
    /// Its `TokenWarning` in the registry's deadlines, while one waits.
    var tokenEntry: DeadlineID?
    /// The session-store keys this peer listens to (`listen-metadata-change`).
    public internal(set) var metadataListening: MetadataListening = .none

    init(
        id: PeerID,
        userID: UserID,
        joinedAt: Int64,
        sequence: Int,
        role: Role,
        name: String,
        data: String,
        avatar: String? = nil,
        attributes: [String: String] = [:],
        viewOnly: Bool,
        room: Room
    ) {
        self.id = id
        self.userID = userID
        self.joinedAt = joinedAt
        self.sequence = sequence
        self.role = role
        self.name = name
        self.data = data
        self.avatar = avatar
        self.attributes = attributes
        self.viewOnly = viewOnly
        self.room = room
    }

    /// Whether this peer's role subscribes to `other`'s role, i.e. sees its tracks.
    public func sees(tracksOf other: Peer) -> Bool {
        role.subscribes(to: other.role.name)
    }

    func track(_ id: String) -> Track? { tracks.first { $0.trackID == id } }

    /// A `view_and_polls_only` peer may view and vote, nothing else
    /// (PROTOCOL.md section 4): every call that publishes, speaks, acts on
    /// others or changes the room throws 40300 for it, whatever its role.
    public func requireUnrestricted(_ call: String) throws(RoomError) {
        if viewOnly { throw RoomError.restricted(call) }
    }
}
