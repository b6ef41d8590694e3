import RoomProtocol

/// A poll's life after its authoring (PROTOCOL.md section 15): start, stop
/// (by a peer or by its `duration`) and listing. Voting is in
/// PollVoting.swift; a timed poll's end is a `PollEnd` deadline.
extension RoomRegistry {
    /// `poll-start`: every peer that may read or vote gets `on-poll-start`
    /// (`pollWrite` peers with the quiz answers). A poll starts only here and
    /// stops only in `stopPoll` or at its `PollEnd`: the places for `poll.started`
    /// / `poll.stopped` events (webhooks).
    public func startPoll(by peer: Peer, pollID: String) throws(RoomError) -> (poll: Poll, deliveries: [Delivery]) {
        try startPoll(by: .peer(peer), in: peer.room, pollID: pollID)
    }

    /// `poll-start` by a peer or by REST (`POST …/polls/{poll_id}/start`,
    /// section 32: `started_by` null).
    public func startPoll(
        by initiator: Initiator,
        in room: Room,
        pollID: String
    ) throws(RoomError) -> (poll: Poll, deliveries: [Delivery]) {
        let poll = try writablePoll(initiator, room, pollID, call: "poll-start")
        guard poll.state == .created else {
            throw RoomError(.wrongState, "poll \"\(pollID)\" is \(poll.state.rawValue): only a created poll can start")
        }
        if poll.questions.isEmpty { throw RoomError(.wrongState, "poll \"\(pollID)\" has no questions") }
        poll.state = .started
        if case .peer(let peer) = initiator { poll.startedBy = peer.id }
        poll.startedAt = clock.nowMillis()
        record(.pollStarted(room: RoomRef(room), pollID: poll.id, by: ActorRef(initiator)))
        poll.tallies = poll.questions.map { QuestionTally(options: $0.options.count) }
        timePoll(poll)
        room.feed?.poll(poll, at: poll.startedAt!)
        var writers: [Peer] = []
        var readers: [Peer] = []
        for other in room.peersInJoinOrder where mayRead(other, poll) {
            if canWritePolls(other) { writers.append(other) } else { readers.append(other) }
        }
        let withAnswers = poll.type == .quiz
        var deliveries = [Delivery(.pollStart(poll, withAnswers: withAnswers), to: writers)]
        deliveries.append(Delivery(.pollStart(poll, withAnswers: false), to: readers))
        return (poll, deliveries.filter { !$0.recipients.isEmpty })
    }

    /// `poll-stop` by a peer.
    public func stopPoll(by peer: Peer, pollID: String) throws(RoomError) -> (poll: Poll, deliveries: [Delivery]) {
        try stopPoll(by: .peer(peer), in: peer.room, pollID: pollID)
    }

    /// `poll-stop` by a peer or by REST (`stopped_by` null, the event's `by` the server PeerRef).
    public func stopPoll(
        by initiator: Initiator,
        in room: Room,
        pollID: String
    ) throws(RoomError) -> (poll: Poll, deliveries: [Delivery]) {
        let poll = try writablePoll(initiator, room, pollID, call: "poll-stop")
        guard poll.state == .started else {
            throw RoomError(.wrongState, "poll \"\(pollID)\" is \(poll.state.rawValue): only a started poll can stop")
        }
        return (poll, stop(poll, by: initiator))
    }

    /// Stops a started poll (by a peer, by REST, or by its timer with `by`
    /// nil): the peers that may read or vote get `on-poll-stop`.
    func stop(_ poll: Poll, by initiator: Initiator?) -> [Delivery] {
        cancel(poll.endEntry)
        poll.endEntry = nil
        poll.state = .stopped
        if case .peer(let peer) = initiator { poll.stoppedBy = peer.id } else { poll.stoppedBy = nil }
        poll.stoppedAt = clock.nowMillis()
        guard let room = poll.room else { return [] }
        room.feed?.poll(poll, at: poll.stoppedAt!)
        record(.pollStopped(room: RoomRef(room), pollID: poll.id, by: initiator.map(ActorRef.init)))
        let recipients = room.peersInJoinOrder.filter { mayRead($0, poll) }
        return [Delivery(.pollStop(poll), to: recipients)].nonEmpty
    }

    /// A started poll with a `duration` waits for its end.
    func timePoll(_ poll: Poll) {
        guard let deadline = poll.deadline else { return }
        cancel(poll.endEntry)
        poll.endEntry = schedule(PollEnd(poll: poll), at: deadline)
    }

    /// `poll-list {state?}`: the polls `peer` may read, newest first.
    /// Every poll of `room`'s session of `state` (all without), newest first:
    /// the REST API's list (the operator reads them all).
    public func listPolls(in room: Room, state: PollState?) -> [Poll] {
        room.polls.ordered.reversed().filter { state == nil || $0.state == state }
    }

    public func listPolls(for peer: Peer, state: PollState?) -> [Poll] {
        peer.room.polls.ordered.reversed().filter { poll in
            (state == nil || poll.state == state) && mayRead(peer, poll)
        }
    }
}

/// The end of a started poll's `duration`: it stops with `stopped_by` null
/// (`on-poll-stop`, the `poll.stopped` event). Cancelled by a `poll-stop`.
struct PollEnd: ModelDeadline {
    static let rank = 2
    let poll: Poll

    func expire(in registry: RoomRegistry, at now: Int64) -> Expired {
        poll.endEntry = nil
        guard let room = poll.room, poll.deadline == now else { return Expired() }
        return Expired(
            effects: Effects(deliveries: registry.stop(poll, by: nil)),
            log: ("poll stopped", ["room": room.id.rawValue, "poll": poll.id, "by": "timer"])
        )
    }
}
