/// The template's `settings` object: daemon tunables, grouped as in the JSON.
public struct Settings: Sendable, Equatable {
    /// `room`
    public var room = RoomSettings()
    /// `active_speakers`
    public var activeSpeakers = ActiveSpeakerSettings()
    /// `role_change`
    public var roleChange = RoleChangeSettings()
    /// `limits`
    public var limits = LimitSettings()
    /// `polls`
    public var polls = PollSettings()
    /// `hls` (1.1, HLSSettings.swift)
    public var hls = HLSSettings()
    /// `webhooks` (1.1, WebhookSettings.swift): nil when absent (no webhooks).
    public var webhooks: WebhookSettings?
    /// `cluster` (1.1, section 18)
    public var cluster = ClusterSettings()

    public init(room: RoomSettings = RoomSettings(), activeSpeakers: ActiveSpeakerSettings = ActiveSpeakerSettings(),
                roleChange: RoleChangeSettings = RoleChangeSettings(), limits: LimitSettings = LimitSettings(),
                polls: PollSettings = PollSettings(), cluster: ClusterSettings = ClusterSettings()) {
        self.room = room
        self.activeSpeakers = activeSpeakers
        self.roleChange = roleChange
        self.limits = limits
        self.polls = polls
        self.cluster = cluster
    }
}

/// `settings.cluster` (PROTOCOL.md section 18). Read by the transport only:
/// the domain never sees the cluster.
public struct ClusterSettings: Sendable, Equatable {
    /// `nats_url`: `nats://HOST:PORT` of the cluster's bus; nil = a single daemon.
    /// `roomd --cluster` overrides it.
    public var natsURL: String?

    public init(natsURL: String? = nil) {
        self.natsURL = natsURL
    }

    /// Why `url` is not a usable `nats://HOST:PORT`, or nil when it is. HOST
    /// is a name or IPv4 address (`[A-Za-z0-9.-]`) or a bracketed IPv6
    /// address; PORT is 1...65535; nothing else (no user, path or query).
    public static func natsURLProblem(_ url: String) -> String? {
        let expected = "expected nats://HOST:PORT, got \"\(url.prefix(200))\""
        guard url.hasPrefix("nats://"), url.utf8.count <= 300 else { return expected }
        let rest = url.dropFirst("nats://".count)
        guard let colon = rest.lastIndex(of: ":") else { return expected }
        let host = rest[..<colon], port = rest[rest.index(after: colon)...]
        let hostOK: Bool
        if host.hasPrefix("[") {
            hostOK = host.count > 2 && host.hasSuffix("]")
                && host.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        } else {
            hostOK = !host.isEmpty && host.utf8.allSatisfy { b in
                switch b {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                     UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"): true
                default: false
                }
            }
        }
        guard hostOK else { return expected }
        guard !port.isEmpty, port.count <= 5, port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber),
              let number = Int(port), (1...65535).contains(number) else {
            return "port: must be between 1 and 65535 in \"\(url.prefix(200))\""
        }
        return nil
    }
}

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

    public init(autoCreate: Bool = true, predefined: [String] = [], maxPeers: Int = 0, reconnectGraceS: Int = 20,
                largeRoomThreshold: Int = 1000, roomStateIntervalMs: Int = 2000) {
        self.autoCreate = autoCreate
        self.predefined = predefined
        self.maxPeers = maxPeers
        self.reconnectGraceS = reconnectGraceS
        self.largeRoomThreshold = largeRoomThreshold
        self.roomStateIntervalMs = roomStateIntervalMs
    }
}

/// `settings.active_speakers`
public struct ActiveSpeakerSettings: Sendable, Equatable {
    /// `interval_ms`, 100...60000.
    public var intervalMs: Int = 1000
    /// `threshold`, 0...100.
    public var threshold: Int = 35
    /// `max_speakers`, 1...100.
    public var maxSpeakers: Int = 5

    public init(intervalMs: Int = 1000, threshold: Int = 35, maxSpeakers: Int = 5) {
        self.intervalMs = intervalMs
        self.threshold = threshold
        self.maxSpeakers = maxSpeakers
    }
}

/// `settings.role_change`
public struct RoleChangeSettings: Sendable, Equatable {
    /// `request_ttl_s`, 1...3600: lifetime of a polite role-change request.
    public var requestTTLS: Int = 60

    public init(requestTTLS: Int = 60) {
        self.requestTTLS = requestTTLS
    }
}

