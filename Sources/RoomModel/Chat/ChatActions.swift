/// Chat history, deletion and pinning (PROTOCOL.md section 19): what peers
/// (and the REST API) do with a room's `ChatHistory`.
extension RoomRegistry {
    /// The messages a `join` (or resume) carries: the newest min(50, `history_size`).
    public static let joinHistoryLimit = 50

    /// `join`'s `chat`: the newest messages, oldest first, and the pin.
    public func chatOnJoin(_ room: Room) -> (messages: [ChatMessage], pinned: ChatMessage?) {
        let limit = min(Self.joinHistoryLimit, settings.chat.historySize)
        return (room.chat.page(before: nil, limit: limit)?.messages ?? [], room.chat.pinned)
    }

    /// `chat-history`: anyone in the room (`view_and_polls_only` peers too).
    public func chatHistory(
        in room: Room,
        before: String?,
        limit: Int
    ) throws(RoomError) -> (messages: [ChatMessage], more: Bool) {
        guard let page = room.chat.page(before: before, limit: limit) else {
            throw RoomError(.messageNotFound, "before: message \"\(before ?? "")\" is not in the room's history")
        }
        return page
    }

    /// `message-delete`: the sender (any peer of the same `user_id`) or
    /// `moderateChat`. Every peer gets `on-message-delete`, then
    /// `on-message-pin` with null when it was the pinned message.
    public func deleteMessage(_ id: String, by initiator: Initiator, in room: Room) throws(RoomError) -> [Delivery] {
        guard let message = room.chat.message(id) else {
            throw RoomError(.messageNotFound, "message_id: message \"\(id)\" is not in the room's history")
        }
        if case .peer(let peer) = initiator {
            try peer.requireUnrestricted("message-delete")
            let own = message.sender.userID == peer.userID.rawValue && message.sender.peerID != nil
            if !own && !peer.role.permissions.moderateChat {
                throw RoomError(
                    .permissionDenied,
                    "permission denied: message \"\(id)\" is another peer's and the role lacks moderateChat"
                )
            }
        }
        _ = room.chat.delete(id)
        room.feed?.deleted([id], at: clock.nowMillis())
        room.reactions.drop(message: id)  // not pushed: on-message-delete says it
        let by = ActorRef(initiator)
        record(.messageDeleted(room: RoomRef(room), messageID: id, by: by))
        let everyone = room.peersInJoinOrder
        var deliveries = [Delivery(.messageDelete(messageID: id, deletedBy: by), to: everyone)]
        if room.chat.pinned?.id == id {
            room.chat.pin(nil)
            deliveries.append(Delivery(.messagePin(nil, pinnedBy: by), to: everyone))
        }
        feedState(room)
        return deliveries.nonEmpty
    }

    /// `chat-clear` (`moderateChat`): every peer gets `on-chat-clear`, then
    /// `on-message-pin` with null when something was pinned.
    public func clearChat(by initiator: Initiator, in room: Room) throws(RoomError) -> [Delivery] {
        try requirePermission(initiator, \.moderateChat, "moderateChat")
        let cleared = room.chat.messages.map(\.id)  // O(the history): what the clear removes
        room.feed?.deleted(cleared, at: clock.nowMillis())
        room.chat.clear()
        room.reactions.drop(messages: cleared)  // each one's own; taps stay; not pushed: on-chat-clear says it
        let by = ActorRef(initiator)
        let everyone = room.peersInJoinOrder
        var deliveries = [Delivery(.chatClear(clearedBy: by), to: everyone)]
        if room.chat.pinned != nil {
            room.chat.pin(nil)
            deliveries.append(Delivery(.messagePin(nil, pinnedBy: by), to: everyone))
        }
        feedState(room)
        return deliveries.nonEmpty
    }

    /// `message-pin` (`moderateChat`): pins a message of the history (nil
    /// unpins); every peer gets `on-message-pin`.
    public func pinMessage(_ id: String?, by initiator: Initiator, in room: Room) throws(RoomError) -> [Delivery] {
        try requirePermission(initiator, \.moderateChat, "moderateChat")
        var message: ChatMessage?
        if let id {
            guard let found = room.chat.message(id) else {
                throw RoomError(.messageNotFound, "message_id: message \"\(id)\" is not in the room's history")
            }
            message = found
        }
        room.chat.pin(message)
        feedState(room)
        return [Delivery(.messagePin(message, pinnedBy: ActorRef(initiator)), to: room.peersInJoinOrder)].nonEmpty
    }
}
