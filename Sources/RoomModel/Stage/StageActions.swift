import RoomConfig
import RoomProtocol

/// The call-in queue (PROTOCOL.md section 26): a viewer asks to come on
/// stage, the moderating peers see one queue, a producer invites (a polite
/// role change, section 6), the caller accepts and is live. The state is
/// the room's `StageQueue`; `on-stage-queue` is coalesced per room
/// (`tickStage`, every `settings.stage.interval_ms`).
extension RoomRegistry {
    /// The most blocked users a room keeps (40907 beyond).
    public static let maxStageBlocks = 10_000
    /// The longest `reason` of a `stage-decline` (41300 beyond).
    public static let maxStageReasonBytes = 256

    /// What `join` and resume results carry about the stage.
    public enum StageJoinInfo {
        /// A moderating peer: `stage:{waiting}`.
        case waiting(Int)
        /// The peer of a waiting or invited request: `stage:{request}`.
        case request(StageRequest)
    }

    /// A peer whose role moderates (`changeRole` or `removeOthers`) and that
    /// is not `view_and_polls_only`: it sees, lists and acts on the queue.
    public func moderatesStage(_ peer: Peer) -> Bool { !peer.viewOnly && Self.moderates(peer.role) }

    /// `settings.stage.enabled`, and `guest_role` a role of the template (a
    /// template that gives no `guest_role` and has no role `guest` runs with
    /// the queue off; one that names a missing role does not start).
    public var stageIsOn: Bool { settings.stage.enabled && template.role(settings.stage.guestRole) != nil }

    /// `join`/resume results' `stage`: nil for a peer that neither moderates
    /// nor is the peer of a waiting or invited request (and when the stage is off).
    public func stageJoinInfo(for peer: Peer) -> StageJoinInfo? {
        guard stageIsOn else { return nil }
        let stage = peer.room.stage
        if moderatesStage(peer) { return .waiting(stage.waitingCount) }
        if let open = stage.openRequest(of: peer.userID), open.peerID == peer.id { return .request(open) }
        return nil
    }

    // MARK: calls

    /// `stage-request {note?}`: a peer whose role neither moderates nor is
    /// `guest_role` (`view_and_polls_only` peers too). One open request per
    /// user: a second call returns it, its note replaced when given (and its
    /// peer the caller's, while it waits).
    public func requestStage(by peer: Peer, note: String?) throws(RoomError) -> (StageRequest, [Delivery]) {
        try requireStage()
        if Self.moderates(peer.role) || peer.role.name == settings.stage.guestRole {
            throw RoomError(
                .permissionDenied,
                "permission denied: role \"\(peer.role.name)\" may not ask for the stage"
                    + " (a moderating role or settings.stage.guest_role)"
            )
        }
        if let note {
            try checkSize(note, field: "note", limit: settings.stage.noteBytes)
            if wordFilter.matches(note) { throw RoomError(.chatClosed, "note: refused by settings.chat.blocked_words") }
            try checkLinks(note, field: "note")
        }
        let room = peer.room
        let now = clock.nowMillis()
        if room.stage.isBlocked(peer.userID, at: now) {
            throw RoomError(.stageBlocked, "user_id: \"\(peer.userID)\" is blocked from the call-in queue")
        }
        if let current = room.stage.openRequest(of: peer.userID) {
            let newNote = note.map { $0 != current.note } ?? false
            let newPeer = current.status == .waiting && current.peerID != peer.id
            if newNote || newPeer {
                room.stage.renew(
                    current.id,
                    note: note,
                    peer: newPeer ? ActorRef(peer) : current.peer,
                    peerID: newPeer ? peer.id : current.peerID,
                    at: now
                )
                stageSchedule.changed(room)
            }
            return (room.stage.request(current.id)!, [])
        }
        let limit = settings.stage.maxWaiting
        if room.stage.waitingCount >= limit {
            throw RoomError(.tooMany, "too many waiting: \(limit) requests wait (settings.stage.max_waiting)")
        }
        let request = StageRequest(
            id: ids.next(.stage),
            peer: ActorRef(peer),
            peerID: peer.id,
            userID: peer.userID,
            note: note ?? "",
            requestedAt: now,
            updatedAt: now,
            sequence: room.stage.nextSequence()
        )
        room.stage.add(request)
        stageSchedule.changed(room)
        let made = room.stage.request(request.id)!
        return (made, stageStatus(made, in: room))
    }

