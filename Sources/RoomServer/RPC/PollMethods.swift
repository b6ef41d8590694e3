import RoomModel
import RoomProtocol
import RoomWire

/// Polls and quizzes (PROTOCOL.md section 15): params in, model, results out.
extension Dispatcher {
    static var pollMethods: [String: Method] {
        [
            "poll-info-set": .joined(Dispatcher.pollInfoSet),
            "poll-questions-set": .joined(Dispatcher.pollQuestionsSet),
            "poll-info-get": .joined(Dispatcher.pollInfoGet),
            "poll-questions-get": .joined(Dispatcher.pollQuestionsGet),
            "poll-start": .joined(Dispatcher.pollStart),
            "poll-stop": .joined(Dispatcher.pollStop),
            "poll-response": .joined(Dispatcher.pollResponse),
            "poll-list": .joined(Dispatcher.pollList),
            "poll-result": .joined(Dispatcher.pollResult),
            "poll-responses": .joined(Dispatcher.pollResponses),
            "poll-leaderboard": .joined(Dispatcher.pollLeaderboard),
            "poll-answer-set": .joined(Dispatcher.pollAnswerSet),
        ]
    }

    // MARK: authoring

    func pollInfoSet(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let poll = try registry.setPollInfo(by: peer, try Self.pollInfoInput(params))
        logger.info("poll info set", metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)", "poll": "\(poll.id)"])
        return Self.encode { w in w.field("poll_id", poll.id) }
    }

    func pollQuestionsSet(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let pollID = try params.id("poll_id", required: true)!
        let inputs = try Self.questionInputs(params, required: true)
        let poll = try registry.setPollQuestions(by: peer, pollID: pollID, inputs)
        return Self.encode { w in
            w.field("poll_id", poll.id)
            w.field("total_questions", poll.questions.count)
        }
    }

    /// `poll-info-set`'s params (also a draft poll of REST `POST /v2/rooms`).
    static func pollInfoInput(_ params: Params) throws(RoomError) -> PollInfoInput {
        PollInfoInput(
            pollID: try params.id("poll_id"),
            title: try params.requiredString("title"),
            type: try params.choice("type", PollType.self, required: true)!,
            duration: try params.int("duration", in: 0...RoomRegistry.maxPollDurationS) ?? 0,
            anonymous: try params.bool("anonymous") ?? false,
            visibility: try params.bool("visibility") ?? false,
            vote: try params.stringArray("vote"),
            responses: try params.stringArray("responses")
        )
    }

    /// `poll-questions-set`'s `questions` (also a draft poll's); absent → [] unless `required`.
    static func questionInputs(_ params: Params, required: Bool) throws(RoomError) -> [QuestionInput] {
        guard let entries = try params.objects("questions", required: required) else { return [] }
        if entries.count > RoomRegistry.maxQuestionsPerPoll {
            throw RoomError(
                .tooMany,
                "questions: at most \(RoomRegistry.maxQuestionsPerPoll) per poll, got \(entries.count)"
            )
        }
        var inputs: [QuestionInput] = []
        for entry in entries {
            let question = try entry.requiredObject("question")
            let options = try entry.objects("options") ?? []
            if options.count > RoomRegistry.maxOptionsPerQuestion {
                throw RoomError(
                    .tooMany,
                    "\(entry.path).options: at most \(RoomRegistry.maxOptionsPerQuestion) per question, got \(options.count)"
                )
            }
            var texts: [String] = []
            for option in options { texts.append(try option.requiredString("text")) }
            var answer: [Int]?
            if let given = try entry.object("answer") {
                switch (try given.int("option", in: 1...Int.max), try given.ints("options")) {
                case (let option?, nil): answer = [option]
                case (nil, let options?): answer = options
                case (nil, nil): throw .invalidParams("\(given.path): option or options required")
                case (.some, .some): throw .invalidParams("\(given.path): give option or options, not both")
                }
            }
            inputs.append(
                QuestionInput(
                    text: try question.requiredString("text"),
                    type: try question.choice("type", PollQuestionType.self, required: true)!,
                    skippable: try question.bool("skippable") ?? false,
                    weight: try question.int("weight", in: 0...1000) ?? 1,
                    answerMinLen: try question.int("answer_min_len", in: 0...RoomRegistry.maxPollTextBytes),
                    answerMaxLen: try question.int("answer_max_len", in: 0...RoomRegistry.maxPollTextBytes),
                    options: texts,
                    answer: answer
                )
            )
        }
        return inputs
    }

