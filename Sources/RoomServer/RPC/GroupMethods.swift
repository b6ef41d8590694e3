import RoomModel
import RoomWire

/// Groups, the hand raise among them (`_handraise`; PROTOCOL.md section 6).
extension Dispatcher {
    static var groupMethods: [String: Method] {
        [
            "group-join": .joined(Dispatcher.groupJoin),
            "group-leave": .joined(Dispatcher.groupLeave),
            "group-add": .joined(Dispatcher.groupAdd),
            "group-remove": .joined(Dispatcher.groupRemove),
        ]
    }

    func groupJoin(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        try changeGroup(params, call, add: true, ofOther: false)
    }

    func groupLeave(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        try changeGroup(params, call, add: false, ofOther: false)
    }

    func groupAdd(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        try changeGroup(params, call, add: true, ofOther: true)
    }

    func groupRemove(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        try changeGroup(params, call, add: false, ofOther: true)
    }

    /// `group-join`/`group-leave` (the caller) and `group-add`/`group-remove` (`peer_id`).
    private func changeGroup(
        _ params: Params,
        _ call: JoinedCall,
        add: Bool,
        ofOther: Bool
    )
        throws(RoomError) -> [UInt8]
    {
        let peer = call.peer
        let name = try params.id("name", required: true)!
        let target = ofOther ? try registry.groupTarget(by: peer, try params.requiredPeerID("peer_id")) : peer
        fanOut(
            add
                ? try registry.addToGroup(by: .peer(peer), target, group: name)
                : try registry.removeFromGroup(by: .peer(peer), target, group: name)
        )
        return groups(of: target)
    }

    private func groups(of peer: Peer) -> [UInt8] {
        Self.encode { w in
            w.key("groups")
            w.strings(peer.groups)
        }
    }
}
