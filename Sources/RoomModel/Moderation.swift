import RoomProtocol

/// Muting others, removing peers, ending rooms (PROTOCOL.md section 6).
extension RoomRegistry {
    /// `track-update-request`: mute is enforced (needs `mute`); unmute is only
    /// asked of the owner (needs `unmute`).
    public func requestTrackUpdate(
        by initiator: Initiator,
        in room: Room,
        targetID: PeerID,
        trackID: String,
        mute: Bool
    ) throws(RoomError) -> Effects {
        if mute {
            try requirePermission(initiator, \.mute, "mute")
        } else {
            try requirePermission(initiator, \.unmute, "unmute")
        }
        guard let target = room.peer(targetID) else {
            throw RoomError(.peerNotFound, "requested_for: peer \"\(targetID)\" is not in the room")
        }
        guard let index = target.tracks.firstIndex(where: { $0.trackID == trackID }) else {
            throw RoomError(.trackNotFound, "track_id: peer \"\(targetID)\" has no track \"\(trackID)\"")
        }
        var effects = Effects()
        if mute, !target.tracks[index].mute {
            target.tracks[index].mute = true
            effects.deliveries += trackChanged(target, target.tracks[index])
        }
        effects.send(.trackUpdateRequest(requestedBy: initiator, trackID: trackID, mute: mute), to: [target])
        return effects
    }

    /// `change-track-mute-state-request`: every matching track of every other
    /// peer. Returns how many tracks were muted (`value` true: those that were
    /// unmuted) or asked to unmute (`value` false: those that are muted).
    public func changeTrackMuteState(
        by initiator: Initiator,
        in room: Room,
        value: Bool,
        filter: TrackFilter
    )
        throws(RoomError) -> (tracksAffected: Int, effects: Effects)
    {
        try requirePermission(initiator, value ? \.mute : \.unmute, value ? "mute" : "unmute")
        if let roles = filter.roles {
            for name in roles where template.role(name) == nil {
                throw RoomError(.roleNotFound, "roles: no role named \"\(name)\"")
            }
        }
        let roles = filter.roles.map(Set.init)
        var affected = 0
        var effects = Effects()
        for peer in room.peersInJoinOrder {
            if case .peer(let caller) = initiator, caller === peer { continue }
            if let roles, !roles.contains(peer.role.name) { continue }
            var touched = false
            for index in peer.tracks.indices
            where filter.matches(peer.tracks[index]) && peer.tracks[index].mute != value {
                touched = true
                affected += 1
                if value {
                    peer.tracks[index].mute = true
                    effects.deliveries += trackChanged(peer, peer.tracks[index])
                }
            }
            if touched {
                effects.send(
                    .changeTrackMuteStateRequest(requestedBy: initiator, filter: filter, value: value),
                    to: [peer]
                )
            }
        }
        return (affected, effects)
    }

    /// `peer-leave-request`: the target is told and disconnected (4001); the
    /// others see it leave with reason "peer kicked".
    public func removePeer(
        by initiator: Initiator,
        in room: Room,
        targetID: PeerID,
        reason: String,
        leaveReason: LeaveReason = .peerKicked
    ) throws(RoomError) -> Effects {
        try requirePermission(initiator, \.removeOthers, "removeOthers")
        guard let target = room.peer(targetID) else {
            throw RoomError(.peerNotFound, "requested_for: peer \"\(targetID)\" is not in the room")
        }
        try checkRank(initiator, over: [target], "peer-leave-request")
        var effects = Effects()
        effects.send(.peerLeaveRequest(requestedBy: initiator, reason: reason, roomEnd: false), to: [target])
        effects.disconnects.append(Disconnect(peer: target, reason: .removed))
        effects.deliveries += leave(target, reason: leaveReason)
        return effects
    }

    /// `end-room`: every peer, the caller included, is told and disconnected
    /// (4002); with `lock` later joins to this room id fail with 40003.
    public func endRoom(by initiator: Initiator, _ room: Room, reason: String, lock: Bool) throws(RoomError) -> Effects
    {
        try requirePermission(initiator, \.endRoom, "endRoom")
        var effects = Effects()
        let everyone = room.peersInJoinOrder
        effects.send(.peerLeaveRequest(requestedBy: initiator, reason: reason, roomEnd: true), to: everyone)
        endLiveStream(room, by: nil, reason: "room ended")  // before the leaves, as 1.1 told the operator
        stopBroadcasts(room)
        for peer in everyone {
            record(.peerLeft(room: RoomRef(room), peer: ActorRef(peer), reason: "room ended"))
            effects.disconnects.append(Disconnect(peer: peer, reason: .roomEnded))
            room.remove(peer)
            forget(peer)
        }
        endSession(room)
        if lock { locks.lock(room.id) }
        record(.roomEnded(room: RoomRef(room), by: ActorRef(initiator), reason: reason, lock: lock))
        return effects
    }

    /// REST `unlock`: a room id that is not locked is fine too.
    public func unlock(_ roomID: RoomID) {
        locks.unlock(roomID)
    }
}

/// `roles` / `type` / `source` filters of `change-track-mute-state-request`.
public struct TrackFilter: Sendable, Equatable {
    public var roles: [String]?
    public var kind: TrackType?
    public var source: TrackSource?

    public init(roles: [String]? = nil, kind: TrackType? = nil, source: TrackSource? = nil) {
        self.roles = roles
        self.kind = kind
        self.source = source
    }

    func matches(_ track: Track) -> Bool {
        (kind == nil || track.type == kind) && (source == nil || track.source == source)
    }
}
