import RoomConfig
import RoomModel
import RoomWire

/// `broadcast`: messages to everyone, one peer, or roles (PROTOCOL.md section 5).
extension Dispatcher {
    static var messageMethods: [String: Method] {
        [
            "broadcast": .joined(Dispatcher.broadcast)
        ]
    }

    func broadcast(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let info = try params.requiredObject("info")
        var message = try info.requiredString("message")
        var type = try info.string("type") ?? "chat"
        let target: RoomRegistry.MessageTarget
        switch (try params.string("peer_id"), try params.stringArray("roles")) {
        case (.some, .some): throw .invalidParams("peer_id and roles: give one, not both")
        case (let id?, nil): target = .peer(id)
        case (nil, let roles?):
            if roles.isEmpty { throw .invalidParams("roles: must not be empty") }
            target = .roles(roles)
        case (nil, nil): target = .everyone
        }
        // Section 30: the app's hook decides first (every recipient form; `info` as it would be pushed).
        try peer.requireUnrestricted("broadcast")
        let limits = registry.settings.limits
        let sent = (message: message, type: type)
        guard
            let rewrite = try hook(
                .message,
                room: peer.room.id,
                &call.hook,
                on: call.connection,
                ids: call.connection.logMetadata,
                check: { Self.hookInfoProblem($0.info, limits: limits) },
                data: { w in
                    w.field("room_id", peer.room.id)
                    w.field("session_id", peer.room.sessionID)
                    w.key("peer")
                    w.peerRef(peer)
                    w.key("recipient")
                    w.object { w in
                        switch target {
                        case .everyone: w.field("type", "broadcast")
                        case .peer(let id):
                            w.field("type", "peer")
                            w.field("peer_id", id)
                        case .roles(let roles):
                            w.field("type", "roles")
                            w.key("roles")
                            w.strings(roles)
                        }
                    }
                    w.key("info")
                    w.object { w in
                        w.field("message", sent.message)
                        w.field("type", sent.type)
                    }
                }
            )
        else { return [] }  // it waits for its hook
        if let replaced = rewrite.info {
            message = replaced["message"]?.stringValue ?? message
            type = replaced["type"]?.stringValue ?? "chat"
        }
        let (chat, deliveries, held) = try registry.post(
            from: peer,
            message: message,
            type: type,
            to: target,
            shadow: rewrite.shadow
        )
        fanOut(deliveries)
        return Self.encode { w in
            w.field("message_id", chat.id)
            w.field("timestamp", chat.timestamp)
            if held { w.field("held", true) }  // section 31: waiting for a moderator
        }
    }

    /// Section 30: what in a hook's `info` is over a sent message's limits (a failed hook), or nil.
    static func hookInfoProblem(_ info: JSON?, limits: LimitSettings) -> String? {
        guard let info else { return nil }
        guard let message = info["message"]?.stringValue else { return "info.message: not a string" }
        if message.isEmpty { return "info.message: empty" }
        if message.utf8.count > limits.maxChatBytes { return "info.message: over max_chat_bytes" }
        if let type = info["type"], type.stringValue == nil { return "info.type: not a string" }
        if info.bytes.count > limits.maxMessageBytes { return "info: over max_message_bytes" }
        return nil
    }
}