/// `settings.limits`; every limit is > 0.
public struct LimitSettings: Sendable, Equatable {
    /// `max_message_bytes`
    public var maxMessageBytes: Int = 65536
    /// `idle_timeout_s`
    public var idleTimeoutS: Int = 60
    /// `max_outbound_bytes`
    public var maxOutboundBytes: Int = 1_048_576
    /// `max_tracks_per_peer`
    public var maxTracksPerPeer: Int = 8
    /// `max_chat_bytes`
    public var maxChatBytes: Int = 4096
    /// `messages_per_second`
    public var messagesPerSecond: Int = 100
    /// `message_burst`
    public var messageBurst: Int = 200
    /// `max_name_bytes` (roomd extension: a peer's name)
    public var maxNameBytes: Int = 256
    /// `max_metadata_bytes` (roomd extension: a peer's `data` string)
    public var maxMetadataBytes: Int = 4096
    /// `join_timeout_s` (1.1): a connection that has not joined by then is closed with 1008.
    public var joinTimeoutS: Int = 10
    /// `max_session_value_bytes`: a session-store value's compact JSON encoding.
    public var maxSessionValueBytes: Int = 4096
    /// `max_session_keys`: session-store keys per room.
    public var maxSessionKeys: Int = 256

    public init(maxMessageBytes: Int = 65536, idleTimeoutS: Int = 60, maxOutboundBytes: Int = 1_048_576,
                maxTracksPerPeer: Int = 8, maxChatBytes: Int = 4096, messagesPerSecond: Int = 100,
                messageBurst: Int = 200, maxNameBytes: Int = 256, maxMetadataBytes: Int = 4096,
                maxSessionValueBytes: Int = 4096, maxSessionKeys: Int = 256) {
        self.maxMessageBytes = maxMessageBytes
        self.idleTimeoutS = idleTimeoutS
        self.maxOutboundBytes = maxOutboundBytes
        self.maxTracksPerPeer = maxTracksPerPeer
        self.maxChatBytes = maxChatBytes
        self.messagesPerSecond = messagesPerSecond
        self.messageBurst = messageBurst
        self.maxNameBytes = maxNameBytes
        self.maxMetadataBytes = maxMetadataBytes
        self.maxSessionValueBytes = maxSessionValueBytes
        self.maxSessionKeys = maxSessionKeys
    }
}

// MARK: - Reading from the template; absent fields keep their defaults.

extension Settings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        room = try c.object("room", RoomSettings.init) ?? room
        activeSpeakers = try c.object("active_speakers", ActiveSpeakerSettings.init) ?? activeSpeakers
        roleChange = try c.object("role_change", RoleChangeSettings.init) ?? roleChange
        limits = try c.object("limits", LimitSettings.init) ?? limits
        polls = try c.object("polls", PollSettings.init) ?? polls
        hls = try c.object("hls", HLSSettings.init) ?? hls
        webhooks = try c.object("webhooks", WebhookSettings.init)
        cluster = try c.object("cluster", ClusterSettings.init) ?? cluster
    }
}

extension ClusterSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        let url = try c.string("nats_url", default: "")
        if url.isEmpty { return }
        if let problem = Self.natsURLProblem(url) {
            c.report(c.path("nats_url"), problem)
        } else {
            natsURL = url
        }
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
    }
}

extension ActiveSpeakerSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        intervalMs = try c.int("interval_ms", default: intervalMs, in: 100...60000)
        threshold = try c.int("threshold", default: threshold, in: 0...100)
        maxSpeakers = try c.int("max_speakers", default: maxSpeakers, in: 1...100)
    }
}

extension RoleChangeSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        requestTTLS = try c.int("request_ttl_s", default: requestTTLS, in: 1...3600)
    }
}

extension LimitSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        let limits: [(String, WritableKeyPath<LimitSettings, Int>)] = [
            ("max_message_bytes", \.maxMessageBytes), ("idle_timeout_s", \.idleTimeoutS),
            ("max_outbound_bytes", \.maxOutboundBytes), ("max_tracks_per_peer", \.maxTracksPerPeer),
            ("max_chat_bytes", \.maxChatBytes), ("messages_per_second", \.messagesPerSecond),
            ("message_burst", \.messageBurst), ("max_name_bytes", \.maxNameBytes),
            ("max_metadata_bytes", \.maxMetadataBytes), ("join_timeout_s", \.joinTimeoutS),
            ("max_session_value_bytes", \.maxSessionValueBytes), ("max_session_keys", \.maxSessionKeys),
        ]
        for (name, key) in limits {
            self[keyPath: key] = try c.int(name, default: self[keyPath: key], atLeast: 1)
        }
    }
}

/// `settings.polls`
public struct PollSettings: Sendable, Equatable {
    /// `max_polls`, 1...10000: polls per room session.
    public var maxPolls: Int = 100
    /// `stats_interval_ms`, 100...60000: at most one `on-poll-stats` per poll per interval.
    public var statsIntervalMs: Int = 1000

    public init(maxPolls: Int = 100, statsIntervalMs: Int = 1000) {
        self.maxPolls = maxPolls
        self.statsIntervalMs = statsIntervalMs
    }
}

extension PollSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        maxPolls = try c.int("max_polls", default: maxPolls, in: 1...10000)
        statsIntervalMs = try c.int("stats_interval_ms", default: statsIntervalMs, in: 100...60000)
    }
}
