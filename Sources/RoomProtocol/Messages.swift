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
        until = r.has("until") ? try r.int64("until") : nil
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
