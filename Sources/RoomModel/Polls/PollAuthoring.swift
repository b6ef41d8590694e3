import RoomProtocol

/// Writing polls and quizzes (PROTOCOL.md section 15): their info and
/// questions, while they are `created`. Who may is in PollAccess.swift.
extension RoomRegistry {
    public static let maxQuestionsPerPoll = 20
    public static let maxOptionsPerQuestion = 10
    public static let maxPollTextBytes = 1024
    public static let maxPollDurationS = 86_400

    /// `poll-info-set`: creates a poll (with `pollID`, or a new id) or
    /// replaces the info of one still `created`.
    public func setPollInfo(by peer: Peer, _ info: PollInfoInput) throws(RoomError) -> Poll {
        try peer.requireUnrestricted("poll-info-set")
        try requirePermission(.peer(peer), \.pollWrite, "pollWrite")
        try checkPollInfo(info)
        return try writePollInfo(info, in: peer.room, createdBy: peer.id)
    }

    /// `poll-questions-set`: replaces every question of a `created` poll.
    public func setPollQuestions(by peer: Peer, pollID: String, _ inputs: [QuestionInput]) throws(RoomError) -> Poll {
        let poll = try writablePoll(peer, pollID, call: "poll-questions-set")
        guard poll.state == .created else {
            throw RoomError(
                .wrongState,
                "poll \"\(pollID)\" is \(poll.state.rawValue): questions can only change while created"
            )
        }
        poll.questions = try makeQuestions(inputs)
        return poll
    }

    /// A draft poll of REST `POST /v2/rooms` (section 23): checked as
    /// `poll-info-set` and `poll-questions-set` check theirs, `created_by` null.
    /// Nothing is added when a check fails; `field` prefixes the paths named.
    public func preparePoll(
        _ info: PollInfoInput,
        questions inputs: [QuestionInput],
        in room: Room
    ) throws(RoomError)
        -> Poll
    {
        try checkPollInfo(info)
        let questions = try makeQuestions(inputs)
        if let id = info.pollID, room.polls[id] != nil {
            throw RoomError(.wrongState, "poll_id: the room already has a poll \"\(id)\"")
        }
        let poll = try writePollInfo(info, in: room, createdBy: nil)
        poll.questions = questions
        return poll
    }

    private func checkPollInfo(_ info: PollInfoInput) throws(RoomError) {
        try checkSize(info.title, field: "title", limit: Self.maxPollTextBytes)
        if !(0...Self.maxPollDurationS).contains(info.duration) {
            throw .invalidParams("duration: must be between 0 and \(Self.maxPollDurationS), got \(info.duration)")
        }
        for (field, roles) in [("vote", info.vote), ("responses", info.responses)] {
            for (index, name) in (roles ?? []).enumerated() where template.role(name) == nil {
                throw RoomError(.roleNotFound, "\(field)[\(index)]: no role named \"\(name)\"")
            }
        }
    }

    private func writePollInfo(_ info: PollInfoInput, in room: Room, createdBy: PeerID?) throws(RoomError) -> Poll {
        if let id = info.pollID, let poll = room.polls[id] {
            guard poll.state == .created else {
                throw RoomError(
                    .wrongState,
                    "poll \"\(id)\" is \(poll.state.rawValue): only a created poll can be edited"
                )
            }
            poll.apply(info)
            return poll
        }
        if room.polls.count >= settings.polls.maxPolls {
            throw RoomError(.tooMany, "the room already has \(settings.polls.maxPolls) polls (max_polls)")
        }
        let poll = Poll(
            id: info.pollID ?? ids.next(.poll),
            info: info,
            createdBy: createdBy,
            createdAt: clock.nowMillis(),
            sequence: room.polls.nextSequence(),
            room: room
        )
        room.polls.add(poll)
        return poll
    }

    private func makeQuestions(_ inputs: [QuestionInput]) throws(RoomError) -> [PollQuestion] {
        if inputs.count > Self.maxQuestionsPerPoll {
            throw RoomError(.tooMany, "questions: at most \(Self.maxQuestionsPerPoll) per poll, got \(inputs.count)")
        }
        var questions: [PollQuestion] = []
        for (i, input) in inputs.enumerated() {
            questions.append(try makeQuestion(input, index: i + 1))
        }
        return questions
    }

    private func makeQuestion(_ input: QuestionInput, index: Int) throws(RoomError) -> PollQuestion {
        let at = "questions[\(index - 1)]"
        try checkSize(input.text, field: "\(at).question.text", limit: Self.maxPollTextBytes)
        if input.text.isEmpty { throw .invalidParams("\(at).question.text: must not be empty") }
        if !(0...1000).contains(input.weight) {
            throw .invalidParams("\(at).question.weight: must be between 0 and 1000, got \(input.weight)")
        }
        for (name, value) in [("answer_min_len", input.answerMinLen), ("answer_max_len", input.answerMaxLen)] {
            if let value, !(0...Self.maxPollTextBytes).contains(value) {
                throw .invalidParams(
                    "\(at).question.\(name): must be between 0 and \(Self.maxPollTextBytes), got \(value)"
                )
            }
        }
        if let min = input.answerMinLen, let max = input.answerMaxLen, min > max {
            throw .invalidParams("\(at).question.answer_min_len: \(min) is over answer_max_len \(max)")
        }
        if input.options.count > Self.maxOptionsPerQuestion {
            throw RoomError(
                .tooMany,
                "\(at).options: at most \(Self.maxOptionsPerQuestion) per question, got \(input.options.count)"
            )
        }
        for (i, option) in input.options.enumerated() {
            try checkSize(option, field: "\(at).options[\(i)].text", limit: Self.maxPollTextBytes)
        }
        var answer: [Int]?
        if input.type.isChoice {
            if input.options.isEmpty {
                throw .invalidParams("\(at).options: a choice question needs at least one option")
            }
            if let given = input.answer {
                answer = try Self.validAnswer(given, type: input.type, options: input.options.count, at: "\(at).answer")
            }
        } else {
            if !input.options.isEmpty { throw .invalidParams("\(at).options: a text question has no options") }
            if input.answer != nil { throw .invalidParams("\(at).answer: a text question has no answer options") }
        }
        return PollQuestion(
            index: index,
            text: input.text,
            type: input.type,
            skippable: input.skippable,
            weight: input.weight,
            answerMinLen: input.answerMinLen,
            answerMaxLen: input.answerMaxLen,
            options: input.options,
            answer: answer
        )
    }

    /// A choice question's answer options, sorted: distinct, in range, one for single-choice.
    static func validAnswer(
        _ given: [Int],
        type: PollQuestionType,
        options: Int,
        at path: String
    ) throws(RoomError) -> [Int] {
        let sorted = Array(Set(given)).sorted()
        if sorted.isEmpty || sorted.count != given.count || sorted.contains(where: { !(1...options).contains($0) }) {
            throw .invalidParams("\(path): option indexes must be distinct, between 1 and \(options)")
        }
        if type == .singleChoice, sorted.count != 1 {
            throw .invalidParams("\(path): a single-choice question has one answer option")
        }
        return sorted
    }
}
