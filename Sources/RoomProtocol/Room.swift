import RoomWire

// The peer and the room as PROTOCOL.md section 3 gives them, and the
// receiver's policy. Same conventions as Peers.swift. The server's model has
// its own `Peer` and `Room` classes (live objects), hence the `Wire` prefix;
// RoomClient calls them `Peer` and `Room`.

/// A peer's `info`: `{"name","data","user_id","type","avatar"}`.
public struct PeerInfo: Sendable, Equatable, Hashable {
    /// The display name (defaults to the token's `name` claim, else its `user_id`).
    public var name: String
    /// The peer's metadata string (`""` when none was given).
    public var data: String
    /// The token's `user_id`.
    public var userID: String
    /// Always `"regular"` in protocol version 1.
    public var type: String
    /// 1.3 (section 27): the token's `avatar` claim, nil when none.
    public var avatar: String?

    /// Builds a peer's info.
    public init(name: String, data: String = "", userID: String, type: String = "regular", avatar: String? = nil) {
        self.name = name
        self.data = data
        self.userID = userID
        self.type = type
        self.avatar = avatar
    }

    package init(_ r: WireReader) throws {
        try r.requireObject()
        name = try r.string("name")
        data = try r.string("data")
        userID = try r.string("user_id")
        type = try r.string("type")
        avatar = try r.optionalString("avatar")
    }
}

/// A peer in the room: `{"peer_id","role","joined_at","groups","tracks","info","attributes"}`.
///
/// `tracks` holds only the tracks the receiver's role subscribes to (a
/// peer's own Peer always lists all of its tracks).
public struct WirePeer: Sendable, Equatable, Hashable {
    /// Opaque, made by the server; also the `peer_id` to resume with.
    public var peerID: String
    /// The role name from the template.
    public var role: String
    /// When the peer joined, ms since the epoch.
    public var joinedAt: Int64
    /// Group names, e.g. `"_handraise"`.
    public var groups: [String]
    /// Tracks by `track_id`.
    public var tracks: [String: Track]
    /// Name, metadata, user id and avatar.
    public var info: PeerInfo
    /// 1.3 (section 27): the app's and the peer's key-value strings (`{}` when none).
    public var attributes: [String: String]

    /// Builds a peer, e.g. an expected value in a test.
    public init(
        peerID: String,
        role: String,
        joinedAt: Int64,
        groups: [String] = [],
        tracks: [String: Track] = [:],
        info: PeerInfo,
        attributes: [String: String] = [:]
    ) {
        self.peerID = peerID
        self.role = role
        self.joinedAt = joinedAt
        self.groups = groups
        self.tracks = tracks
        self.info = info
        self.attributes = attributes
    }

    /// Decodes a Peer object. Throws ``WireError``.
    public init(json: JSON) throws {
        try self.init(WireReader(json, path: "peer"))
    }

    package init(_ r: WireReader) throws {
        try r.requireObject()
        peerID = try r.string("peer_id")
        role = try r.string("role")
        joinedAt = try r.int64("joined_at")
        groups = try r.strings("groups")
        var tracks: [String: Track] = [:]
        for (key, track) in try r.members("tracks") { tracks[key] = try Track(track) }
        self.tracks = tracks
        info = try PeerInfo(r.child("info"))
        var attributes: [String: String] = [:]
        if r.has("attributes") {
            for (key, value) in try r.members("attributes") {
                guard let text = value.json?.stringValue else { throw value.fail("expected a string") }
                attributes[key] = text
            }
        }
        self.attributes = attributes
    }

    /// The Peer object from plain values: the server writes it straight from
    /// its model's peer (no `WirePeer` built on the way). `tracks` are the
    /// receiver's view: empty for a role that subscribes to none.
    @inlinable
    public static func encode(
        into w: inout JSONWriter,
        peerID: String,
        role: String,
        joinedAt: Int64,
        groups: [String],
        tracks: [Track],
        name: String,
        data: String,
        userID: String,
        type: String = "regular",
        avatar: String? = nil,
        attributes: [String: String] = [:]
    ) {
        w.beginObject()
        w.field("peer_id", peerID)
        w.field("role", role)
        w.field("joined_at", joinedAt)
        w.key("groups")
        w.strings(groups)
        w.key("tracks")
        w.beginObject()
        for track in tracks {
            w.key(track.trackID)
            track.encode(into: &w)
        }
        w.endObject()
        w.key("info")
        w.beginObject()
        w.field("name", name)
        w.field("data", data)
        w.field("user_id", userID)
        w.field("type", type)
        w.key("avatar")
        if let avatar { w.string(avatar) } else { w.null() }
        w.endObject()
        w.key("attributes")
        w.beginObject()
        for key in attributes.keys.sorted() { w.field(key, attributes[key]!) }  // sorted: deterministic bytes
        w.endObject()
        w.endObject()
    }
}

