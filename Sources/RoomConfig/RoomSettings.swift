/// `settings.room`
public struct RoomSettings: Sendable, Equatable {
    /// `auto_create`: a join creates the room; when false only `predefined` rooms exist.
    public var autoCreate: Bool = true
    /// `predefined`: room ids, each `[A-Za-z0-9_-]{1,64}`.
    public var predefined: [String] = []
    /// `max_peers`: 0 = no limit.
    public var maxPeers: Int = 0
    /// `reconnect_grace_s`, 0...3600.
    public var reconnectGraceS: Int = 20
    /// `large_room_threshold`
    public var largeRoomThreshold: Int = 1000
    /// `room_state_interval_ms`
    public var roomStateIntervalMs: Int = 2000
    /// `empty_timeout_s`, 0...86400 (1.2, section 23): how long a session
    /// whose last peer left waits for the next join; 0 ends it at once.
    public var emptyTimeoutS: Int = 0
    /// `token_refresh_s`, 0...86400 (1.2, section 23): a peer whose token
    /// expires sooner than this gets `on-token-expiring`; 0 never warns.
    public var tokenRefreshS: Int = 300
    /// `resume_buffer_bytes`, 64 KiB...64 MiB (1.3, section 29): the encoded
    /// pushes held for a peer in its reconnect grace; more ends the grace.
    public var resumeBufferBytes: Int = 1_048_576
    /// The range of `resume_buffer_bytes`.
    public static let resumeBufferRange = 65_536...67_108_864

    public init(
        autoCreate: Bool = true,
        predefined: [String] = [],
        maxPeers: Int = 0,
        reconnectGraceS: Int = 20,
        largeRoomThreshold: Int = 1000,
        roomStateIntervalMs: Int = 2000,
        emptyTimeoutS: Int = 0,
        tokenRefreshS: Int = 300,
        resumeBufferBytes: Int = 1_048_576
    ) {
        self.autoCreate = autoCreate
        self.predefined = predefined
        self.maxPeers = maxPeers
        self.reconnectGraceS = reconnectGraceS
        self.largeRoomThreshold = largeRoomThreshold
        self.roomStateIntervalMs = roomStateIntervalMs
        self.emptyTimeoutS = emptyTimeoutS
        self.tokenRefreshS = tokenRefreshS
        self.resumeBufferBytes = resumeBufferBytes
    }
}

extension RoomSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        autoCreate = try c.bool("auto_create", default: autoCreate)
        predefined = try c.stringArray("predefined")
        for (i, id) in predefined.enumerated() where !TemplateIdentifier.isValid(id) {
            c.report(c.path("predefined", i), "invalid room id \"\(id)\", expected \(TemplateIdentifier.rule)")
        }
        maxPeers = try c.int("max_peers", default: maxPeers, atLeast: 0)
        reconnectGraceS = try c.int("reconnect_grace_s", default: reconnectGraceS, in: 0...3600)
        largeRoomThreshold = try c.int("large_room_threshold", default: largeRoomThreshold, atLeast: 1)
        roomStateIntervalMs = try c.int("room_state_interval_ms", default: roomStateIntervalMs, atLeast: 1)
        emptyTimeoutS = try c.int("empty_timeout_s", default: emptyTimeoutS, in: 0...86400)
        tokenRefreshS = try c.int("token_refresh_s", default: tokenRefreshS, in: 0...86400)
        resumeBufferBytes = try c.int("resume_buffer_bytes", default: resumeBufferBytes, in: Self.resumeBufferRange)
    }
}
