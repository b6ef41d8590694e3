/// Chat messages (`broadcast`, REST `send-message`; PROTOCOL.md section 5);
/// those to everyone are kept in the room's history (section 19, Chat/).
extension RoomRegistry {
    public enum MessageTarget: Equatable {
        case everyone
        case peer(String)
        case roles([String])
    }

    /// `broadcast` by a peer: returns the message (id, timestamp) and its deliveries.
    public func broadcast(
        from sender: Peer,
        message: String,
        type: String,
        to target: MessageTarget
    )
        throws(RoomError) -> (message: ChatMessage, deliveries: [Delivery])
    {
        let posted = try post(from: sender, message: message, type: type, to: target)
        return (posted.message, posted.deliveries)
    }

    /// `broadcast` by a peer, with section 31's rules: a shadow-banned
    /// sender's message is shadowed; a message to everyone that
    /// `settings.chat.hold` stops is held (`held`: it reached only the
    /// moderators' `on-message-held`).
    public func post(
        from sender: Peer,
        message: String,
        type: String,
        to target: MessageTarget,
        shadow: Bool = false
    )
        throws(RoomError) -> (message: ChatMessage, deliveries: [Delivery], held: Bool)
    {
        try sender.requireUnrestricted("broadcast")
        try checkSize(message, field: "info.message", limit: settings.limits.maxChatBytes)
        try checkChatRules(sender, message: message, toEveryone: target == .everyone)
        // `shadow`: the app's hook shadowed it (section 30); like a shadow chat ban, it wins over holding.
        let shadowed = shadow || isShadowed(sender)
        if target == .everyone, !shadowed, holds(message, from: sender) {
            let chat = ChatMessage(
                id: ids.next(.message),
                timestamp: clock.nowMillis(),
                sender: ActorRef(sender),
                recipient: .broadcast,
                message: message,
                type: type
            )
            let deliveries = try hold(chat, in: sender.room)
            noteSent(sender)
            return (chat, deliveries, true)
        }
        let sent = try send(
            from: .peer(sender),
            in: sender.room,
            message: message,
            type: type,
            to: target,
            shadowed: shadowed
        )
        if target == .everyone { noteSent(sender) }
        return (sent.message, sent.deliveries, false)
    }

    /// A message from a peer or from the server (REST `send-message`); never
    /// delivered back to a sending peer except as an explicit direct message.
    /// `shadowed` (a shadow-banned sender, section 31): it reaches only the
    /// sender's user's peers (as any message) and `moderateChat` peers (with
    /// `shadowed: true`), stays out of the feed, and is kept in the history
    /// marked so.
    public func send(
        from sender: Initiator,
        in room: Room,
        message: String,
        type: String,
        to target: MessageTarget,
        shadowed: Bool = false
    )
        throws(RoomError) -> (message: ChatMessage, deliveries: [Delivery])
    {
        try checkSize(message, field: "info.message", limit: settings.limits.maxChatBytes)
        var sendingPeer: Peer?
        if case .peer(let peer) = sender { sendingPeer = peer }
        let everyone = room.peersInJoinOrder
        let recipients: [Peer]
        let recipient: ChatMessage.Recipient
        switch target {
        case .everyone:
            recipients = everyone  // the sender is skipped by the delivery, not by a copy
            recipient = .broadcast
        case .peer(let id):
            guard let peer = room.peer(PeerID(id)) else {
                throw RoomError(.peerNotFound, "peer_id \"\(id)\" is not in the room")
            }
            recipients = [peer]
            recipient = .peer(id)
        case .roles(let names):
            if names.isEmpty { throw .invalidParams("roles: must not be empty") }
            for name in names where template.role(name) == nil {
                throw RoomError(.roleNotFound, "roles: no role named \"\(name)\"")
            }
            let wanted = Set(names)
            recipients = everyone.filter { $0 !== sendingPeer && wanted.contains($0.role.name) }
            recipient = .roles(names)
        }
        let chat = ChatMessage(
            id: ids.next(.message),
            timestamp: clock.nowMillis(),
            sender: ActorRef(sender),
            recipient: recipient,
            message: message,
            type: type,
            shadowed: shadowed
        )
        if shadowed, let sendingPeer {
            if target == .everyone, let dropped = room.chat.append(chat, capacity: settings.chat.historySize) {
                room.reactions.drop(message: dropped.id)
            }
            let seeing = recipients.filter {
                $0 !== sendingPeer && ($0.userID == sendingPeer.userID || canModerateChat($0))
            }
            let moderators = seeing.filter(canModerateChat)
            let own = seeing.filter { !canModerateChat($0) }
            return (
                chat,
                [Delivery(.broadcastShadowed(chat), to: moderators), Delivery(.broadcast(chat), to: own)].nonEmpty
            )
        }
        if target == .everyone, let dropped = room.chat.append(chat, capacity: settings.chat.historySize) {
            room.reactions.drop(message: dropped.id)  // the ring's oldest went, and its reactions (section 20)
        }
        if target == .everyone { room.feed?.chat(chat, at: chat.timestamp) }  // never a shadowed one (returned above)
        if target == .everyone, let sendingPeer {
            return (chat, [Delivery(.broadcast(chat), to: recipients, excluding: sendingPeer)].nonEmpty)
        }
        return (chat, [Delivery(.broadcast(chat), to: recipients)].nonEmpty)
    }
}
