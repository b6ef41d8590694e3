/// Messages held for review (1.3, PROTOCOL.md section 31): which messages
/// `settings.chat.hold` stops, and their approval or rejection by a
/// `moderateChat` peer (or the REST API).
extension RoomRegistry {
    /// Whether `settings.chat.hold` holds this broadcast to everyone by
    /// `sender` (not for `moderateChat` peers; a shadowed message is never
    /// held). `first_message` counts every message to everyone when sent.
    func holds(_ message: String, from sender: Peer) -> Bool {
        let hold = settings.chat.hold
        guard hold.isOn, !canModerateChat(sender) else { return false }
        var held = false
        if hold.firstMessage, sender.room.held.firstMessage(of: sender.userID) { held = true }
        if !held, hold.links, !Links.hosts(in: message).isEmpty { held = true }
        if !held, !hold.words.isEmpty, holdFilter.matches(message) { held = true }
        return held
    }

    /// Holds `chat` (its sender's message to everyone): every `moderateChat`
    /// peer gets `on-message-held`; 40907 when `HeldMessages.capacity` wait already.
    func hold(_ chat: ChatMessage, in room: Room) throws(RoomError) -> [Delivery] {
        guard room.held.hold(chat) else {
            throw RoomError(
                .tooMany,
                "broadcast: \(HeldMessages.capacity) messages of room \"\(room.id)\" wait for review already"
            )
        }
        record(.messageHeld(room: RoomRef(room), message: chat), at: chat.timestamp)
        let moderators = room.peersInJoinOrder.filter(canModerateChat)
        return [Delivery(.messageHeld(chat), to: moderators)].nonEmpty
    }

    /// `held-list` (`moderateChat`): the held messages, oldest first.
    public func heldMessages(in room: Room, by initiator: Initiator) throws(RoomError) -> [ChatMessage] {
        try requirePermission(initiator, \.moderateChat, "moderateChat")
        return room.held.all
    }

    /// `message-approve` (`moderateChat`): the held message goes to
    /// everyone as `on-broadcast` now (its timestamp the approval time, its
    /// id the same; never back to the peer that sent it) and into the
    /// history and the feed; its sender's user's peers get `on-message-review`.
    public func approveHeld(_ id: String, by initiator: Initiator, in room: Room) throws(RoomError) -> [Delivery] {
        try requirePermission(initiator, \.moderateChat, "moderateChat")
        guard var chat = room.held.take(id) else { throw Self.notHeld(id) }
        chat.timestamp = clock.nowMillis()
        if let dropped = room.chat.append(chat, capacity: settings.chat.historySize) {
            room.reactions.drop(message: dropped.id)
        }
        room.feed?.chat(chat, at: chat.timestamp)
        record(.messageReviewed(room: RoomRef(room), message: chat, approved: true, reason: nil), at: chat.timestamp)
        let everyone = room.peersInJoinOrder
        var deliveries: [Delivery]
        if let sender = chat.sender.peerID.flatMap({ room.peer(PeerID($0)) }) {
            deliveries = [Delivery(.broadcast(chat), to: everyone, excluding: sender)]
        } else {
            deliveries = [Delivery(.broadcast(chat), to: everyone)]
        }
        deliveries += review(chat, approved: true, reason: nil, in: room)
        return deliveries.nonEmpty
    }

    /// `message-reject` (`moderateChat`): the held message is dropped; its
    /// sender's user's peers get `on-message-review` with `reason`.
    public func rejectHeld(
        _ id: String,
        reason: String?,
        by initiator: Initiator,
        in room: Room
    ) throws(RoomError) -> [Delivery] {
        try requirePermission(initiator, \.moderateChat, "moderateChat")
        if let reason { try checkSize(reason, field: "reason", limit: Self.maxReasonBytes) }
        guard let chat = room.held.take(id) else { throw Self.notHeld(id) }
        record(.messageReviewed(room: RoomRef(room), message: chat, approved: false, reason: reason))
        return review(chat, approved: false, reason: reason, in: room).nonEmpty
    }

    private func review(_ chat: ChatMessage, approved: Bool, reason: String?, in room: Room) -> [Delivery] {
        let own = room.peersInJoinOrder.filter { $0.userID.rawValue == chat.sender.userID }
        return [Delivery(.messageReview(messageID: chat.id, approved: approved, reason: reason), to: own)]
    }

    private static func notHeld(_ id: String) -> RoomError {
        RoomError(.messageNotFound, "message_id: message \"\(id.prefix(64))\" is not held for review")
    }
}
