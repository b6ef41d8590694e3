import RoomWire

// The objects of PROTOCOL.md section 3, decoded from RoomWire `JSON`.
//
// Every model has `init(json:)`, which throws `RoomClientError.invalidPayload`
// naming the offending path when the value does not have the protocol's
// shape, and a public memberwise initializer so tests can build expected
// values. Times are milliseconds since the Unix epoch.

/// The kind of a track: `"audio"` or `"video"`.
public enum TrackType: String, Sendable, Equatable, Hashable, CaseIterable {
    /// `"audio"`: needs `audio` in the role's `publishParams.allowed`.
    case audio
    /// `"video"`: needs `video` (or `screen` for source screen) in `publishParams.allowed`.
    case video
}

/// Where a track comes from: `"regular"` (camera, microphone), `"screen"` or `"plugin"`.
public enum TrackSource: String, Sendable, Equatable, Hashable, CaseIterable {
    /// `"regular"`, the server's default.
    case regular
    /// `"screen"`: a screen share; needs `screen` in `publishParams.allowed`.
    case screen
    /// `"plugin"`.
    case plugin
}

/// A published track: `{"track_id","type","source","mute","description"}`.
public struct Track: Sendable, Equatable, Hashable {
    /// Unique within the room; client-chosen ids match `[A-Za-z0-9_-]{1,64}`.
    public var trackID: String
    /// Audio or video.
    public var type: TrackType
    /// Regular, screen or plugin.
    public var source: TrackSource
    /// True while the track is muted.
    public var mute: Bool
    /// Free text chosen by the publisher (`""` by default).
    public var description: String

    /// Builds a track, e.g. an expected value in a test.
    public init(
        trackID: String,
        type: TrackType,
        source: TrackSource = .regular,
        mute: Bool = false,
        description: String = ""
    ) {
        self.trackID = trackID
        self.type = type
        self.source = source
        self.mute = mute
        self.description = description
    }

    /// Decodes a Track object. Throws ``RoomClientError/invalidPayload(_:)``.
    public init(json: JSON) throws {
        try self.init(WireReader(json, path: "track"))
    }

    init(_ r: WireReader) throws {
        try r.requireObject()
        trackID = try r.string("track_id")
        type = try r.choice("type")
        source = try r.choice("source")
        mute = try r.bool("mute")
        description = try r.string("description")
    }
}

/// A peer's `info`: `{"name","data","user_id","type"}`.
public struct PeerInfo: Sendable, Equatable, Hashable {
    /// The display name (defaults to the token's `name` claim, else its `user_id`).
    public var name: String
    /// The peer's metadata string (`""` when none was given).
    public var data: String
    /// The token's `user_id`.
    public var userID: String
    /// Always `"regular"` in protocol version 1.
    public var type: String

    /// Builds a peer's info.
    public init(name: String, data: String = "", userID: String, type: String = "regular") {
        self.name = name
        self.data = data
        self.userID = userID
        self.type = type
    }

    init(_ r: WireReader) throws {
        try r.requireObject()
        name = try r.string("name")
        data = try r.string("data")
        userID = try r.string("user_id")
        type = try r.string("type")
    }
}

/// A peer in the room: `{"peer_id","role","joined_at","groups","tracks","info"}`.
///
/// `tracks` holds only the tracks the receiver's role subscribes to (a
/// peer's own Peer always lists all of its tracks).
public struct Peer: Sendable, Equatable, Hashable {
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
    /// Name, metadata and user id.
    public var info: PeerInfo

    /// Builds a peer, e.g. an expected value in a test.
    public init(
        peerID: String,
        role: String,
        joinedAt: Int64,
        groups: [String] = [],
        tracks: [String: Track] = [:],
        info: PeerInfo
    ) {
        self.peerID = peerID
        self.role = role
        self.joinedAt = joinedAt
        self.groups = groups
        self.tracks = tracks
        self.info = info
    }

    /// Decodes a Peer object. Throws ``RoomClientError/invalidPayload(_:)``.
    public init(json: JSON) throws {
        try self.init(WireReader(json, path: "peer"))
    }

