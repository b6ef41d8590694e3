import RoomConfig

/// The result of `role-change-request` for one peer.
public enum RoleChangeOutcome {
    /// The target already has the role: `{}`, nothing sent.
    case unchanged
    /// Forced: applied at once.
    case applied
    /// Polite: the target was asked; answer with this token.
    case requested(token: String)
}

/// Role changes (PROTOCOL.md section 6). Pending polite requests are kept
/// by `RoleChangeRequests`.
extension RoomRegistry {
    /// `role-change-request` for one peer (`requested_for`).
    public func requestRoleChange(
        by initiator: Initiator,
        in room: Room,
        targetID: PeerID,
        role roleName: String,
        force: Bool
    ) throws(RoomError) -> (RoleChangeOutcome, Effects) {
        try requirePermission(initiator, \.changeRole, "changeRole")
        guard let role = template.role(roleName) else {
            throw RoomError(.roleNotFound, "role: no role named \"\(roleName)\"")
        }
        guard let target = room.peer(targetID) else {
            throw RoomError(.peerNotFound, "requested_for: peer \"\(targetID)\" is not in the room")
        }
        if target.role.name == role.name { return (.unchanged, Effects()) }
        try checkRoleLimit(role, in: room, adding: 1)
        if force { return (.applied, applyRole(role, to: target)) }
        let token = ids.next(.roleChange)
        let expiresAt = clock.nowMillis() + Int64(settings.roleChange.requestTTLS) * 1000
        roleChanges.add(
            RoleChangeRequest(
                token: token,
                requester: initiator,
                target: target,
                role: role.name,
                expiresAt: expiresAt,
                entry: schedule(RoleChangeExpiry(token: token), at: expiresAt)
            )
        )
        var effects = Effects()
        effects.send(.roleChangeRequest(requestedBy: initiator, role: role.name, token: token), to: [target])
        return (.requested(token: token), effects)
    }

    /// `role-change` by the target: applies the request behind `token`.
    public func acceptRoleChange(_ peer: Peer, token: String) throws(RoomError) -> Effects {
        var request = try roleChanges.take(token, for: peer, now: clock.nowMillis())
        cancel(request.entry)
        guard let role = template.role(request.role) else {
            throw RoomError(.roleNotFound, "role \"\(request.role)\" is gone")
        }
        if peer.role.name == role.name { return Effects() }
        do {
            try checkRoleLimit(role, in: peer.room, adding: 1)
        } catch {
            request.entry = schedule(RoleChangeExpiry(token: token), at: request.expiresAt)
            roleChanges.add(request)  // still answerable (e.g. with role-change-reject)
            throw error
        }
        return applyRole(role, to: peer, accepting: request.stageRequestID)
    }

    /// `role-change-reject` by the target: the requester is told.
    public func rejectRoleChange(_ peer: Peer, token: String) throws(RoomError) -> Effects {
        let request = try roleChanges.take(token, for: peer, now: clock.nowMillis())
        cancel(request.entry)
        var effects = rejected(request, reason: .rejected)
        effects.deliveries += stageInvitationAnswered(request, rejected: true)
        return effects
    }

    /// Bulk `role-change-request` (`roles` + `role`): every peer whose role is
    /// listed, the caller included; all or nothing.
    public func bulkRoleChange(
        by initiator: Initiator,
        in room: Room,
        roles: [String],
        to roleName: String
    )
        throws(RoomError) -> (changed: [Peer], effects: Effects)
    {
        try requirePermission(initiator, \.changeRole, "changeRole")
        guard let role = template.role(roleName) else {
            throw RoomError(.roleNotFound, "role: no role named \"\(roleName)\"")
        }
        for name in roles where template.role(name) == nil {
            throw RoomError(.roleNotFound, "roles: no role named \"\(name)\"")
        }
        if roles.contains(role.name) {
            throw RoomError(.bulkTargetInSources, "role \"\(role.name)\" is one of the source roles")
        }
        let sources = Set(roles)
        let targets = room.peersInJoinOrder.filter { sources.contains($0.role.name) }
        if !targets.isEmpty { try checkRoleLimit(role, in: room, adding: targets.count) }
        var effects = Effects()
        for target in targets {
            let applied = applyRole(role, to: target)
            effects.deliveries += applied.deliveries
        }
        return (targets, effects)
    }

