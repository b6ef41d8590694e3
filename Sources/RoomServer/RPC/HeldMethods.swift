import RoomModel
import RoomWire

/// Messages held for review (1.3, PROTOCOL.md section 31): the
/// moderators' `held-list`, `message-approve` and `message-reject`.
extension Dispatcher {
    static var heldMethods: [String: Method] {
        [
            "held-list": .joined(Dispatcher.heldList),
            "message-approve": .joined(Dispatcher.messageApprove),
            "message-reject": .joined(Dispatcher.messageReject),
        ]
    }

    /// `{messages: [Message…], more?}` oldest first, cut to the chat answer
    /// budget (`more: true` when newer ones were left out: review the
    /// oldest, then ask again).
    func heldList(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let held = try registry.heldMessages(in: call.room, by: .peer(call.peer))
        let budget = chatAnswerBudget
        return Self.encode { w in w.heldMessages(held, within: budget) }
    }

    func messageApprove(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let id = try params.requiredString("message_id")
        fanOut(try registry.approveHeld(id, by: .peer(call.peer), in: call.room))
        logger.info(
            "held message approved",
            metadata: ["room": "\(call.room.id)", "peer": "\(call.peer.id)", "message": "\(id.prefix(64))"]
        )
        return Self.empty
    }

    func messageReject(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let id = try params.requiredString("message_id")
        let reason = try params.string("reason")
        fanOut(try registry.rejectHeld(id, reason: reason, by: .peer(call.peer), in: call.room))
        logger.info(
            "held message rejected",
            metadata: ["room": "\(call.room.id)", "peer": "\(call.peer.id)", "message": "\(id.prefix(64))"]
        )
        return Self.empty
    }
}

extension JSONWriter {
    /// `messages` (the oldest of `held` whose encoding fits in `budget`) and
    /// `more: true` when newer ones were left out: the held list's answer,
    /// over WebSocket (`held-list`) and REST (`GET …/held`) alike.
    mutating func heldMessages(_ held: [ChatMessage], within budget: Int) {
        key("messages")
        let cut = leadingArray(held, within: budget, size: Self.encodedSize) { $0.chatMessage($1) }
        if cut { field("more", true) }
    }

    private static func encodedSize(_ chat: ChatMessage) -> Int {
        var w = JSONWriter(reserving: chat.message.utf8.count + 256)
        w.chatMessage(chat)
        return w.bytes.count
    }
}
