import RoomWire

// The `chat` section of a `RoomSnapshot` (format 2, 1.2 section 19):
//
//     {"messages":[Message], "pinned": Message|null}
//
// A Message is `{"id", "timestamp", "sender": ActorRef, "message", "type",
// "shadowed"?: true}`
// (kept messages are to everyone). The whole history is saved, oldest
// first (1.3: nothing is cut from a room's saved state; the bus keeps a
// large state in chunks, RoomCluster's `StateLayout`).

extension JSONWriter {
    /// The `chat` section.
    mutating func chatSection(_ messages: [ChatMessage], pinned: ChatMessage?) {
        beginObject()
        key("messages")
        beginArray()
        for message in messages { chatMessage(message) }
        endArray()
        key("pinned")
        if let pinned { chatMessage(pinned) } else { null() }
        endObject()
    }

    /// The `held` section (1.3, section 31): the messages held for review,
    /// oldest first, each a Message of the `chat` section.
    mutating func heldSection(_ messages: [ChatMessage]) {
        beginArray()
        for message in messages { chatMessage(message) }
        endArray()
    }

    private mutating func chatMessage(_ message: ChatMessage) {
        beginObject()
        field("id", message.id)
        field("timestamp", message.timestamp)
        key("sender")
        actor(message.sender)
        field("message", message.message)
        field("type", message.type)
        if message.shadowed { field("shadowed", true) }  // absent: false (1.3)
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
    init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        try self.init(
            id: r.string("id"),
            timestamp: r.int64("timestamp"),
            sender: r.object("sender", ActorRef.init),
            recipient: .broadcast,
            message: r.string("message"),
            type: r.string("type"),
            shadowed: r.has("shadowed") ? r.bool("shadowed") : false
        )
    }
}
