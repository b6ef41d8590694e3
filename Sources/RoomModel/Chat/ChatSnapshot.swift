import RoomWire

// The `chat` section of a `RoomSnapshot` (format 2, 1.2 section 19):
//
//     {"messages":[Message], "pinned": Message|null}
//
// A Message is `{"id", "timestamp", "sender": ActorRef, "message", "type"}`
// (kept messages are to everyone). The history is saved newest first up
// to `chatBudgetBytes` of JSON (a room's state must fit in one value on
// the bus) and written oldest first: a takeover keeps the newest messages.

extension RoomSnapshot {
    /// The most JSON the chat history takes in a snapshot; older messages are left out.
    public static let chatBudgetBytes = 512 * 1024
}

extension JSONWriter {
    /// The `chat` section; returns the ids of the messages it kept (the
    /// `reactions` section keeps only theirs).
    mutating func chatSection(_ messages: [ChatMessage], pinned: ChatMessage?) -> Set<String> {
        let kept = JSONWriter.newest(messages, within: RoomSnapshot.chatBudgetBytes) { $0.chatMessage($1) }
        beginObject()
        key("messages")
        beginArray()
        for encoded in kept { raw(encoded) }
        endArray()
        key("pinned")
        if let pinned { chatMessage(pinned) } else { null() }
        endObject()
        return Set(messages.suffix(kept.count).lazy.map(\.id))
    }

    private mutating func chatMessage(_ message: ChatMessage) {
        beginObject()
        field("id", message.id)
        field("timestamp", message.timestamp)
        key("sender")
        actor(message.sender)
        field("message", message.message)
        field("type", message.type)
        endObject()
    }
}

/// The `chat` section read back.
struct ChatSnapshot {
    var messages: [ChatMessage] = []
    var pinned: ChatMessage?

    init() {}

    init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        var ids: Set<String> = []
        messages = try r.objects("messages") { m throws(RoomSnapshotError) in
            let message = try ChatMessage(m)
            if !ids.insert(message.id).inserted { throw m.failure("id", "duplicate message id \"\(message.id)\"") }
            return message
        }
        pinned = try r.nullable("pinned") { k throws(RoomSnapshotError) in try r.object(k, ChatMessage.init) }
    }
}

extension ChatMessage {
    fileprivate init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        try self.init(
            id: r.string("id"),
            timestamp: r.int64("timestamp"),
            sender: r.object("sender", ActorRef.init),
            recipient: .broadcast,
            message: r.string("message"),
            type: r.string("type")
        )
    }
}
