import RoomConfig

/// The checks before a peer enters a room, one function for `join` and
/// `preview` (PROTOCOL.md section 13) so that the two cannot drift apart.
/// In this order: room_id mismatch 40002, role claim 40108 (not in the
/// template, or `maxPeerCount` -1), for a join the sizes of `name` and
/// `data` 41300, locked 40003, not found 40001, banned 40301, and unless a join resumes
/// a peer already in the room, full 40901 and role limit 40900.
extension RoomRegistry {
    /// What a request is checked for.
    enum Admission {
        /// A new peer.
        case join
        /// `join` with `peer_id`: a peer still in the room, taken over (no room for it is needed).
        case resume
        /// `preview`: the token and room checks alone.
        case preview
    }

    /// The role `request` claims and its room (nil: not created yet), or the first check it fails.
    func admit(_ request: JoinRequest, for admission: Admission) throws(RoomError) -> (role: Role, room: Room?) {
        if let requested = request.requestedRoomID, requested != request.roomID {
            throw RoomError(.roomIDMismatch, "room_id \"\(requested)\" differs from the token's room_id")
        }
        guard let role = template.role(request.roleName) else {
            throw RoomError(.roleClaimInvalid, "role \"\(request.roleName)\" is not in the template")
        }
        if role.maxPeerCount == -1 {
            throw RoomError(.roleClaimInvalid, "role \"\(role.name)\" may not join (maxPeerCount -1)")
        }
        if admission != .preview {
            try checkSize(request.name, field: "name", limit: settings.limits.maxNameBytes)
            try checkSize(request.data, field: "data", limit: settings.limits.maxMetadataBytes)
        }
        if locks.contains(request.roomID) {
            throw RoomError(.roomLocked, "room \"\(request.roomID)\" is locked")
        }
        let existing = rooms[request.roomID]
        if existing == nil, !settings.room.autoCreate, !settings.room.predefined.contains(request.roomID.rawValue) {
            throw RoomError(.roomNotFound, "room \"\(request.roomID)\" does not exist")
        }
        if let room = existing { try checkBan(of: request.userID, in: room) }
        if admission != .resume, let room = existing {
            if settings.room.maxPeers > 0, room.peerCount >= settings.room.maxPeers {
                throw RoomError(.roomFull, "room \"\(room.id)\" is full (max_peers \(settings.room.maxPeers))")
            }
            if role.maxPeerCount > 0, room.count(ofRole: role.name) >= role.maxPeerCount {
                throw RoomError(.roleLimitReached, "role \"\(role.name)\" is full (maxPeerCount \(role.maxPeerCount))")
            }
        }
        return (role, existing)
    }
}