    // MARK: start and stop

    func pollStart(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let (poll, deliveries) = try registry.startPoll(by: peer, pollID: try params.id("poll_id", required: true)!)
        logger.info("poll started", metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)", "poll": "\(poll.id)"])
        fanOut(deliveries)
        return Self.encode { w in
            w.field("poll_id", poll.id)
            w.field("duration", poll.duration)
        }
    }

    func pollStop(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let (poll, deliveries) = try registry.stopPoll(by: peer, pollID: try params.id("poll_id", required: true)!)
        logger.info("poll stopped", metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)", "poll": "\(poll.id)"])
        fanOut(deliveries)
        return Self.encode { w in
            w.field("poll_id", poll.id)
            w.field("duration", poll.duration)
        }
    }

    // MARK: voting

    func pollResponse(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let pollID = try params.id("poll_id", required: true)!
        let entries = try params.objects("responses", required: true)!
        if entries.count > RoomRegistry.maxQuestionsPerPoll {
            throw .invalidParams("responses: at most \(RoomRegistry.maxQuestionsPerPoll) entries, got \(entries.count)")
        }
        var inputs: [ResponseInput] = []
        for entry in entries {
            inputs.append(
                ResponseInput(
                    question: try entry.requiredInt("question", in: 1...Int.max),
                    option: try entry.int("option", in: Int.min...Int.max),
                    options: try entry.ints("options"),
                    text: try entry.string("text"),
                    skipped: try entry.bool("skipped") ?? false,
                    duration: Int64(try entry.int("duration", in: 0...86_400_000) ?? 0)
                )
            )
        }
        let (poll, outcomes) = try registry.respond(peer, pollID: pollID, inputs)
        let accepted = outcomes.filter { $0.error == nil }.count
        if accepted > 0 { metrics.pollVotes.increment(by: accepted) }
        return Self.encode { w in
            w.field("poll_id", poll.id)
            w.key("result")
            w.array { w in
                for outcome in outcomes {
                    w.object { w in
                        w.field("question", outcome.question)
                        if let correct = outcome.correct { w.field("correct", correct) }
                        if let error = outcome.error {
                            w.key("error")
                            w.object { w in
                                w.field("code", error.code.rawValue)
                                w.field("message", error.message)
                            }
                        }
                    }
                }
            }
        }
    }

    // MARK: reading

    func pollInfoGet(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let poll = try registry.readablePoll(call.peer, try params.id("poll_id", required: true)!)
        var w = JSONWriter()
        w.pollInfo(poll)
        return w.bytes
    }

    func pollQuestionsGet(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let poll = try registry.readablePoll(peer, try params.id("poll_id", required: true)!)
        let index = try params.int("index", in: 1...Int.max) ?? 1
        let count = try params.int("count", in: 1...RoomRegistry.maxQuestionsPerPoll) ?? 10
        let page = poll.questions.dropFirst(index - 1).prefix(count)
        let withAnswer = registry.seesAnswers(peer, poll)
        return Self.encode { w in
            w.field("poll_id", poll.id)
            w.key("questions")
            w.array { w in for q in page { w.pollQuestion(q, quiz: poll.type == .quiz, withAnswer: withAnswer) } }
            w.field("last", poll.questions.count - min(index - 1, poll.questions.count) <= count)
        }
    }

    func pollList(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let polls = registry.listPolls(for: call.peer, state: try params.choice("state", PollState.self))
        return Self.encode { w in
            w.key("polls")
            w.array { w in for poll in polls { w.pollInfo(poll) } }
        }
    }

    func pollResult(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let poll = try registry.readablePoll(peer, try params.id("poll_id", required: true)!)
        try registry.requireResultAccess(peer, poll)
        let maxUser = poll.eligibleVoterCount(in: peer.room, roleNames: registry.template.roleNames)
        return Self.encode { w in
            w.pollResultFields(poll, maxUser: maxUser, withCorrect: registry.seesAnswers(peer, poll))
        }
    }