    /// `stage-withdraw {}`: the caller's user's waiting or invited request
    /// becomes `withdrawn` (its open invitation's token goes with it).
    public func withdrawStage(by peer: Peer) throws(RoomError) -> [Delivery] {
        try requireStage()
        let room = peer.room
        guard let request = room.stage.openRequest(of: peer.userID) else {
            throw RoomError(.stageRequestNotFound, "no waiting or invited stage request of user \"\(peer.userID)\"")
        }
        return endStage(request.id, as: .withdrawn, in: room)
    }

    /// `stage-list {status, offset, limit}` (moderating): waiting requests
    /// by position, the others newest `updated_at` first; `total` before paging.
    public func listStage(
        by initiator: Initiator,
        in room: Room,
        status: StageStatus,
        offset: Int,
        limit: Int
    ) throws(RoomError) -> (requests: [StageRequest], total: Int) {
        try requireStageModerator(initiator, "stage-list")
        return room.stage.list(status, offset: offset, limit: limit)
    }

    /// `stage-invite {request_id, role?}` (moderating, `changeRole`): section
    /// 6's polite role change of the request's peer to `role` (default
    /// `guest_role`); the request becomes `invited`. Returns the token.
    public func inviteToStage(
        by initiator: Initiator,
        in room: Room,
        requestID: String,
        role roleName: String?
    ) throws(RoomError) -> (request: StageRequest, token: String, effects: Effects) {
        try requireStageModerator(initiator, "stage-invite")
        try requirePermission(initiator, \.changeRole, "changeRole")
        let request = try stageRequest(requestID, in: room, allowed: [.waiting])
        let name = roleName ?? settings.stage.guestRole
        guard let role = template.role(name) else {
            throw RoomError(.roleNotFound, "role: no role named \"\(name)\"")
        }
        guard let target = room.peer(request.peerID) else {
            throw RoomError(.peerNotFound, "request_id: its peer \"\(request.peerID)\" is not in the room")
        }
        if target.role.name == role.name {
            throw .invalidParams("role: peer \"\(target.id)\" has role \"\(role.name)\" already")
        }
        try checkRoleLimit(role, in: room, adding: 1)
        let now = clock.nowMillis()
        let token = ids.next(.roleChange)
        let expiresAt = now + Int64(settings.roleChange.requestTTLS) * 1000
        roleChanges.add(
            RoleChangeRequest(
                token: token,
                requester: initiator,
                target: target,
                role: role.name,
                expiresAt: expiresAt,
                entry: schedule(RoleChangeExpiry(token: token), at: expiresAt),
                stageRequestID: request.id
            )
        )
        var inviter: ActorRef?
        if case .peer(let peer) = initiator { inviter = ActorRef(peer) }
        room.stage.invite(request.id, role: role.name, by: inviter, token: token, endsAt: expiresAt, at: now)
        stageSchedule.changed(room)
        var effects = Effects()
        effects.send(.roleChangeRequest(requestedBy: initiator, role: role.name, token: token), to: [target])
        let invited = room.stage.request(request.id)!
        effects.deliveries += stageStatus(invited, in: room)
        return (invited, token, effects)
    }

    /// `stage-decline {request_id, reason?}` (moderating): a waiting or
    /// invited request becomes `declined`.
    public func declineStage(
        by initiator: Initiator,
        in room: Room,
        requestID: String,
        reason: String?
    ) throws(RoomError) -> [Delivery] {
        try requireStageModerator(initiator, "stage-decline")
        if let reason { try checkSize(reason, field: "reason", limit: Self.maxStageReasonBytes) }
        let request = try stageRequest(requestID, in: room, allowed: [.waiting, .invited])
        return endStage(request.id, as: .declined, in: room)
    }

    /// `stage-block {user_id, duration_s?}` (moderating): `stage-request` is
    /// 40303 for the user until unblocked, `duration_s` or the session's
    /// end; its waiting or invited request becomes `declined`.
    public func blockFromStage(
        by initiator: Initiator,
        in room: Room,
        userID: UserID,
        durationS: Int?
    ) throws(RoomError) -> [Delivery] {
        try requireStageModerator(initiator, "stage-block")
        if userID.rawValue.isEmpty { throw .invalidParams("user_id: must not be empty") }
        if room.stage.blocks[userID] == nil, room.stage.blocks.count >= Self.maxStageBlocks {
            throw RoomError(.tooMany, "user_id: \(Self.maxStageBlocks) users are blocked in this room already")
        }
        let now = clock.nowMillis()
        var block = StageBlock(until: durationS.map { now + Int64($0) * 1000 })
        if let until = block.until {
            block.entry = schedule(StageBlockEnd(room: room, userID: userID, until: until), at: until)
        }
        if let old = room.stage.block(userID, block) { cancel(old.entry) }
        guard let open = room.stage.openRequest(of: userID) else { return [] }
        return endStage(open.id, as: .declined, in: room)
    }