    init(_ r: WireReader) throws {
        try r.requireObject()
        peerID = try r.string("peer_id")
        role = try r.string("role")
        joinedAt = try r.int64("joined_at")
        groups = try r.strings("groups")
        var tracks: [String: Track] = [:]
        for (key, track) in try r.members("tracks") { tracks[key] = try Track(track) }
        self.tracks = tracks
        info = try PeerInfo(r.child("info"))
    }

    /// True if the peer is in the hand-raise group `_handraise`.
    public var isHandRaised: Bool { groups.contains(RoomClient.handRaiseGroup) }
}

/// Who did something: `{"peer_id","role","info":{"name","user_id"}}`.
///
/// Changes made over the REST API carry
/// `{"peer_id":null,"role":null,"info":{"name":"server"}}`: `peerID`, `role`
/// and `userID` are then nil and `name` is `"server"`.
public struct PeerRef: Sendable, Equatable, Hashable {
    /// The peer's id; nil for the REST API.
    public var peerID: String?
    /// The peer's role; nil for the REST API.
    public var role: String?
    /// `info.name`: the peer's display name, or `"server"`.
    public var name: String
    /// `info.user_id`; nil for the REST API.
    public var userID: String?

    /// Builds a reference, e.g. an expected value in a test.
    public init(peerID: String?, role: String?, name: String, userID: String?) {
        self.peerID = peerID
        self.role = role
        self.name = name
        self.userID = userID
    }

    /// Decodes a PeerRef object. Throws ``RoomClientError/invalidPayload(_:)``.
    public init(json: JSON) throws {
        try self.init(WireReader(json, path: "peer_ref"))
    }

    init(_ r: WireReader) throws {
        try r.requireObject()
        peerID = try r.optionalString("peer_id")
        role = try r.optionalString("role")
        let info = r.child("info")
        try info.requireObject()
        name = try info.string("name")
        userID = try info.optionalString("user_id")
    }

    /// True for the REST API's reference (no peer id).
    public var isServer: Bool { peerID == nil }
}

/// The room as `join` reports it: `{"room_id","session_id","started_at","peer_count","locked"}`.
public struct Room: Sendable, Equatable, Hashable {
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

    /// Decodes a Room object. Throws ``RoomClientError/invalidPayload(_:)``.
    public init(json: JSON) throws {
        try self.init(WireReader(json, path: "room"))
    }

    init(_ r: WireReader) throws {
        try r.requireObject()
        roomID = try r.string("room_id")
        sessionID = try r.string("session_id")
        startedAt = try r.int64("started_at")
        peerCount = try r.int("peer_count")
        locked = try r.bool("locked")
        hls = r.has("hls") ? try HLSState(r.child("hls")) : nil
        rtmp = r.has("rtmp") ? try RTMPState(r.child("rtmp")) : nil
        recording = r.has("recording") ? try RecordingState(r.child("recording")) : nil
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

    /// Decodes a Policy object. Throws ``RoomClientError/invalidPayload(_:)``.
    public init(json: JSON) throws {
        try self.init(WireReader(json, path: "policy"))
    }

    init(_ r: WireReader) throws {
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

/// One entry of `active-speakers`: `{"peer_id","track_id","level"}`.
public struct Speaker: Sendable, Equatable, Hashable {
    /// The speaking peer.
    public var peerID: String
    /// Its audio track.
    public var trackID: String
    /// 0...100, the highest level reported since the last tick.
    public var level: Int

    /// Builds a speaker entry, e.g. an expected value in a test.
    public init(peerID: String, trackID: String, level: Int) {
        self.peerID = peerID
        self.trackID = trackID
        self.level = level
    }

    init(_ r: WireReader) throws {
        try r.requireObject()
        peerID = try r.string("peer_id")
        trackID = try r.string("track_id")
        level = try r.int("level")
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
    public var peers: [Peer]

    /// Builds a page.
    public init(iterator: String?, total: Int, eof: Bool, peers: [Peer]) {
        self.iterator = iterator
        self.total = total
        self.eof = eof
        self.peers = peers
    }

    init(_ r: WireReader) throws {
        try r.requireObject()
        iterator = try r.optionalString("iterator")
        total = try r.int("total")
        eof = try r.bool("eof")
        peers = try r.elements("peers").map { try Peer($0) }
    }
}
