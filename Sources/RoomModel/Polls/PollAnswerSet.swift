import RoomWire

/// Points across a show (PROTOCOL.md section 21, "Polls, 1.2 wording"):
/// a quiz's correct answers set or corrected after it stopped (a
/// prediction), every score and `correct` count computed again.
extension RoomRegistry {
    /// One entry of `poll-answer-set`: a choice question and its correct options.
    public struct AnswerInput: Sendable, Equatable {
        public var question: Int
        public var options: [Int]

        public init(question: Int, options: [Int]) {
            self.question = question
            self.options = options
        }
    }

    /// `poll-answer-set` (`pollWrite`): a stopped quiz's answers. `echo` is
    /// the `answers` param as given, pushed back in `on-poll-answer` to every
    /// peer that may read the poll (those that got its `on-poll-stop`).
    public func setAnswers(
        by peer: Peer,
        pollID: String,
        _ answers: [AnswerInput],
        echo: JSON
    ) throws(RoomError) -> (poll: Poll, deliveries: [Delivery]) {
        let poll = try writablePoll(peer, pollID, call: "poll-answer-set")
        guard poll.type == .quiz else { throw .invalidParams("poll_id: poll \"\(pollID)\" is not a quiz") }
        guard poll.state == .stopped else {
            throw RoomError(
                .wrongState,
                "poll \"\(pollID)\" is \(poll.state.rawValue): answers are set with poll-questions-set before it stops"
            )
        }
        if answers.isEmpty { throw .invalidParams("answers: must not be empty") }
        var seen: Set<Int> = []
        var validated: [(index: Int, answer: [Int])] = []
        for (i, entry) in answers.enumerated() {
            let at = "answers[\(i)]"
            guard entry.question >= 1, entry.question <= poll.questions.count else {
                throw .invalidParams("\(at).question: the poll has no question \(entry.question)")
            }
            if !seen.insert(entry.question).inserted {
                throw .invalidParams("\(at).question: question \(entry.question) is given twice")
            }
            let question = poll.questions[entry.question - 1]
            guard question.type.isChoice else {
                throw .invalidParams("\(at).question: question \(entry.question) is a text question")
            }
            let answer = try Self.validAnswer(
                entry.options,
                type: question.type,
                options: question.options.count,
                at: at
            )
            validated.append((entry.question - 1, answer))
        }
        for (index, answer) in validated { poll.questions[index].answer = answer }
        rescore(poll)
        guard let room = poll.room else { return (poll, []) }
        let recipients = room.peersInJoinOrder.filter { mayRead($0, poll) }
        return (poll, [Delivery(.pollAnswer(pollID: poll.id, answers: echo), to: recipients)].nonEmpty)
    }

    /// Scores and `correct` counts from the records, with the questions' answers as they are now.
    func rescore(_ poll: Poll) {
        for q in poll.tallies.indices { poll.tallies[q].correct = 0 }
        for userID in poll.voters.keys {
            poll.voters[userID]!.score = 0
            poll.voters[userID]!.correctResponses = 0
        }
        for record in poll.records where !record.skipped {
            let q = record.question - 1
            guard q < poll.questions.count, let answer = poll.questions[q].answer, record.options == answer else {
                continue
            }
            poll.tallies[q].correct += 1
            poll.voters[record.userID]?.correctResponses += 1
            poll.voters[record.userID]?.score += poll.questions[q].weight
        }
    }
}