    /// `stage-unblock {user_id}` (moderating); nothing for a user not blocked.
    public func unblockFromStage(by initiator: Initiator, in room: Room, userID: UserID) throws(RoomError) {
        try requireStageModerator(initiator, "stage-unblock")
        if userID.rawValue.isEmpty { throw .invalidParams("user_id: must not be empty") }
        if let old = room.stage.unblock(userID) { cancel(old.entry) }
    }

    /// A page of the blocks, by user id, and how many there are (REST). A
    /// timed block leaves with its deadline, so every block listed is in
    /// force; the page costs its own entries, not the room's blocks.
    public func stageBlocks(
        in room: Room,
        offset: Int,
        limit: Int
    ) -> (blocks: [(userID: UserID, until: Int64?)], total: Int) {
        (room.stage.blocks(from: offset, limit: limit), room.stage.blocks.count)
    }

    // MARK: the push

    /// The most bytes of encoded requests and ids one `on-stage-queue`
    /// carries: `StageQueue.pushBudget`, at most a quarter of `max_outbound_bytes`.
    public var stagePushBudget: Int {
        max(1, min(StageQueue.pushBudget, settings.limits.maxOutboundBytes / 4))
    }

    /// One stage tick: each room with changes gets one `on-stage-queue` for
    /// its moderating peers, within `stagePushBudget` (the rest next tick).
    public func tickStage() -> [Delivery] {
        var deliveries: [Delivery] = []
        let budget = stagePushBudget
        for room in stageSchedule.takeRooms(from: rooms, where: { $0.stage.hasChanges }) {
            let (changed, removed) = room.stage.takeChanges(budget: budget)
            if room.stage.hasChanges { stageSchedule.changed(room) }  // the rest, next tick
            let push = Push.stageQueue(changed: changed, removed: removed, waiting: room.stage.waitingCount)
            deliveries.append(Delivery(push, to: stageModerators(in: room)))
        }
        return deliveries.nonEmpty
    }

    /// The moderating peers of `room`, in join order, through its per-role
    /// index (not a scan of the room).
    func stageModerators(in room: Room) -> [Peer] {
        var recipients: [Peer] = []
        for name in template.roleNames {
            guard let role = template.roles[name], Self.moderates(role) else { continue }
            recipients += room.peers(withRole: name).lazy.filter { !$0.viewOnly }
        }
        recipients.sort { $0.sequence < $1.sequence }
        return recipients
    }

    // MARK: links to role changes, leaves and the session

    /// A role change of `peer`: its live request and its waiting or invited
    /// one end as `done`, but the invitation it accepts (`accepting`), which
    /// goes `live`.
    func stageRoleChanged(_ peer: Peer, accepting: String?) -> [Delivery] {
        let room = peer.room
        var deliveries: [Delivery] = []
        if let live = room.stage.liveRequest(of: peer.id), live.id != accepting {
            deliveries += endStage(live.id, as: .done, in: room)
        }
        if let open = room.stage.openRequest(of: peer.userID), open.peerID == peer.id, open.id != accepting {
            deliveries += endStage(open.id, as: .done, in: room)
        }
        if let accepting, room.stage.request(accepting)?.status == .invited {
            room.stage.goLive(accepting, peer: ActorRef(peer), at: clock.nowMillis())
            stageSchedule.changed(room)
            deliveries += stageStatus(room.stage.request(accepting)!, in: room)
        }
        return deliveries
    }

    /// `peer` left (an explicit `leave` at once, a lost connection after its
    /// grace): its live request is `done`, its waiting or invited one `withdrawn`.
    func stagePeerLeft(_ peer: Peer) -> [Delivery] {
        let room = peer.room
        var deliveries: [Delivery] = []
        if let live = room.stage.liveRequest(of: peer.id) { deliveries += endStage(live.id, as: .done, in: room) }
        if let open = room.stage.openRequest(of: peer.userID), open.peerID == peer.id {
            deliveries += endStage(open.id, as: .withdrawn, in: room)
        }
        return deliveries
    }

