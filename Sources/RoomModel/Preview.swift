import RoomConfig

/// `preview` (PROTOCOL.md section 13): the token and room checks of `join`,
/// without joining. Nothing changes and nothing is pushed.
extension RoomRegistry {
    /// What `preview` answers: the room's session now (nil when there is none).
    public struct PreviewOutcome {
        public var room: Room?
        public var role: Role
    }

    /// The checks `join` makes before it adds a peer, in the same order and
    /// with the same codes (40002, 40108, 40003, 40001, 40901, 40900).
    public func preview(_ request: JoinRequest) throws(RoomError) -> PreviewOutcome {
        if let requested = request.requestedRoomID, requested != request.roomID {
            throw RoomError(.roomIDMismatch, "room_id \"\(requested)\" differs from the token's room_id")
        }
        guard let role = template.role(request.roleName) else {
            throw RoomError(.roleClaimInvalid, "role \"\(request.roleName)\" is not in the template")
        }
        if role.maxPeerCount == -1 {
            throw RoomError(.roleClaimInvalid, "role \"\(role.name)\" may not join (maxPeerCount -1)")
        }
        if locks.contains(request.roomID) {
            throw RoomError(.roomLocked, "room \"\(request.roomID)\" is locked")
        }
        let existing = rooms[request.roomID]
        if existing == nil, !settings.room.autoCreate, !settings.room.predefined.contains(request.roomID) {
            throw RoomError(.roomNotFound, "room \"\(request.roomID)\" does not exist")
        }
        if let room = existing {
            if settings.room.maxPeers > 0, room.peerCount >= settings.room.maxPeers {
                throw RoomError(.roomFull, "room \"\(room.id)\" is full (max_peers \(settings.room.maxPeers))")
            }
            if role.maxPeerCount > 0, room.count(ofRole: role.name) >= role.maxPeerCount {
                throw RoomError(.roleLimitReached, "role \"\(role.name)\" is full (maxPeerCount \(role.maxPeerCount))")
            }
        }
        return PreviewOutcome(room: existing, role: role)
    }
}
