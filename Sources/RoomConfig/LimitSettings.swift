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
    /// `max_name_bytes` (roomd extension: an operator bound on a peer's name; section 27 says 64)
    public var maxNameBytes: Int = 64
    /// `max_metadata_bytes` (roomd extension: a peer's `data` string)
    public var maxMetadataBytes: Int = 4096
    /// `join_timeout_s` (1.1): a connection that has not joined by then is closed with 1008.
    public var joinTimeoutS: Int = 10
    /// `max_session_value_bytes`: a session-store value's compact JSON encoding.
    public var maxSessionValueBytes: Int = 4096
    /// `max_session_keys`: session-store keys per room.
    public var maxSessionKeys: Int = 256
    /// `max_unjoined_per_address`: connections one address (IPv4, or an IPv6
    /// /64) may hold before they join; a new one beyond it is refused at accept.
    public var maxUnjoinedPerAddress: Int = 64

    public init(
        maxMessageBytes: Int = 65536,
        idleTimeoutS: Int = 60,
        maxOutboundBytes: Int = 1_048_576,
        maxTracksPerPeer: Int = 8,
        maxChatBytes: Int = 4096,
        messagesPerSecond: Int = 100,
        messageBurst: Int = 200,
        maxNameBytes: Int = 64,
        maxMetadataBytes: Int = 4096,
        maxSessionValueBytes: Int = 4096,
        maxSessionKeys: Int = 256
    ) {
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
            ("max_unjoined_per_address", \.maxUnjoinedPerAddress),
        ]
        for (name, key) in limits {
            self[keyPath: key] = try c.int(name, default: self[keyPath: key], atLeast: 1)
        }
    }
}
