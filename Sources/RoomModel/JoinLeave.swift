/// `join` and leaving (PROTOCOL.md sections 4 and 7): a room is created by
/// its first join and goes with its last peer, or waits `empty_timeout_s`
/// for the next (EmptyRooms.swift).
extension RoomRegistry {
    public func join(_ request: JoinRequest) throws(RoomError) -> JoinOutcome {
        if let resumeID = request.resumePeerID {
            let (_, existing) = try admit(request, for: .resume)
            return try resume(resumeID, in: existing, request: request)
        }
        if request.tokenExpired { throw RoomError(.badJWT, "token expired") }
        let (role, existing) = try admit(request, for: .join)
        if request.nameIsParam, let existing { try checkReserved(request.name, in: existing, role: role) }
        let now = clock.nowMillis()
        let room = existing ?? makeRoom(request.roomID, at: now)
        endEmptyWait(room)  // a session waiting for a join has one
        room.liveStream?.prune(now: now)  // the join's room.hls lists live cues only
        let peer = Peer(
            id: PeerID(ids.next(.peer)),
            userID: request.userID,
            joinedAt: now,
            sequence: room.makeSequence(),
            role: role,
            name: request.name,
            data: request.data,
            avatar: request.avatar,
            attributes: request.attributes,
            viewOnly: request.viewOnly,
            room: room
        )
        room.add(peer)
        room.speakers.joined(peer)
        trackToken(of: peer, expiresAt: request.tokenExpiresAt)
        record(.peerJoined(room: RoomRef(room), peer: ActorRef(peer)), at: now)
        feedState(room)
        let large = isLarge(room)
        let listed = large ? largeRoomSnapshot(for: peer) : room.others(than: peer)
        var deliveries: [Delivery] = []
        if large, !peer.role.publishParams.canPublish {
            room.roomState.joinedQuietly(peer)  // announced in the next room-state
            roomStates.schedule(room)
        } else {
            deliveries = splitBySubscription(room.others(than: peer), publisher: peer) {
                .peerJoin(peer, withTracks: $0)
            }
            room.roomState.announced(room.peerCount)  // everyone saw this join
        }
        return JoinOutcome(
            peer: peer,
            room: room,
            others: listed.map { ($0, peer.sees(tracksOf: $0)) },
            resumed: false,
            replacedEndpoint: nil,
            deliveries: deliveries
        )
    }

    /// `join` with `peer_id`: take over a peer that is still in the room.
    private func resume(_ peerID: PeerID, in room: Room?, request: JoinRequest) throws(RoomError) -> JoinOutcome {
        guard let room, let peer = room.peer(peerID), (peer.graceDeadline ?? .max) > clock.nowMillis() else {
            // An expired token may resume a peer that is still there, nothing else (section 23).
            if request.tokenExpired { throw RoomError(.badJWT, "token expired") }
            throw RoomError(.peerGone, "peer \"\(peerID)\" is gone")
        }
        guard peer.userID == request.userID else {
            throw RoomError(.peerIDOfOtherUser, "peer \"\(peerID)\" belongs to another user")
        }
        let replaced = peer.endpoint
        peer.endpoint = nil
        endGrace(peer)
        if !request.tokenExpired { trackToken(of: peer, expiresAt: request.tokenExpiresAt) }
        room.liveStream?.prune(now: clock.nowMillis())  // room.hls lists live cues only
        let listed = isLarge(room) ? largeRoomSnapshot(for: peer) : room.others(than: peer)
        let others = listed.map { ($0, peer.sees(tracksOf: $0)) }
        return JoinOutcome(
            peer: peer,
            room: room,
            others: others,
            resumed: true,
            replacedEndpoint: replaced,
            deliveries: []
        )
    }

    /// Removes `peer`; the others are told why. The session ends with its
    /// last peer, or waits for the next join (EmptyRooms.swift).
    public func leave(_ peer: Peer, reason: LeaveReason) -> [Delivery] {
        // A peer that left already may outlive its room (deliveries built before it left hold it).
        guard !peer.hasLeft else { return [] }
        let room = peer.room
        guard room.peer(peer.id) === peer else { return [] }
        let quietly = isLarge(room) && !peer.role.publishParams.canPublish
        room.remove(peer)
        forget(peer)
        let stage = stagePeerLeft(peer)  // its user's other peers hear of its request
        record(.peerLeft(room: RoomRef(room), peer: ActorRef(peer), reason: reason.rawValue))
        feedState(room)
        if room.peerCount == 0 {
            sessionEmptied(room)  // ends now, or waits empty_timeout_s (EmptyRooms.swift)
            return []
        }
        // A join still waiting for its room-state is withdrawn, whatever happens next.
        let wasPending = room.roomState.withdrawJoin(of: peer)
        if quietly {
            room.roomState.leftQuietly(peer.id, joinWasPending: wasPending)
            roomStates.schedule(room)
            return stage
        }
        room.roomState.announced(room.peerCount)  // everyone sees this leave
        return [Delivery(.peerLeave(peerID: peer.id, reason: reason), to: room.peersInJoinOrder)] + stage
    }

    /// What the features keep for a peer that is gone: its pending role
    /// changes, its `find-peer` iterators, its reconnect grace, its token warning.
    func forget(_ peer: Peer) {
        for request in roleChanges.forget(peer) { cancel(request.entry) }
        peerSearch.forget(peer)
        endGrace(peer)
        cancel(peer.tokenEntry)
        peer.tokenEntry = nil
    }

    private func makeRoom(_ id: RoomID, at now: Int64) -> Room {
        let room = Room(id: id, sessionID: ids.next(.session), startedAt: now)
        rooms[id] = room
        openFeed(room, at: now)
        record(.sessionOpened(room: RoomRef(room)), at: now)
        return room
    }
}
