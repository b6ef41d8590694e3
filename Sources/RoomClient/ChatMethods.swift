import RoomWire

// Chat history, deletion and pinning (PROTOCOL.md section 19). Same
// conventions as Methods.swift and Models.swift.

extension RoomClient {
    // MARK: - Chat history

    /// A page of the room's history (`chat-history {before?, limit}`): the
    /// `limit` messages before `before` (nil: the newest), oldest first.
    ///
    /// - Throws: `rpc` with 40405 (`before` is not in the history), -32602
    ///   (`limit` outside 1...200).
    public func chatHistory(
        before: String? = nil,
        limit: Int = 50,
        timeout: Duration? = nil
    ) async throws -> ChatPage {
        var params: [JSON.Member] = [.init("limit", .int(limit))]
        if let before { params.append(.init("before", .string(before))) }
        let result = try await call("chat-history", .object(params), timeout: timeout)
        return try decode("chat-history", result) { try ChatPage(WireReader($0, path: "")) }
    }

    /// Deletes a message of the history (`message-delete {message_id}`): one's
    /// own, or any with `moderateChat`. Every peer gets
    /// ``RoomEvent/messageDeleted(messageID:deletedBy:)``.
    ///
    /// - Throws: `rpc` with 40405 (not in the history, or deleted), 40300.
    public func deleteMessage(_ messageID: String, timeout: Duration? = nil) async throws {
        _ = try await call("message-delete", ["message_id": .string(messageID)], timeout: timeout)
    }

    /// Empties the history (`chat-clear {}`, `moderateChat`). Every peer gets
    /// ``RoomEvent/chatCleared(clearedBy:)``.
    public func clearChat(timeout: Duration? = nil) async throws {
        _ = try await call("chat-clear", timeout: timeout)
    }

    /// Pins a message of the history, or unpins with nil (`message-pin
    /// {message_id}`, `moderateChat`). Every peer gets
    /// ``RoomEvent/messagePinned(_:pinnedBy:)``.
    ///
    /// - Throws: `rpc` with 40405, 40300.
    public func pinMessage(_ messageID: String?, timeout: Duration? = nil) async throws {
        _ = try await call("message-pin", ["message_id": messageID.map(JSON.string) ?? .null], timeout: timeout)
    }
}

/// `join`'s `chat`: the newest messages of the history (at most 50), oldest
/// first, the pinned message, and the joiner's chat state (section 22).
public struct ChatBackfill: Sendable, Equatable {
    /// Oldest first; each has ``Recipient/Kind/broadcast``.
    public var messages: [Message]
    /// The pinned message, if any.
    public var pinned: Message?
    /// The joiner's chat state: paused, slow mode, its own chat ban.
    public var state: ChatState

    /// Builds a backfill, e.g. an expected value in a test.
    public init(messages: [Message] = [], pinned: Message? = nil, state: ChatState = ChatState()) {
        self.messages = messages
        self.pinned = pinned
        self.state = state
    }

    init(_ r: WireReader) throws {
        try r.requireObject()
        messages = try r.elements("messages").map { try Message(kept: $0) }
        pinned = r.has("pinned") ? try Message(kept: r.child("pinned")) : nil
        state = r.has("state") ? try ChatState(r.child("state")) : ChatState()
    }
}

/// A page of `chat-history`.
public struct ChatPage: Sendable, Equatable {
    /// Oldest first.
    public var messages: [Message]
    /// True when older messages remain (ask again with `before:` the first one's id).
    public var more: Bool

    /// Builds a page.
    public init(messages: [Message], more: Bool) {
        self.messages = messages
        self.more = more
    }

    init(_ r: WireReader) throws {
        try r.requireObject()
        messages = try r.elements("messages").map { try Message(kept: $0) }
        more = try r.bool("more")
    }
}
