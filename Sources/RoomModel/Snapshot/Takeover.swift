/// Cluster takeover (PROTOCOL.md section 18, docs/CLUSTER.md): a room as
/// a `RoomSnapshot`, and a room restored from one on the node that takes it
/// over, its peers waiting for their clients in a reconnect grace.
extension RoomRegistry {
    /// `room` as a value; `locked` when the room id is locked (a locked room
    /// that ended is `locked` with no peers).
    public func snapshot(of room: Room) -> RoomSnapshot {
        var snapshot = RoomSnapshot(
            id: room.id,
            sessionID: room.sessionID,
            startedAt: room.startedAt,
            nextSequence: room.sequenceCounter,
            locked: locks.contains(room.id),
            peers: room.peersInJoinOrder.map(PeerSnapshot.init),
            sessionStore: room.sessionStore,
            pollSerial: room.polls.serialCounter,
            polls: room.polls.ordered.map(PollSnapshot.init),
            liveStream: room.liveStream,
            chatMessages: room.chat.messages,
            pinned: room.chat.pinned,
            questions: room.questions.all,
            questionsAdded: room.questions.added,
            reactions: room.reactions.snapshot(
                of: ["stream"] + room.reactions.contestantNames + room.chat.messages.reversed().map(\.id)
            ),
            moderation: moderationSnapshot(room),
            rtmp: room.rtmp,
            recording: room.recording
        )
        snapshot.stage = room.stage.snapshot
        snapshot.held = room.held.all
        snapshot.audit = AuditSnapshot(room.audit)
        return snapshot
    }

    /// Takes over a room from a snapshot. Every peer starts in its reconnect
    /// grace, ending `graceMillis` from now: a client still connected (to
    /// another node) takes its peer up again with `reattach`; the others
    /// leave when it ends, as peers whose connection was lost. A peer whose
    /// role is no longer in the template is left out. Returns nil for a
    /// snapshot with no peers (an ended room: only its lock is restored).
    @discardableResult
    public func restore(_ snapshot: RoomSnapshot, graceMillis: Int64) -> Room? {
        if snapshot.locked { locks.lock(snapshot.id) }
        guard !snapshot.peers.isEmpty, rooms[snapshot.id] == nil else { return rooms[snapshot.id] }
        let room = Room(id: snapshot.id, sessionID: snapshot.sessionID, startedAt: snapshot.startedAt)
        room.sequenceCounter = snapshot.nextSequence
        let deadline = clock.nowMillis() + graceMillis
        for saved in snapshot.peers {
            guard let role = template.role(saved.role) else { continue }
            let peer = Peer(
                id: saved.id,
                userID: saved.userID,
                joinedAt: saved.joinedAt,
                sequence: saved.sequence,
                role: role,
                name: saved.name,
                data: saved.data,
                avatar: saved.avatar,
                attributes: saved.attributes,
                viewOnly: saved.viewOnly,
                room: room
            )
            room.add(peer)
            for track in saved.tracks { room.addTrack(track, to: peer) }
            peer.groups = saved.groups
            peer.metadataListening = saved.metadataListening
            room.speakers.joined(peer)
            beginGrace(peer, until: deadline)
        }
        room.sessionStore = snapshot.sessionStore
        room.polls.serialCounter = snapshot.pollSerial
        for saved in snapshot.polls {
            let poll = Poll(restoring: saved, room: room)
            room.polls.add(poll)
            if poll.state == .started { timePoll(poll) }
        }
        room.liveStream = snapshot.liveStream
        timeCues(room)
        room.rtmp = snapshot.rtmp
        room.recording = snapshot.recording
        room.chat = ChatHistory(
            messages: snapshot.chatMessages,
            pinned: snapshot.pinned,
            capacity: settings.chat.historySize
        )
        room.questions = QuestionBoard(questions: snapshot.questions, added: snapshot.questionsAdded)
        room.held = HeldMessages(messages: snapshot.held)
        room.audit = AuditLog(restoring: snapshot.audit)
        room.reactions = Reactions(restoring: snapshot.reactions, types: settings.reactions.types) { target in
            if case .message(let id) = target { room.chat.message(id) != nil } else { true }
        }
        if room.reactions.hasPending { reactionSchedule.schedule(room) }  // pushed by this node now
        room.bans = RoomBans(restoring: snapshot.moderation.bans)
        room.chatControls = ChatControls(
            paused: snapshot.moderation.paused,
            slowModeSeconds: snapshot.moderation.slowModeSeconds,
            chatBans: snapshot.moderation.chatBans
        )
        timeChatBans(room)
        restoreStage(snapshot.stage, in: room)
        room.roomState.announced(room.peerCount)
        rooms[room.id] = room
        openFeed(room, at: clock.nowMillis())  // the feed goes on from here (what the old home recorded is not carried)
        if room.peerCount == 0 { sessionEmptied(room) }  // a session that waited for a join waits again
        return room
    }

    /// A restored peer whose client is still connected takes it up again:
    /// its grace ends; nobody is told anything (for them it never left).
    public func reattach(_ peer: Peer) {
        endGrace(peer)
    }
}