    // MARK: applying

    /// Moves `target` to `role`: drops tracks it may no longer publish, sends
    /// its new policy, tells everyone, then fixes track visibility both ways;
    /// its stage requests end as `done`, but the one whose invitation it
    /// accepts (`accepting`), which goes `live` (Stage/StageActions.swift).
    func applyRole(_ role: Role, to target: Peer, accepting stageRequestID: String? = nil) -> Effects {
        let room = target.room
        var effects = Effects()
        let oldRole = target.role
        // 1. Tracks the new role may not publish.
        let subscribersBefore = room.subscribers(of: target)
        for track in target.tracks
        where !role.publishParams.allows(Self.publishKind(kind: track.type, source: track.source)) {
            _ = room.removeTrack(track.trackID, from: target)
            effects.send(.trackRemove(peerID: target.id, track), to: subscribersBefore)
        }
        // 2. The change itself.
        room.changeRole(of: target, to: role)
        record(.roleChanged(room: RoomRef(room), peer: ActorRef(target), oldRole: oldRole.name))
        effects.send(.policyChange(role: role.name), to: [target])
        effects.deliveries += peerUpdate(target, changed: [.role], wasPublisher: oldRole.publishParams.canPublish)
        // 3. What the target sees now.
        for other in room.others(than: target) {
            let sawBefore = oldRole.subscribes(to: other.role.name)
            let seesNow = role.subscribes(to: other.role.name)
            if sawBefore == seesNow { continue }
            for track in other.tracks {
                effects.send(
                    seesNow ? .trackAdd(peerID: other.id, track) : .trackRemove(peerID: other.id, track),
                    to: [target]
                )
            }
        }
        // 4. Who sees the target's (remaining) tracks now.
        if !target.tracks.isEmpty {
            var gained: [Peer] = []
            var lost: [Peer] = []
            for other in room.others(than: target) {
                let sawBefore = other.role.subscribes(to: oldRole.name)
                let seesNow = other.role.subscribes(to: role.name)
                if sawBefore && !seesNow { lost.append(other) }
                if !sawBefore && seesNow { gained.append(other) }
            }
            for track in target.tracks {
                effects.send(.trackAdd(peerID: target.id, track), to: gained)
                effects.send(.trackRemove(peerID: target.id, track), to: lost)
            }
        }
        // 5. The call-in queue.
        effects.deliveries += stageRoleChanged(target, accepting: stageRequestID)
        return effects
    }

    // MARK: helpers

    func rejected(_ request: RoleChangeRequest, reason: RejectReason) -> Effects {
        var effects = Effects()
        guard case .peer(let requester) = request.requester, requester.room.peer(requester.id) === requester else {
            return effects
        }
        effects.send(
            .roleChangeRejected(
                token: request.token,
                requestedFor: request.target.id,
                role: request.role,
                reason: reason
            ),
            to: [requester]
        )
        return effects
    }

    /// `maxPeerCount`: -1 nobody, 0 no limit, else room for `adding` more.
    func checkRoleLimit(_ role: Role, in room: Room, adding: Int) throws(RoomError) {
        if role.maxPeerCount == -1 {
            throw RoomError(.roleLimitReached, "role \"\(role.name)\" may not be taken (maxPeerCount -1)")
        }
        if role.maxPeerCount > 0, room.count(ofRole: role.name) + adding > role.maxPeerCount {
            throw RoomError(.roleLimitReached, "role \"\(role.name)\" is full (maxPeerCount \(role.maxPeerCount))")
        }
    }
}
