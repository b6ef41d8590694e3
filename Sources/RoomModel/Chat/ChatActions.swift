/// Chat history, deletion and pinning (PROTOCOL.md section 19): what peers
/// (and the REST API) do with a room's `ChatHistory`.
extension RoomRegistry {
    /// The messages a `join` (or resume) carries: the newest min(50, `history_size`).
    public static let joinHistoryLimit = 50

    /// `join`'s `chat`: the newest messages, oldest first, and the pin.
    /// The history as the operator (and a moderator) reads it: every message.
    public func chatOnJoin(_ room: Room) -> (messages: [ChatMessage], pinned: ChatMessage?) {
        let limit = min(Self.joinHistoryLimit, settings.chat.historySize)
        return (room.chat.page(before: nil, limit: limit)?.messages ?? [], room.chat.pinned)
    }

    /// `join`'s `chat`: the newest messages `peer` may read.
    public func chatOnJoin(_ room: Room, for peer: Peer) -> (messages: [ChatMessage], pinned: ChatMessage?) {
        let limit = min(Self.joinHistoryLimit, settings.chat.historySize)
        return (
            room.chat.page(before: nil, limit: limit, including: visibility(for: peer))?.messages ?? [],
            room.chat.pinned
        )
    }

    /// Which messages of the history `peer` reads (section 31): all but the
    /// shadowed ones of other users, unless it moderates the chat.
    func visibility(for peer: Peer) -> (ChatMessage) -> Bool {
        if canModerateChat(peer) { return { _ in true } }
        let user = peer.userID.rawValue
        return { !$0.shadowed || $0.sender.userID == user }
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

    /// `chat-history` as `peer` reads it (section 31: shadowed messages are
    /// its own user's and the moderators').
    public func chatHistory(
        for peer: Peer,
        before: String?,
        limit: Int
    ) throws(RoomError) -> (messages: [ChatMessage], more: Bool) {
        guard let page = peer.room.chat.page(before: before, limit: limit, including: visibility(for: peer)) else {
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
    /// `on-message-pin` with null when something was pinned. O(1) in what
    /// the room held: the history's storage and the messages' reactions are
    /// taken out whole and returned in `ChatClear.dropped`, which the caller
    /// frees (RoomServer: off the service thread); the feed lists the newest
    /// cleared ids, at most its per-second bound.
    public func clearChat(by initiator: Initiator, in room: Room) throws(RoomError) -> ChatClear {
        try requirePermission(initiator, \.moderateChat, "moderateChat")
        if let feed = room.feed {
            feed.deleted(room.chat.newestIDs(FeedRecorder.maxItemsPerSecond), at: clock.nowMillis())
        }
        let history = room.chat.clear()
        let reactions = room.reactions.dropMessages()  // taps stay; not pushed: on-chat-clear says it
        let by = ActorRef(initiator)
        let everyone = room.peersInJoinOrder
        var deliveries = [Delivery(.chatClear(clearedBy: by), to: everyone)]
        if room.chat.pinned != nil {
            room.chat.pin(nil)
            deliveries.append(Delivery(.messagePin(nil, pinnedBy: by), to: everyone))
        }
        feedState(room)
        return ChatClear(
            deliveries: deliveries.nonEmpty,
            dropped: ChatClear.Dropped(history: history, reactions: reactions)
        )
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

/// What `clearChat` did: the pushes to fan out, and what it took out of the
/// room.
public struct ChatClear {
    public var deliveries: [Delivery]
    /// The cleared history's storage and its messages' reactions, whole:
    /// about what the room held (10,000 messages with 100,000 reaction
    /// counts are ~200,000 allocations). Nothing reads it; its owner lets it
    /// go where freeing it stalls nobody (RoomServer's `Graveyard`: its
    /// queue, not the service thread).
    public var dropped: Dropped

    /// Both, taken apart: the caller's `dropped` is then the only reference
    /// to the storage (to hand over with `consume`).
    public consuming func parts() -> (deliveries: [Delivery], dropped: Dropped) { (deliveries, dropped) }

    /// Opaque: the storage `ChatHistory.clear` and `Reactions.dropMessages` gave up.
    public struct Dropped: Sendable {
        var history: ChatHistory.Dropped
        var reactions: Reactions.Dropped

        /// Lets go of about `budget` allocations of it (at least one step);
        /// false once nothing is left. Freed a batch at a time, so that
        /// whoever frees it can pace the frees: 200,000 small blocks freed
        /// at once from another thread made the service thread's next large
        /// `malloc` consolidate them all (glibc's fastbins; ~10 ms).
        public mutating func release(upTo budget: Int) -> Bool {
            reactions.release(upTo: budget) || history.release(upTo: budget)
        }
    }
}
