import RoomWire

// Chat (PROTOCOL.md sections 19 and 22): a peer's chat state and what a
// report is about. Same conventions as Peers.swift.

/// A peer's whole chat state (`on-chat-state`, `join`'s `chat.state`):
/// `{paused, slow_mode_s, chat_banned, until}`.
public struct ChatState: Sendable, Equatable, Hashable {
    public var paused: Bool
    /// 0: slow mode off.
    public var slowModeSeconds: Int
    /// Whether this peer's user is chat-banned.
    public var chatBanned: Bool
    /// When the chat ban ends (ms); nil when not chat-banned or for the rest of the session.
    public var until: Int64?

    public init(paused: Bool = false, slowModeSeconds: Int = 0, chatBanned: Bool = false, until: Int64? = nil) {
        self.paused = paused
        self.slowModeSeconds = slowModeSeconds
        self.chatBanned = chatBanned
        self.until = until
    }

    package init(_ r: WireReader) throws {
        try r.requireObject()
        paused = try r.bool("paused")
        slowModeSeconds = try r.int("slow_mode_s")
        chatBanned = try r.bool("chat_banned")
        until = try r.optionalInt64("until")
    }

    /// The members (inside an open object: `on-chat-state`'s params).
    @inlinable
    public func encodeFields(into w: inout JSONWriter) {
        w.field("paused", paused)
        w.field("slow_mode_s", slowModeSeconds)
        w.field("chat_banned", chatBanned)
        w.wireField("until", orNull: until)
    }

    @inlinable
    public func encode(into w: inout JSONWriter) {
        w.beginObject()
        encodeFields(into: &w)
        w.endObject()
    }
}

/// A report's status (1.3, section 32): `open` until a moderator resolves it.
public enum ReportStatus: String, Sendable, Equatable, Hashable, CaseIterable {
    case open, resolved
}

/// What a `report` is about: `{type:"message"|"question"|"peer", id}`.
public struct ReportTarget: Sendable, Equatable, Hashable {
    public enum Kind: String, Sendable, Equatable, Hashable, CaseIterable {
        case message, question, peer
    }

    public var type: Kind
    public var id: String

    public init(_ type: Kind, _ id: String) {
        self.type = type
        self.id = id
    }

    public static func message(_ id: String) -> ReportTarget { ReportTarget(.message, id) }
    public static func question(_ id: String) -> ReportTarget { ReportTarget(.question, id) }
    public static func peer(_ id: String) -> ReportTarget { ReportTarget(.peer, id) }

    @inlinable
    public func encode(into w: inout JSONWriter) {
        w.beginObject()
        w.field("type", type.rawValue)
        w.field("id", id)
        w.endObject()
    }
}

/// The result of the send methods (``RoomClient/broadcast(_:type:timeout:)`` and friends).
public struct MessageReceipt: Sendable, Equatable, Hashable {
    /// The id recipients see in ``Message/messageID``.
    public var messageID: String
    /// ms since the epoch; recipients see the same value.
    public var timestamp: Int64

    /// Builds a receipt.
    public init(messageID: String, timestamp: Int64) {
        self.messageID = messageID
        self.timestamp = timestamp
    }

    package init(_ r: WireReader) throws {
        try r.requireObject()
        messageID = try r.string("message_id")
        timestamp = try r.int64("timestamp")
    }
}

/// Who an `on-broadcast` was addressed to: `{"type", "peer_id"?, "roles"?}`.
public struct Recipient: Sendable, Equatable, Hashable {
    /// `"broadcast"` (everyone else), `"peer"` (direct) or `"roles"` (group).
    public enum Kind: String, Sendable, Equatable, Hashable, CaseIterable {
        /// To every other peer.
        case broadcast
        /// To one peer (direct).
        case peer
        /// To the peers of the listed roles.
        case roles
    }

    /// Broadcast, peer or roles.
    public var type: Kind
    /// The recipient peer, for `.peer`.
    public var peerID: String?
    /// The recipient roles, for `.roles`.
    public var roles: [String]?

    /// Builds a recipient, e.g. an expected value in a test.
    public init(type: Kind, peerID: String? = nil, roles: [String]? = nil) {
        self.type = type
        self.peerID = peerID
        self.roles = roles
    }

    package init(_ r: WireReader) throws {
        try r.requireObject()
        type = try r.choice("type")
        peerID = try r.optionalString("peer_id")
        roles = try r.optionalStrings("roles")
    }
}

/// A received chat message (`on-broadcast`).
public struct Message: Sendable, Equatable, Hashable {
    /// The id the sender got in its ``MessageReceipt``.
    public var messageID: String
    /// ms since the epoch.
    public var timestamp: Int64
    /// Who sent it.
    public var sender: PeerRef
    /// Who it was addressed to.
    public var recipient: Recipient
    /// `info.message`.
    public var message: String
    /// `info.type` (`"chat"` unless the sender chose another).
    public var type: String
    /// Sent by a shadow chat-banned user (1.3, section 31): only
    /// `moderateChat` peers are told (false for everyone else).
    public var shadowed: Bool = false

    /// Builds a message, e.g. an expected value in a test.
    public init(
        messageID: String,
        timestamp: Int64,
        sender: PeerRef,
        recipient: Recipient,
        message: String,
        type: String = "chat"
    ) {
        self.messageID = messageID
        self.timestamp = timestamp
        self.sender = sender
        self.recipient = recipient
        self.message = message
        self.type = type
    }

    package init(_ r: WireReader) throws {
        try self.init(r) { try Recipient($0.child("recipient")) }
    }

    /// A message of the history: `{message_id, timestamp, sender, info}` (to everyone).
    package init(kept r: WireReader) throws {
        try self.init(r) { _ in Recipient(type: .broadcast) }
    }

    /// The members both share; `recipient` reads (or makes) the recipient,
    /// in its place between `sender` and `info`.
    private init(_ r: WireReader, recipient: (WireReader) throws -> Recipient) throws {
        try r.requireObject()
        messageID = try r.string("message_id")
        timestamp = try r.int64("timestamp")
        sender = try PeerRef(r.child("sender"))
        self.recipient = try recipient(r)
        let info = r.child("info")
        try info.requireObject()
        message = try info.string("message")
        type = try info.string("type")
        shadowed = try r.optionalBool("shadowed") ?? false
    }
}
