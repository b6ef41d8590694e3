/// Polls and quizzes (PROTOCOL.md section 15): authoring, permissions,
/// start and stop. Voting and results are in PollVoting.swift.
extension RoomRegistry {
    public static let maxQuestionsPerPoll = 20
    public static let maxOptionsPerQuestion = 10
    public static let maxPollTextBytes = 1024
    public static let maxPollDurationS = 86_400

    // MARK: who may do what

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

    private func writablePoll(_ peer: Peer, _ id: String, call: String) throws(RoomError) -> Poll {
        try peer.requireUnrestricted(call)
        try requirePermission(.peer(peer), \.pollWrite, "pollWrite")
        guard let poll = peer.room.polls[id] else { throw RoomError(.pollNotFound, "poll_id: no poll \"\(id)\"") }
        return poll
    }

    // MARK: authoring

    /// `poll-info-set`: creates a poll (with `pollID`, or a new id) or
    /// replaces the info of one still `created`.
    public func setPollInfo(by peer: Peer, _ info: PollInfoInput) throws(RoomError) -> Poll {
        try peer.requireUnrestricted("poll-info-set")
        try requirePermission(.peer(peer), \.pollWrite, "pollWrite")
        try checkSize(info.title, field: "title", limit: Self.maxPollTextBytes)
        if !(0...Self.maxPollDurationS).contains(info.duration) {
            throw .invalidParams("duration: must be between 0 and \(Self.maxPollDurationS), got \(info.duration)")
        }
        for (field, roles) in [("vote", info.vote), ("responses", info.responses)] {
            for (index, name) in (roles ?? []).enumerated() where template.role(name) == nil {
                throw RoomError(.roleNotFound, "\(field)[\(index)]: no role named \"\(name)\"")
            }
        }
        let room = peer.room
        if let id = info.pollID, let poll = room.polls[id] {
            guard poll.state == .created else {
                throw RoomError(.wrongState, "poll \"\(id)\" is \(poll.state.rawValue): only a created poll can be edited")
            }
            poll.apply(info)
            return poll
        }
        if room.polls.count >= settings.polls.maxPolls {
            throw RoomError(.tooMany, "the room already has \(settings.polls.maxPolls) polls (max_polls)")
        }
        let poll = Poll(id: info.pollID ?? ids.next(.poll), info: info, createdBy: peer.id, createdAt: clock.nowMillis(),
                        sequence: room.polls.nextSequence(), room: room)
        room.polls.add(poll)
        return poll
    }

    /// `poll-questions-set`: replaces every question of a `created` poll.
    public func setPollQuestions(by peer: Peer, pollID: String, _ inputs: [QuestionInput]) throws(RoomError) -> Poll {
        let poll = try writablePoll(peer, pollID, call: "poll-questions-set")
        guard poll.state == .created else {
            throw RoomError(.wrongState, "poll \"\(pollID)\" is \(poll.state.rawValue): questions can only change while created")
        }
        if inputs.count > Self.maxQuestionsPerPoll {
            throw RoomError(.tooMany, "questions: at most \(Self.maxQuestionsPerPoll) per poll, got \(inputs.count)")
        }
        var questions: [PollQuestion] = []
        for (i, input) in inputs.enumerated() {
            questions.append(try makeQuestion(input, index: i + 1, quiz: poll.type == .quiz))
        }
        poll.questions = questions
        return poll
    }

    private func makeQuestion(_ input: QuestionInput, index: Int, quiz: Bool) throws(RoomError) -> PollQuestion {
        let at = "questions[\(index - 1)]"
        try checkSize(input.text, field: "\(at).question.text", limit: Self.maxPollTextBytes)
        if input.text.isEmpty { throw .invalidParams("\(at).question.text: must not be empty") }
        if !(0...1000).contains(input.weight) {
            throw .invalidParams("\(at).question.weight: must be between 0 and 1000, got \(input.weight)")
        }
        for (name, value) in [("answer_min_len", input.answerMinLen), ("answer_max_len", input.answerMaxLen)] {
            if let value, !(0...Self.maxPollTextBytes).contains(value) {
                throw .invalidParams("\(at).question.\(name): must be between 0 and \(Self.maxPollTextBytes), got \(value)")
            }
        }
        if let min = input.answerMinLen, let max = input.answerMaxLen, min > max {
            throw .invalidParams("\(at).question.answer_min_len: \(min) is over answer_max_len \(max)")
        }
        if input.options.count > Self.maxOptionsPerQuestion {
            throw RoomError(.tooMany, "\(at).options: at most \(Self.maxOptionsPerQuestion) per question, got \(input.options.count)")
        }
        for (i, option) in input.options.enumerated() {
            try checkSize(option, field: "\(at).options[\(i)].text", limit: Self.maxPollTextBytes)
        }
        var answer: [Int]?
        if input.type.isChoice {
            if input.options.isEmpty { throw .invalidParams("\(at).options: a choice question needs at least one option") }
            if let given = input.answer {
                let sorted = Array(Set(given)).sorted()
                if sorted.isEmpty || sorted.count != given.count || sorted.contains(where: { !(1...input.options.count).contains($0) }) {
                    throw .invalidParams("\(at).answer: option indexes must be distinct, between 1 and \(input.options.count)")
                }
                if input.type == .singleChoice, sorted.count != 1 {
                    throw .invalidParams("\(at).answer: a single-choice question has one answer option")
                }
                answer = sorted
            } else if quiz {
                throw .invalidParams("\(at).answer: required for a choice question of a quiz")
            }
        } else {
            if !input.options.isEmpty { throw .invalidParams("\(at).options: a text question has no options") }
            if input.answer != nil { throw .invalidParams("\(at).answer: a text question has no answer options") }
        }
        return PollQuestion(index: index, text: input.text, type: input.type, skippable: input.skippable,
                            weight: input.weight, answerMinLen: input.answerMinLen, answerMaxLen: input.answerMaxLen,
                            options: input.options, answer: answer)
    }

