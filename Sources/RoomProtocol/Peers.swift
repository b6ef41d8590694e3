import RoomWire

// The peer objects of PROTOCOL.md section 3: Track, PeerRef and an active
// speaker. Each type holds its JSON shape once: the decoder (`init(_ r: WireReader)`) and the
// encoders; a `static` encoder takes plain values, so that the server writes
// a push straight from its model objects (no wire value built on the way).
// Times are milliseconds since the Unix epoch.

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
/// The server's model keeps its peers' tracks as these values.
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

    /// Decodes a Track object. Throws ``WireError``.
    public init(json: JSON) throws {
        try self.init(WireReader(json, path: "track"))
    }

    package init(_ r: WireReader) throws {
        try r.requireObject()
        trackID = try r.string("track_id")
        type = try r.choice("type")
        source = try r.choice("source")
        mute = try r.bool("mute")
        description = try r.string("description")
    }

    /// The Track object.
    @inlinable
    public func encode(into w: inout JSONWriter) {
        w.beginObject()
        w.field("track_id", trackID)
        w.field("type", type.rawValue)
        w.field("source", source.rawValue)
        w.field("mute", mute)
        w.field("description", description)
        w.endObject()
    }
}

/// Who did something: `{"peer_id","role","info":{"name","user_id"}}`.
///
/// Changes made over the REST API carry
/// `{"peer_id":null,"role":null,"info":{"name":"server"}}`: `peerID`, `role`
/// and `userID` are then nil and `name` is `"server"`. The server keeps it
/// as it was at that moment (its `ActorRef`), so that it outlives later
/// renames, role changes and leaves.
public struct PeerRef: Sendable, Equatable, Hashable {
    /// The peer's id; nil for the REST API.
    public var peerID: String?
    /// The peer's role; nil for the REST API.
    public var role: String?
    /// `info.name`: the peer's display name, or `"server"`.
    public var name: String
    /// `info.user_id`; nil for the REST API.
    public var userID: String?

    /// The REST API's reference.
    public static let server = PeerRef(peerID: nil, role: nil, name: "server", userID: nil)

    /// Builds a reference, e.g. an expected value in a test.
    public init(peerID: String?, role: String?, name: String, userID: String?) {
        self.peerID = peerID
        self.role = role
        self.name = name
        self.userID = userID
    }

    /// Decodes a PeerRef object. Throws ``WireError``.
    public init(json: JSON) throws {
        try self.init(WireReader(json, path: "peer_ref"))
    }

    package init(_ r: WireReader) throws {
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

    /// The PeerRef object: `peer_id` and `role` null for the REST API, `user_id` left out when nil.
    @inlinable
    public static func encode(into w: inout JSONWriter, peerID: String?, role: String?, name: String, userID: String?) {
        w.beginObject()
        w.wireField("peer_id", orNull: peerID)
        w.wireField("role", orNull: role)
        w.key("info")
        w.beginObject()
        w.field("name", name)
        if let userID { w.field("user_id", userID) }
        w.endObject()
        w.endObject()
    }

    @inlinable
    public func encode(into w: inout JSONWriter) {
        Self.encode(into: &w, peerID: peerID, role: role, name: name, userID: userID)
    }

    /// The PeerRef object, or null.
    @inlinable
    public static func encode(_ ref: PeerRef?, into w: inout JSONWriter) {
        if let ref { ref.encode(into: &w) } else { w.null() }
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

    package init(_ r: WireReader) throws {
        try r.requireObject()
        peerID = try r.string("peer_id")
        trackID = try r.string("track_id")
        level = try r.int("level")
    }

    @inlinable
    public func encode(into w: inout JSONWriter) {
        w.beginObject()
        w.field("peer_id", peerID)
        w.field("track_id", trackID)
        w.field("level", level)
        w.endObject()
    }
}
