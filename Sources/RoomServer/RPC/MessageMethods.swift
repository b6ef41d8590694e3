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
        let message = try info.requiredString("message")
        let type = try info.string("type") ?? "chat"
        let target: RoomRegistry.MessageTarget
        switch (try params.string("peer_id"), try params.stringArray("roles")) {
        case (.some, .some): throw .invalidParams("peer_id and roles: give one, not both")
        case (let id?, nil): target = .peer(id)
        case (nil, let roles?):
            if roles.isEmpty { throw .invalidParams("roles: must not be empty") }
            target = .roles(roles)
        case (nil, nil): target = .everyone
        }
        let (chat, deliveries, held) = try registry.post(from: peer, message: message, type: type, to: target)
        fanOut(deliveries)
        return Self.encode { w in
            w.field("message_id", chat.id)
            w.field("timestamp", chat.timestamp)
            if held { w.field("held", true) }  // section 31: waiting for a moderator
        }
    }
}
