import RoomConfig

/// Every room of the daemon and the rules that change them.
///
/// Synchronous and single-threaded by design: the server calls it from its
/// one service thread. Every mutating method returns the deliveries it
/// caused; it never talks to the network itself.
///
/// The registry holds the rooms and one object per feature that keeps
/// state across rooms (each in the file named after it, its state private
/// to it); the registry's operations coordinate them — a leave, for one,
/// tells role changes, peer search and reconnect graces to forget the peer.
public final class RoomRegistry {
    public private(set) var template: RoleTemplate
    public var settings: Settings { template.settings }
    let clock: RoomClock
    let ids: IDGenerator
    public internal(set) var rooms: [String: Room] = [:]
    /// Room ids ended with `lock: true` (RoomLocks.swift).
    var locks = RoomLocks()
    /// Polite role-change requests waiting for an answer (RoleChangeRequests.swift).
    var roleChanges = RoleChangeRequests()
    /// Rooms whose active-speaker state needs ticks (ActiveSpeakers.swift).
    var activeSpeakers = ActiveSpeakers()
    /// Large rooms waiting for their next `room-state` (RoomStateBatch.swift).
    var roomStates = RoomStateSchedule()
    /// Peers in their reconnect grace (ReconnectGraces.swift).
    var graces = ReconnectGraces()
    /// `find-peer` iterators (PeerSearch.swift).
    var peerSearch = PeerSearch()
    /// Timed polls and polls with stats to send (Polls/PollSchedule.swift).
    var pollSchedule = PollSchedule()
    /// Webhook events since the server last took them (OperatorEvents.swift).
    var eventLog = OperatorEventLog()

    public init(template: RoleTemplate, clock: RoomClock = SystemClock(), ids: IDGenerator = RandomIDGenerator()) {
        self.template = template
        self.clock = clock
        self.ids = ids
    }

    /// A reloaded template (SIGHUP): its roles apply to joins and role
    /// changes from now on; peers keep the role they have, even one that
    /// vanished, until it changes. Settings stay those the daemon started
    /// with (timers, limits and buffers are sized from them).
    public func replaceRoles(with reloaded: RoleTemplate) {
        var next = reloaded
        next.settings = template.settings
        template = next
    }

    public var peerCount: Int { rooms.values.reduce(0) { $0 + $1.peerCount } }

    public func room(_ id: String) -> Room? { rooms[id] }

    /// Room ids ended with `lock: true`; a lock survives the room itself.
    public var lockedRoomIDs: Set<String> { locks.ids }

    // MARK: join / leave

    public func join(_ request: JoinRequest) throws(RoomError) -> JoinOutcome {
        if let resumeID = request.resumePeerID {
            let (_, existing) = try admit(request, for: .resume)
            return try resume(resumeID, in: existing, request: request)
        }
        let (role, existing) = try admit(request, for: .join)
        let now = clock.nowMillis()
        let room = existing ?? makeRoom(request.roomID, at: now)
        room.liveStream?.prune(now: now)  // the join's room.hls lists live cues only
        let peer = Peer(id: ids.next(.peer), userID: request.userID, joinedAt: now, sequence: room.makeSequence(),
                        role: role, name: request.name, data: request.data, viewOnly: request.viewOnly, room: room)
        room.add(peer)
        room.speakers.joined(peer)
        record(.peerJoined(room: RoomRef(room), peer: ActorRef(peer)), at: now)
        let large = isLarge(room)
        let listed = large ? largeRoomSnapshot(for: peer) : room.others(than: peer)
        var deliveries: [Delivery] = []
        if large, !peer.role.publishParams.canPublish {
            room.roomState.joinedQuietly(peer)  // announced in the next room-state
            roomStates.schedule(room)
        } else {
            deliveries = splitBySubscription(room.others(than: peer), publisher: peer) { .peerJoin(peer, withTracks: $0) }
            room.roomState.announced(room.peerCount)  // everyone saw this join
        }
        return JoinOutcome(peer: peer, room: room, others: listed.map { ($0, peer.sees(tracksOf: $0)) },
                           resumed: false, replacedHandle: nil, deliveries: deliveries)
    }

