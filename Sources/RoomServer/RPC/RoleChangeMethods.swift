import RoomModel
import RoomWire

/// Role changes: polite, forced and bulk (PROTOCOL.md section 6).
extension Dispatcher {
    static var roleChangeMethods: [String: Method] {
        [
            "role-change-request": .joined(Dispatcher.roleChangeRequest),
            "role-change": .joined(Dispatcher.roleChange),
            "role-change-reject": .joined(Dispatcher.roleChangeReject),
        ]
    }

    func roleChangeRequest(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let role = try params.requiredString("role")
        let force = try params.bool("force")
        if let roles = try params.stringArray("roles") {
            if params.has("requested_for") { throw .invalidParams("requested_for and roles: give one, not both") }
            if roles.isEmpty { throw .invalidParams("roles: must not be empty") }
            if force == false { throw .invalidParams("force: a bulk role change (roles) is always forced") }
            let (changed, effects) = try registry.bulkRoleChange(by: .peer(peer), in: peer.room, roles: roles, to: role)
            apply(effects, &call)
            return Self.encode { w in
                w.key("changed")
                w.strings(changed.map(\.id))
            }
        }
        let target = try params.requiredPeerID("requested_for")
        let (outcome, effects) = try registry.requestRoleChange(
            by: .peer(peer),
            in: peer.room,
            targetID: target,
            role: role,
            force: force ?? false
        )
        apply(effects, &call)
        guard case .requested(let token) = outcome else { return Self.empty }
        return Self.encode { w in w.field("token", token) }
    }

    func roleChange(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        apply(try registry.acceptRoleChange(peer, token: try params.requiredString("token")), &call)
        return Self.encode { w in
            w.key("peer")
            w.peer(peer, withTracks: true)
        }
    }

    func roleChangeReject(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        apply(try registry.rejectRoleChange(call.peer, token: try params.requiredString("token")), &call)
        return Self.empty
    }
}