    /// A stage invitation was answered by its expiry (back to `waiting` at
    /// its place) or a `role-change-reject` (`declined`).
    func stageInvitationAnswered(_ invitation: RoleChangeRequest, rejected: Bool) -> [Delivery] {
        guard let id = invitation.stageRequestID, !invitation.target.hasLeft else { return [] }
        let room = invitation.target.room
        guard let request = room.stage.request(id), request.status == .invited, request.token == invitation.token
        else { return [] }
        if rejected { return endStage(id, as: .declined, in: room) }
        return putBackInQueue(id, in: room)
    }

    /// An invited request waits again, at its old place.
    func putBackInQueue(_ id: String, in room: Room) -> [Delivery] {
        cancel(room.stage.request(id)?.invitationEntry)
        room.stage.putBack(id, at: clock.nowMillis())
        stageSchedule.changed(room)
        return stageStatus(room.stage.request(id)!, in: room, webhook: false)
    }

    /// The session ended: its timed blocks' and restored invitations'
    /// deadlines go with it.
    func endStageDeadlines(_ room: Room) {
        for block in room.stage.blocks.values { cancel(block.entry) }
        for entry in room.stage.invitationEntries { cancel(entry) }
    }

    // MARK: helpers

    private func requireStage() throws(RoomError) {
        if !stageIsOn {
            throw RoomError(
                .permissionDenied,
                "permission denied: the call-in queue is off (settings.stage.enabled, or no guest_role in the template)"
            )
        }
    }

    private func requireStageModerator(_ initiator: Initiator, _ call: String) throws(RoomError) {
        try requireStage()
        guard case .peer(let peer) = initiator else { return }
        try peer.requireUnrestricted(call)
        if !Self.moderates(peer.role) {
            throw RoomError(
                .permissionDenied,
                "permission denied: \(call) needs a role with changeRole or removeOthers"
            )
        }
    }

    /// Request `id` of `room` in one of the `allowed` states; 40407 otherwise
    /// (`data.status` when it exists in another state).
    private func stageRequest(_ id: String, in room: Room, allowed: [StageStatus]) throws(RoomError) -> StageRequest {
        guard let request = room.stage.request(id) else {
            throw RoomError(.stageRequestNotFound, "request_id: no stage request \"\(id)\"")
        }
        guard allowed.contains(request.status) else {
            var error = RoomError(
                .stageRequestNotFound,
                "request_id: stage request \"\(id)\" is \(request.status.rawValue)"
            )
            error.status = request.status.rawValue
            throw error
        }
        return request
    }

    /// Ends request `id` as `status`; an open invitation's token goes with it.
    private func endStage(_ id: String, as status: StageStatus, in room: Room) -> [Delivery] {
        guard let before = room.stage.end(id, as: status, at: clock.nowMillis()) else { return [] }
        if let token = before.token, let invitation = roleChanges.remove(token) { cancel(invitation.entry) }
        cancel(before.invitationEntry)
        stageSchedule.changed(room)
        return stageStatus(room.stage.request(id)!, in: room)
    }

    /// `on-stage-status {request}` to the requester's user's peers, and the
    /// operator's `stage.*` webhook (none for an invitation's expiry: the
    /// request waits again, as it was requested).
    private func stageStatus(_ request: StageRequest, in room: Room, webhook: Bool = true) -> [Delivery] {
        if webhook {
            let peer = room.peer(request.peerID).map { ActorRef($0) } ?? request.peer
            record(.stage(room: RoomRef(room), peer: peer, request: request))
        }
        return [Delivery(.stageStatus(request), to: room.peers(ofUser: request.userID))].nonEmpty
    }
}

/// The end of a timed stage block (`stage-block {duration_s}`): the user
/// may ask again. One entry per timed block, cancelled by an unblock, a
/// new block of the user or the session's end.
struct StageBlockEnd: ModelDeadline {
    static let rank = 7
    let room: Room
    let userID: UserID
    let until: Int64

    func expire(in registry: RoomRegistry, at now: Int64) -> Expired {
        guard registry.rooms[room.id] === room, room.stage.blocks[userID]?.until == until else { return Expired() }
        room.stage.unblock(userID)
        return Expired()
    }
}
