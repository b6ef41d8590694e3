import RoomConfig

/// Large rooms (PROTOCOL.md section 12): above `large_room_threshold` peers,
/// joins and leaves of peers whose role may not publish are batched into a
/// periodic `room-state` — `{peer_count}` for everyone, the lists only for
/// the roles that moderate, at most 100 entries per list per push — and
/// `join` lists only the publishers plus up to 100 peers of the caller's own
/// role. So a join costs the same in a room of 10,000 viewers as in a room of
/// ten, and bringing N viewers in costs O(N) bytes, not O(N²). Each room's
/// batch is its `RoomStateBatch`; the rooms due are the `RoomStateSchedule`.
extension RoomRegistry {
    public static let largeRoomOwnRoleListing = 100
    /// Entries per list per `room-state` push.
    public static let roomStatePage = 100

    /// Roles that moderate (`changeRole` or `removeOthers`) get the lists.
    static func moderates(_ role: Role) -> Bool { role.permissions.changeRole || role.permissions.removeOthers }

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
            listed += room.peers(withRole: peer.role.name).lazy.filter { $0 !== peer }.prefix(
                Self.largeRoomOwnRoleListing
            )
        }
        return listed
    }

    /// One tick: in each room where peers came or went, `room-state
    /// {peer_count}` to everyone who does not moderate, and to the moderators
    /// the count with the next page (≤ 100 each) of joins and leaves. Rooms
    /// with entries left over stay for the next tick, which sends the
    /// moderators the next page (and the others nothing, unless more changed).
    public func tickRoomState() -> [Delivery] {
        var deliveries: [Delivery] = []
        for id in roomStates.take() {
            guard let room = rooms[id] else { continue }
            var moderators: [Peer] = []
            var others: [Peer] = []
            for peer in room.peersInJoinOrder {
                if Self.moderates(peer.role) { moderators.append(peer) } else { others.append(peer) }
            }
            let (countChanged, joined, left) = room.roomState.nextPage(
                peerCount: room.peerCount,
                size: Self.roomStatePage,
                moderated: !moderators.isEmpty
            )
            if countChanged, !others.isEmpty {
                deliveries.append(Delivery(.roomState(peerCount: room.peerCount, joined: nil, left: nil), to: others))
            }
            if !moderators.isEmpty, countChanged || !joined.isEmpty || !left.isEmpty {
                deliveries.append(
                    Delivery(.roomState(peerCount: room.peerCount, joined: joined, left: left), to: moderators)
                )
            }
            if room.roomState.hasPending { roomStates.schedule(room) }
        }
        return deliveries
    }
}
