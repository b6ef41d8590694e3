/// Large rooms (PROTOCOL.md section 12): above `large_room_threshold` peers,
/// joins and leaves of peers whose role may not publish are batched into a
/// periodic `room-state`, and `join` lists only the publishers plus up to 100
/// peers of the caller's own role — so a join costs the same in a room of
/// 10,000 viewers as in a room of ten.
extension RoomRegistry {
    public static let largeRoomOwnRoleListing = 100

    /// More than `large_room_threshold` peers, the one joining included.
    func isLarge(_ room: Room) -> Bool { room.peerCount > settings.room.largeRoomThreshold }

    /// Every publisher, then up to 100 peers of `peer`'s own role (join order within each, `peer` excluded).
    func largeRoomSnapshot(for peer: Peer) -> [Peer] {
        let room = peer.room
        var listed: [Peer] = []
        for name in template.roleNames where template.roles[name]!.publishParams.canPublish {
            listed += room.peers(withRole: name).lazy.filter { $0 !== peer }
        }
        listed.sort { $0.sequence < $1.sequence }
        if !peer.role.publishParams.canPublish {
            listed += room.peers(withRole: peer.role.name).lazy.filter { $0 !== peer }.prefix(Self.largeRoomOwnRoleListing)
        }
        return listed
    }

    /// One `room-state` per room with pending joins or leaves, to every peer.
    public func tickRoomState() -> [Delivery] {
        var deliveries: [Delivery] = []
        for id in roomStateRooms {
            guard let room = rooms[id], !(room.pendingJoins.isEmpty && room.pendingLeaves.isEmpty) else { continue }
            deliveries.append(Delivery(.roomState(peerCount: room.peerCount, joined: room.pendingJoins,
                                                  left: room.pendingLeaves), to: room.peersInJoinOrder))
            room.pendingJoins.removeAll()
            room.pendingLeaves.removeAll()
        }
        roomStateRooms.removeAll()
        return deliveries
    }
}
