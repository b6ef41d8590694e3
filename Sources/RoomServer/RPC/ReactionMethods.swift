import RoomModel
import RoomWire

/// Reactions and tap votes (PROTOCOL.md section 20). The calls answer at
/// once; `on-reactions` comes from the reactions tick (Schedule.swift).
extension Dispatcher {
    static var reactionMethods: [String: Method] {
        [
            "react": .joined(Dispatcher.react),
            "unreact": .joined(Dispatcher.unreact),
            "reactions-get": .joined(Dispatcher.reactionsGet),
        ]
    }

    func react(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let target = try params.requiredString("target")
        let type = try params.requiredString("type")
        let count = try params.int("count", in: Int.min...Int.max) ?? 1  // the model names the range
        let result = try registry.react(call.peer, target: target, type: type, count: count)
        return Self.encode { w in w.reactionCountFields(result) }
    }

    func unreact(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let target = try params.requiredString("target")
        let type = try params.requiredString("type")
        let result = try registry.unreact(call.peer, target: target, type: type)
        return Self.encode { w in w.reactionCountFields(result) }
    }

    func reactionsGet(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        guard let targets = try params.stringArray("targets") else { throw .invalidParams("targets: required") }
        let page = try registry.reactionsPage(for: call.peer, targets: targets, budget: chatAnswerBudget)
        return Self.encode { w in
            w.reactionCounts(page.counts)
            if page.more { w.field("more", true) }
        }
    }
}