/// The room as `join` reports it: `{"room_id","session_id","started_at","peer_count","locked"}`.
public struct WireRoom: Sendable, Equatable, Hashable {
    /// The token's `room_id`.
    public var roomID: String
    /// A new session id starts each time the room is created.
    public var sessionID: String
    /// When this session started, ms since the epoch.
    public var startedAt: Int64
    /// Every peer in the room, the caller included.
    public var peerCount: Int
    /// True while the room is locked by `end-room` with `lock`.
    public var locked: Bool
    /// The live stream (1.1): nil before the session's first `hls-start` or schedule.
    public var hls: HLSState?
    /// RTMP out (1.2, section 23): nil before its first start.
    public var rtmp: RTMPState?
    /// The recording (1.2, section 23): nil before its first start.
    public var recording: RecordingState?

    /// Builds a room, e.g. an expected value in a test.
    public init(
        roomID: String,
        sessionID: String,
        startedAt: Int64,
        peerCount: Int,
        locked: Bool = false,
        hls: HLSState? = nil
    ) {
        self.roomID = roomID
        self.sessionID = sessionID
        self.startedAt = startedAt
        self.peerCount = peerCount
        self.locked = locked
        self.hls = hls
    }

    /// Decodes a Room object. Throws ``WireError``.
    public init(json: JSON) throws {
        try self.init(WireReader(json, path: "room"))
    }

    package init(_ r: WireReader) throws {
        try r.requireObject()
        roomID = try r.string("room_id")
        sessionID = try r.string("session_id")
        startedAt = try r.int64("started_at")
        peerCount = try r.int("peer_count")
        locked = try r.bool("locked")
        hls = try r.optionalObject("hls", HLSState.init)
        rtmp = try r.optionalObject("rtmp", RTMPState.init)
        recording = try r.optionalObject("recording", RecordingState.init)
    }
}

/// The receiver's role and the template's roles: `{"name","known_roles"}`.
///
/// Role objects stay `JSON` (the template's role object with its `name`
/// added: `priority`, `maxPeerCount`, `publishParams`, `subscribeParams`,
/// `permissions`), e.g. `policy.knownRoles["host"]?["permissions"]?["mute"]`.
public struct Policy: Sendable, Equatable {
    /// The receiver's own role.
    public var name: String
    /// Every role of the template by name.
    public var knownRoles: [String: JSON]

    /// Builds a policy.
    public init(name: String, knownRoles: [String: JSON]) {
        self.name = name
        self.knownRoles = knownRoles
    }

    /// Decodes a Policy object. Throws ``WireError``.
    public init(json: JSON) throws {
        try self.init(WireReader(json, path: "policy"))
    }

    package init(_ r: WireReader) throws {
        try r.requireObject()
        name = try r.string("name")
        var roles: [String: JSON] = [:]
        for (key, role) in try r.members("known_roles") { roles[key] = role.json }
        knownRoles = roles
    }

    /// The receiver's own role object.
    public var ownRole: JSON? { knownRoles[name] }

    /// Whether the receiver's role has the template permission `name`
    /// (`changeRole`, `removeOthers`, `endRoom`, `mute`, `unmute`, …).
    public func allows(_ permission: String) -> Bool {
        ownRole?["permissions"]?[permission]?.boolValue ?? false
    }
}

/// One page of ``RoomClient/findPeers(role:group:limit:timeout:)`` /
/// ``RoomClient/nextPeers(iterator:limit:timeout:)``: `{"iterator","total","eof","peers"}`.
public struct PeerPage: Sendable, Equatable {
    /// Pass to ``RoomClient/nextPeers(iterator:limit:timeout:)``; nil at the end.
    public var iterator: String?
    /// How many peers match in all.
    public var total: Int
    /// True when this is the last page.
    public var eof: Bool
    /// Full Peer objects, tracks filtered as in `join`.
    public var peers: [WirePeer]

    /// Builds a page.
    public init(iterator: String?, total: Int, eof: Bool, peers: [WirePeer]) {
        self.iterator = iterator
        self.total = total
        self.eof = eof
        self.peers = peers
    }

    package init(_ r: WireReader) throws {
        try r.requireObject()
        iterator = try r.optionalString("iterator")
        total = try r.int("total")
        eof = try r.bool("eof")
        peers = try r.elements("peers").map { try WirePeer($0) }
    }
}