    func pollResponses(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let poll = try registry.readablePoll(peer, try params.id("poll_id", required: true)!)
        let own = try params.bool("self") ?? false
        let index = try params.int("index", in: 0...Int.max) ?? 0
        let count = try params.int("count", in: 1...100) ?? 100
        let (records, last) = try registry.pollResponses(peer, poll, own: own, index: index, count: count)
        return Self.encode { w in
            w.field("poll_id", poll.id)
            w.key("responses")
            w.array { w in
                for record in records {
                    let question = record.question <= poll.questions.count ? poll.questions[record.question - 1] : nil
                    w.pollRecord(record, question: question, anonymous: poll.anonymous)
                }
            }
            w.field("last", last)
        }
    }

    /// `poll-leaderboard`: a quiz's (`poll_id`), or the session's (without it, 1.2).
    func pollLeaderboard(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let pollID = try params.id("poll_id")
        let offset = try params.int("offset", in: 0...Int.max) ?? 0
        let count = try params.int("count", in: 1...100) ?? 10
        guard let pollID else {
            let board = registry.sessionLeaderboard(in: peer.room, offset: offset, count: count)
            return Self.encode { w in w.leaderboard(board, pollID: nil) }
        }
        let poll = try registry.readablePoll(peer, pollID)
        let board = try registry.leaderboard(peer, poll, offset: offset, count: count)
        return Self.encode { w in w.leaderboard(board, pollID: poll.id) }
    }

    /// `poll-answer-set` (1.2): a stopped quiz's answers, rescored.
    func pollAnswerSet(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let pollID = try params.id("poll_id", required: true)!
        let entries = try params.objects("answers", required: true)!
        if entries.count > RoomRegistry.maxQuestionsPerPoll {
            throw .invalidParams("answers: at most \(RoomRegistry.maxQuestionsPerPoll) entries, got \(entries.count)")
        }
        var answers: [RoomRegistry.AnswerInput] = []
        for entry in entries {
            let question = try entry.requiredInt("question", in: 1...RoomRegistry.maxQuestionsPerPoll)
            switch (try entry.int("option", in: 1...Int.max), try entry.ints("options")) {
            case (let option?, nil): answers.append(.init(question: question, options: [option]))
            case (nil, let options?): answers.append(.init(question: question, options: options))
            case (nil, nil): throw .invalidParams("\(entry.path): option or options required")
            case (.some, .some): throw .invalidParams("\(entry.path): give option or options, not both")
            }
        }
        let (poll, deliveries) = try registry.setAnswers(
            by: peer,
            pollID: pollID,
            answers,
            echo: params.value("answers") ?? .array([])
        )
        fanOut(deliveries)
        return Self.encode { w in w.field("poll_id", poll.id) }
    }
}

extension JSONWriter {
    /// A leaderboard's result; `pollID` nil for the session's.
    mutating func leaderboard(_ board: Leaderboard, pollID: String?) {
        key("poll_id")
        if let pollID { string(pollID) } else { null() }
        field("total_users", board.totalUsers)
        field("voted_users", board.votedUsers)
        field("correct_users", board.correctUsers)
        key("entries")
        array { w in
            for entry in board.entries {
                w.object { w in
                    w.field("position", entry.position)
                    w.field("score", entry.voter.score)
                    w.field("correct_responses", entry.voter.correctResponses)
                    w.field("total_responses", entry.voter.totalResponses)
                    w.field("duration", entry.voter.duration)
                    if entry.showsPeer {
                        w.key("peer")
                        w.actorRef(entry.voter.peer)
                    }
                }
            }
        }
        field("last", board.last)
    }
}

extension Params {
    func requiredInt(_ key: String, in range: ClosedRange<Int>) throws(RoomError) -> Int {
        guard let int = try int(key, in: range) else {
            throw .invalidParams("\(path.isEmpty ? key : "\(path).\(key)"): required")
        }
        return int
    }

    /// An array of integers.
    func ints(_ key: String) throws(RoomError) -> [Int]? {
        guard let value = value(key) else { return nil }
        let name = path.isEmpty ? key : "\(path).\(key)"
        guard let items = value.arrayValue else {
            throw .invalidParams("\(name): expected an array of integers, got \(value.typeName)")
        }
        var ints: [Int] = []
        for (index, item) in items.enumerated() {
            guard let int = item.intValue else {
                throw .invalidParams("\(name)[\(index)]: expected an integer, got \(item.typeName)")
            }
            ints.append(int)
        }
        return ints
    }
}
