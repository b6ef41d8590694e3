/// Groups (`_handraise` is the hand-raise group). PROTOCOL.md section 6.
extension RoomRegistry {
    public static let maxGroupsPerPeer = 16
    public static let handRaiseGroup = "_handraise"

    /// `group-add`/`group-remove` of a peer by id: the permission is checked
    /// before the peer is looked up (40300 before 40400).
    public func groupTarget(by caller: Peer, _ targetID: PeerID) throws(RoomError) -> Peer {
        if targetID != caller.id { try requirePermission(.peer(caller), \.changeRole, "changeRole") }
        guard let target = caller.room.peer(targetID) else {
            throw RoomError(.peerNotFound, "peer_id: peer \"\(targetID)\" is not in the room")
        }
        return target
    }

    /// `group-join` (self) / `group-add` (others, needs `changeRole`).
    public func addToGroup(by initiator: Initiator, _ target: Peer, group: String) throws(RoomError) -> [Delivery] {
        if case .peer(let caller) = initiator {
            if caller === target {
                try caller.requireUnrestricted("group-join")
                try checkChatBan(caller, now: clock.nowMillis())  // a chat ban stops joining groups (40302)
            } else {
                try requirePermission(initiator, \.changeRole, "changeRole")
            }
        }
        if target.groups.contains(group) { return [] }
        if target.groups.count >= Self.maxGroupsPerPeer {
            throw RoomError(.trackConflict, "at most \(Self.maxGroupsPerPeer) groups per peer")
        }
        target.groups.append(group)
        return peerUpdate(target, changed: [.groups])
    }

    /// `group-leave` (self) / `group-remove` (others, needs `changeRole`).
    public func removeFromGroup(by initiator: Initiator, _ target: Peer, group: String) throws(RoomError) -> [Delivery]
    {
        if case .peer(let caller) = initiator {
            if caller === target {
                try caller.requireUnrestricted("group-leave")
            } else {
                try requirePermission(initiator, \.changeRole, "changeRole")
            }
        }
        guard let index = target.groups.firstIndex(of: group) else { return [] }
        target.groups.remove(at: index)
        return peerUpdate(target, changed: [.groups])
    }
}