    // MARK: start and stop

    /// `poll-start`: every peer that may read or vote gets `on-poll-start`
    /// (`pollWrite` peers with the quiz answers). A poll starts only here and
    /// stops only in `stopPoll` or `expirePolls`: the places for `poll.started`
    /// / `poll.stopped` events (webhooks).
    public func startPoll(by peer: Peer, pollID: String) throws(RoomError) -> (poll: Poll, deliveries: [Delivery]) {
        let poll = try writablePoll(peer, pollID, call: "poll-start")
        guard poll.state == .created else {
            throw RoomError(.wrongState, "poll \"\(pollID)\" is \(poll.state.rawValue): only a created poll can start")
        }
        if poll.questions.isEmpty { throw RoomError(.wrongState, "poll \"\(pollID)\" has no questions") }
        poll.state = .started
        poll.startedBy = peer.id
        poll.startedAt = clock.nowMillis()
        record(.pollStarted(room: RoomRef(peer.room), pollID: poll.id, by: ActorRef(peer)))
        poll.tallies = poll.questions.map { QuestionTally(options: $0.options.count) }
        if poll.deadline != nil { pollSchedule.time(poll) }
        var writers: [Peer] = []
        var readers: [Peer] = []
        for other in peer.room.peersInJoinOrder where mayRead(other, poll) {
            if canWritePolls(other) { writers.append(other) } else { readers.append(other) }
        }
        let withAnswers = poll.type == .quiz
        var deliveries = [Delivery(.pollStart(poll, withAnswers: withAnswers), to: writers)]
        deliveries.append(Delivery(.pollStart(poll, withAnswers: false), to: readers))
        return (poll, deliveries.filter { !$0.recipients.isEmpty })
    }

    /// `poll-stop` by a peer.
    public func stopPoll(by peer: Peer, pollID: String) throws(RoomError) -> (poll: Poll, deliveries: [Delivery]) {
        let poll = try writablePoll(peer, pollID, call: "poll-stop")
        guard poll.state == .started else {
            throw RoomError(.wrongState, "poll \"\(pollID)\" is \(poll.state.rawValue): only a started poll can stop")
        }
        return (poll, stop(poll, by: peer.id))
    }

    /// Stops a started poll (by a peer, or by its timer with `by` nil): the
    /// peers that may read or vote get `on-poll-stop`.
    func stop(_ poll: Poll, by peerID: String?) -> [Delivery] {
        poll.state = .stopped
        poll.stoppedBy = peerID
        poll.stoppedAt = clock.nowMillis()
        guard let room = poll.room else { return [] }
        record(.pollStopped(room: RoomRef(room), pollID: poll.id, by: peerID.flatMap(room.peer).map(ActorRef.init)))
        let recipients = room.peersInJoinOrder.filter { mayRead($0, poll) }
        return [Delivery(.pollStop(poll), to: recipients)].nonEmpty
    }

    /// Stops the polls whose `duration` is over (`stopped_by` null). Returns
    /// the polls it stopped (one `poll.stopped` event each, for webhooks) and the pushes.
    public func expirePolls() -> (stopped: [Poll], deliveries: [Delivery]) {
        let stopped = pollSchedule.takeDue(now: clock.nowMillis())
        var deliveries: [Delivery] = []
        for poll in stopped { deliveries += stop(poll, by: nil) }
        return (stopped, deliveries)
    }

    /// When the next timed poll ends (for the server's timer).
    public var nextPollDeadline: Int64? { pollSchedule.nextDeadline }

    // MARK: listing

    /// `poll-list {state?}`: the polls `peer` may read, newest first.
    public func listPolls(for peer: Peer, state: PollState?) -> [Poll] {
        peer.room.polls.ordered.reversed().filter { poll in
            (state == nil || poll.state == state) && mayRead(peer, poll)
        }
    }
}
