/// Who may do what with polls (PROTOCOL.md section 15).
extension RoomRegistry {
    /// `pollWrite` of a peer's role; a `view_and_polls_only` peer never has it.
    public func canWritePolls(_ peer: Peer) -> Bool { peer.role.permissions.pollWrite && !peer.viewOnly }

    public func mayVote(_ peer: Peer, in poll: Poll) -> Bool { poll.allowsVote(role: peer.role.name) }

    /// `pollRead`, `pollWrite` or may vote. Polls still being written
    /// (`created`) are seen by `pollWrite` peers only.
    public func mayRead(_ peer: Peer, _ poll: Poll) -> Bool {
        if canWritePolls(peer) { return true }
        if poll.state == .created { return false }
        return peer.role.permissions.pollRead || mayVote(peer, in: poll)
    }

    /// Whether `peer` sees the quiz answers: `pollWrite`, or the poll has stopped.
    public func seesAnswers(_ peer: Peer, _ poll: Poll) -> Bool { canWritePolls(peer) || poll.answersPublic }

    /// The poll `id` as `peer` may read it: 40404 when unknown (or a draft it
    /// may not see), 40300 when it may neither read nor vote.
    public func readablePoll(_ peer: Peer, _ id: String) throws(RoomError) -> Poll {
        guard let poll = peer.room.polls[id], canWritePolls(peer) || poll.state != .created else {
            throw RoomError(.pollNotFound, "poll_id: no poll \"\(id)\"")
        }
        guard mayRead(peer, poll) else {
            throw RoomError(.permissionDenied, "permission denied: role lacks pollRead and may not vote in this poll")
        }
        return poll
    }

    func writablePoll(_ peer: Peer, _ id: String, call: String) throws(RoomError) -> Poll {
        try writablePoll(.peer(peer), peer.room, id, call: call)
    }

    /// The poll `id` of `room` for a peer with `pollWrite`, or for REST.
    func writablePoll(_ initiator: Initiator, _ room: Room, _ id: String, call: String) throws(RoomError) -> Poll {
        if case .peer(let peer) = initiator { try peer.requireUnrestricted(call) }
        try requirePermission(initiator, \.pollWrite, "pollWrite")
        guard let poll = room.polls[id] else { throw RoomError(.pollNotFound, "poll_id: no poll \"\(id)\"") }
        return poll
    }
}