    /// `join` with `peer_id`: take over a peer that is still in the room.
    private func resume(_ peerID: String, in room: Room?, request: JoinRequest) throws(RoomError) -> JoinOutcome {
        guard let room, let peer = room.peer(peerID), (peer.graceDeadline ?? .max) > clock.nowMillis() else {
            throw RoomError(.peerGone, "peer \"\(peerID)\" is gone")
        }
        guard peer.userID == request.userID else {
            throw RoomError(.peerIDOfOtherUser, "peer \"\(peerID)\" belongs to another user")
        }
        let replaced = peer.transportHandle
        peer.transportHandle = nil
        graces.end(peer)
        room.liveStream?.prune(now: clock.nowMillis())  // room.hls lists live cues only
        let listed = isLarge(room) ? largeRoomSnapshot(for: peer) : room.others(than: peer)
        let others = listed.map { ($0, peer.sees(tracksOf: $0)) }
        return JoinOutcome(peer: peer, room: room, others: others, resumed: true, replacedHandle: replaced,
                           deliveries: [])
    }

    /// Removes `peer`; the others are told why. The room goes with its last peer.
    public func leave(_ peer: Peer, reason: LeaveReason) -> [Delivery] {
        let room = peer.room
        guard room.peer(peer.id) === peer else { return [] }
        let quietly = isLarge(room) && !peer.role.publishParams.canPublish
        room.remove(peer)
        forget(peer)
        record(.peerLeft(room: RoomRef(room), peer: ActorRef(peer), reason: reason.rawValue))
        if room.peerCount == 0 {
            rooms.removeValue(forKey: room.id)
            endLiveStream(room, by: nil, reason: "room ended")
            record(.sessionClosed(room: RoomRef(room)))
            return []
        }
        // A join still waiting for its room-state is withdrawn, whatever happens next.
        let wasPending = room.roomState.withdrawJoin(of: peer)
        if quietly {
            room.roomState.leftQuietly(peer.id, joinWasPending: wasPending)
            roomStates.schedule(room)
            return []
        }
        room.roomState.announced(room.peerCount)  // everyone sees this leave
        return [Delivery(.peerLeave(peerID: peer.id, reason: reason), to: room.peersInJoinOrder)]
    }

    /// What the features keep for a peer that is gone: its pending role
    /// changes, its `find-peer` iterators, its reconnect grace.
    func forget(_ peer: Peer) {
        roleChanges.forget(peer)
        peerSearch.forget(peer)
        graces.end(peer)
    }

    // MARK: metadata

    /// `peer-update` (or a REST update): nil leaves a field as it is.
    /// Nothing changed → no delivery.
    public func updatePeer(_ peer: Peer, name: String?, data: String?, by initiator: Initiator? = nil)
        throws(RoomError) -> [Delivery]
    {
        if initiator == nil { try peer.requireUnrestricted("peer-update") }
        try checkMetadata(name: name, data: data)
        var changed: [PeerField] = []
        if let name, name != peer.name {
            peer.name = name
            changed.append(.name)
        }
        if let data, data != peer.data {
            peer.data = data
            changed.append(.data)
        }
        if changed.isEmpty { return [] }
        return peerUpdate(peer, changed: changed)
    }

    /// The size limits of a peer's `name` and `data`.
    public func checkMetadata(name: String?, data: String?) throws(RoomError) {
        if let name { try checkSize(name, field: "name", limit: settings.limits.maxNameBytes) }
        if let data { try checkSize(data, field: "data", limit: settings.limits.maxMetadataBytes) }
    }

    // MARK: messages

    public enum MessageTarget: Equatable {
        case everyone
        case peer(String)
        case roles([String])
    }

    /// `broadcast` by a peer: returns the message (id, timestamp) and its deliveries.
    public func broadcast(from sender: Peer, message: String, type: String, to target: MessageTarget)
        throws(RoomError) -> (message: ChatMessage, deliveries: [Delivery])
    {
        try sender.requireUnrestricted("broadcast")
        return try send(from: .peer(sender), in: sender.room, message: message, type: type, to: target)
    }

