import RoomModel
import RoomProtocol
import RoomWire

/// Chat history, deletion and pinning (PROTOCOL.md section 19).
extension Dispatcher {
    static var chatMethods: [String: Method] {
        [
            "chat-history": .joined(Dispatcher.chatHistory),
            "message-delete": .joined(Dispatcher.messageDelete),
            "chat-clear": .joined(Dispatcher.chatClear),
            "message-pin": .joined(Dispatcher.messagePin),
        ]
    }

    /// The most JSON of messages one answer carries (`join`'s chat, a
    /// `chat-history` page): a quarter of `max_outbound_bytes`, so that an
    /// answer never makes its caller a slow consumer (4008). A message of
    /// `max_chat_bytes` can take 6 times that escaped: a page of such messages
    /// stops early, with `more: true` (and holds at least one message).
    var chatAnswerBudget: Int { max(1, registry.settings.limits.maxOutboundBytes / 4) }

    func chatHistory(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let before = try params.string("before")
        let limit = try params.int("limit", in: 1...200) ?? 50
        let page = try registry.chatHistory(for: call.peer, before: before, limit: limit)
        let budget = chatAnswerBudget
        let showShadow = registry.canModerateChat(call.peer)
        return Self.encode { w in
            w.key("messages")
            let cut = w.chatMessages(page.messages, within: budget, showShadow: showShadow)
            w.field("more", page.more || cut)
        }
    }

    func messageDelete(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let id = try params.requiredString("message_id")
        fanOut(try registry.deleteMessage(id, by: .peer(peer), in: peer.room))
        return Self.encode { _ in }
    }

    /// The clear takes the room's history and its messages' reactions out
    /// whole (O(1)); they are freed on the graveyard's queue, not here
    /// (issue 34: freeing them held every room of the node).
    func chatClear(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let (deliveries, dropped) = try registry.clearChat(by: .peer(peer), in: peer.room).parts()
        graveyard.bury(consume dropped)
        fanOut(deliveries)
        return Self.encode { _ in }
    }

    func messagePin(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let id = try params.requiredStringOrNull("message_id", null: "null unpins")
        fanOut(try registry.pinMessage(id, by: .peer(peer), in: peer.room))
        return Self.encode { _ in }
    }
}

extension JSONWriter {
    /// `join`'s `chat: {messages, pinned, state}`: the newest of `messages`
    /// within `budget` bytes, and the joiner's chat state (section 22).
    mutating func chatOnJoin(
        _ chat: (messages: [ChatMessage], pinned: ChatMessage?),
        state: ChatState,
        within budget: Int,
        showShadow: Bool = false
    ) {
        object { w in
            w.key("messages")
            _ = w.chatMessages(chat.messages, within: budget, showShadow: showShadow)
            w.key("pinned")
            w.chatMessage(chat.pinned)
            w.key("state")
            w.chatState(state)
        }
    }

    /// An array of the newest of `messages` (oldest first) whose encoding
    /// fits in `budget` bytes, and always the newest one (so that paging with
    /// `before` goes on); true when older ones were left out.
    mutating func chatMessages(_ messages: [ChatMessage], within budget: Int, showShadow: Bool = false) -> Bool {
        let encoded = JSONWriter.newest(messages, within: budget, keepingOne: true) {
            $0.chatMessage($1, showShadow: showShadow)
        }
        beginArray()
        for bytes in encoded { raw(bytes) }
        endArray()
        return encoded.count < messages.count
    }
}