    /// A message from a peer or from the server (REST `send-message`); never
    /// delivered back to a sending peer except as an explicit direct message.
    public func send(from sender: Initiator, in room: Room, message: String, type: String, to target: MessageTarget)
        throws(RoomError) -> (message: ChatMessage, deliveries: [Delivery])
    {
        try checkSize(message, field: "info.message", limit: settings.limits.maxChatBytes)
        var sendingPeer: Peer?
        if case .peer(let peer) = sender { sendingPeer = peer }
        let everyone = room.peersInJoinOrder
        let recipients: [Peer]
        let recipient: ChatMessage.Recipient
        switch target {
        case .everyone:
            recipients = everyone  // the sender is skipped by the delivery, not by a copy
            recipient = .broadcast
        case .peer(let id):
            guard let peer = room.peer(id) else { throw RoomError(.peerNotFound, "peer_id \"\(id)\" is not in the room") }
            recipients = [peer]
            recipient = .peer(id)
        case .roles(let names):
            if names.isEmpty { throw .invalidParams("roles: must not be empty") }
            for name in names where template.role(name) == nil {
                throw RoomError(.roleNotFound, "roles: no role named \"\(name)\"")
            }
            let wanted = Set(names)
            recipients = everyone.filter { $0 !== sendingPeer && wanted.contains($0.role.name) }
            recipient = .roles(names)
        }
        let chat = ChatMessage(id: ids.next(.message), timestamp: clock.nowMillis(), sender: sender,
                               recipient: recipient, message: message, type: type)
        if target == .everyone, let sendingPeer {
            return (chat, [Delivery(.broadcast(chat), to: recipients, excluding: sendingPeer)].nonEmpty)
        }
        return (chat, [Delivery(.broadcast(chat), to: recipients)].nonEmpty)
    }

    // MARK: helpers

    private func makeRoom(_ id: String, at now: Int64) -> Room {
        let room = Room(id: id, sessionID: ids.next(.session), startedAt: now)
        rooms[id] = room
        record(.sessionOpened(room: RoomRef(room)), at: now)
        return room
    }

    func checkSize(_ value: String, field: String, limit: Int) throws(RoomError) {
        let size = value.utf8.count
        if size > limit { throw RoomError(.tooLarge, "\(field): \(size) bytes is over the limit of \(limit)") }
    }

    /// `on-peer-update` to every peer of the room, the changed one included.
    func peerUpdate(_ peer: Peer, changed: [PeerField]) -> [Delivery] {
        splitBySubscription(peer.room.peersInJoinOrder, publisher: peer) {
            .peerUpdate(peer, changed: changed, withTracks: $0)
        }
    }

    /// A peer's permission for a call; the REST API (`.server`) may do anything.
    func requirePermission(_ initiator: Initiator, _ permission: KeyPath<Permissions, Bool>, _ name: String)
        throws(RoomError)
    {
        guard case .peer(let peer) = initiator else { return }
        try peer.requireUnrestricted(name)
        if !peer.role.permissions[keyPath: permission] { throw RoomError.denied(name) }
    }

    /// One delivery for the recipients that see `publisher`'s tracks, one for
    /// those that don't (a publisher sees its own peer object with its tracks).
    func splitBySubscription(_ recipients: [Peer], publisher: Peer, _ push: (Bool) -> Push) -> [Delivery] {
        var seeing: [Peer] = []
        var blind: [Peer] = []
        for recipient in recipients {
            if recipient === publisher || recipient.sees(tracksOf: publisher) {
                seeing.append(recipient)
            } else {
                blind.append(recipient)
            }
        }
        var deliveries: [Delivery] = []
        if !seeing.isEmpty { deliveries.append(Delivery(push(true), to: seeing)) }
        if !blind.isEmpty { deliveries.append(Delivery(push(false), to: blind)) }
        return deliveries
    }
}
