/// Voting (PROTOCOL.md section 15): one answer per user per question,
/// counted as it comes. Results are read in PollResults.swift.
extension RoomRegistry {
    /// `poll-response`: one answer per user per question. Each entry is
    /// judged on its own: a second answer to a question is 40906 in that
    /// entry, a malformed one -32602, and the other entries still count.
    /// Cost: O(entries × options chosen) — counters are kept running.
    public func respond(
        _ peer: Peer,
        pollID: String,
        _ entries: [ResponseInput]
    ) throws(RoomError)
        -> (poll: Poll, outcomes: [ResponseOutcome])
    {
        guard let poll = peer.room.polls[pollID], poll.state != .created || canWritePolls(peer) else {
            throw RoomError(.pollNotFound, "poll_id: no poll \"\(pollID)\"")
        }
        guard mayVote(peer, in: poll) else {
            throw RoomError(
                .permissionDenied,
                "permission denied: role \"\(peer.role.name)\" may not vote in this poll"
            )
        }
        guard poll.state == .started else {
            throw RoomError(.wrongState, "poll \"\(pollID)\" is \(poll.state.rawValue): votes are taken while started")
        }
        if entries.count > Self.maxQuestionsPerPoll {
            throw .invalidParams("responses: at most \(Self.maxQuestionsPerPoll) entries, got \(entries.count)")
        }
        // Before the counts change: the feed's last second closes first, with the counts it ended with.
        peer.room.feed?.willVote(poll, at: clock.nowMillis())
        var voter = poll.voters[peer.userID] ?? PollVoter(userID: peer.userID, peer: ActorRef(peer))
        var outcomes: [ResponseOutcome] = []
        var accepted = false
        for entry in entries {
            do throws(RoomError) {
                let correct = try record(entry, in: poll, by: &voter, peer: peer)
                outcomes.append(ResponseOutcome(question: entry.question, correct: correct))
                accepted = true
            } catch {
                outcomes.append(ResponseOutcome(question: entry.question, error: error))
            }
        }
        if accepted {
            voter.peer = ActorRef(peer)
            poll.voters[peer.userID] = voter
            pollSchedule.statsChanged(poll)
        }
        return (poll, outcomes)
    }

    /// Validates and counts one answer; returns `correct` for a quiz question with an answer.
    private func record(
        _ entry: ResponseInput,
        in poll: Poll,
        by voter: inout PollVoter,
        peer: Peer
    )
        throws(RoomError) -> Bool?
    {
        guard entry.question >= 1, entry.question <= poll.questions.count else {
            throw .invalidParams("question: the poll has no question \(entry.question)")
        }
        let bit = UInt32(1) << UInt32(entry.question - 1)
        if voter.answered & bit != 0 {
            throw RoomError(.alreadyAnswered, "question \(entry.question) was already answered by this user")
        }
        let question = poll.questions[entry.question - 1]
        let hasAnswer = entry.option != nil || entry.options != nil || entry.text != nil
        var chosen: [Int] = []
        var text: String?
        if entry.skipped {
            if !question.skippable { throw .invalidParams("skipped: question \(entry.question) is not skippable") }
            if hasAnswer { throw .invalidParams("skipped: give an answer or skipped, not both") }
        } else if question.type.isChoice {
            if entry.text != nil { throw .invalidParams("text: question \(entry.question) is a choice question") }
            switch (entry.option, entry.options) {
            case (let option?, nil): chosen = [option]
            case (nil, let options?):
                if question.type == .singleChoice {
                    throw .invalidParams("options: question \(entry.question) is single-choice, give option")
                }
                chosen = options
            case (nil, nil): throw .invalidParams("option: required (or skipped) for question \(entry.question)")
            case (.some, .some): throw .invalidParams("option and options: give one, not both")
            }
            let valid = { (option: Int) in option >= 1 && option <= question.options.count }
            if chosen.isEmpty || Set(chosen).count != chosen.count || !chosen.allSatisfy(valid) {
                throw .invalidParams("option: indexes must be distinct, between 1 and \(question.options.count)")
            }
        } else {
            if entry.option != nil || entry.options != nil {
                throw .invalidParams("option: question \(entry.question) is a text question")
            }
            guard let given = entry.text else {
                throw .invalidParams("text: required (or skipped) for question \(entry.question)")
            }
            try checkSize(given, field: "text", limit: Self.maxPollTextBytes)
            let length = given.count
            if let min = question.answerMinLen, length < min {
                throw .invalidParams("text: \(length) characters, answer_min_len is \(min)")
            }
            if let max = question.answerMaxLen, length > max {
                throw .invalidParams("text: \(length) characters, answer_max_len is \(max)")
            }
            text = given
        }
        // Accepted: count it.
        voter.answered |= bit
        voter.totalResponses += 1
        voter.duration += max(0, entry.duration)
        voter.records.append(poll.records.count)
        chosen.sort()
        poll.records.append(
            PollRecord(
                question: entry.question,
                options: chosen,
                text: text,
                skipped: entry.skipped,
                userID: peer.userID,
                peer: ActorRef(peer)
            )
        )
        let q = entry.question - 1
        if entry.skipped {
            poll.tallies[q].skipped += 1
            return poll.type == .quiz && question.answer != nil ? false : nil
        }
        poll.tallies[q].total += 1
        poll.totalResponses += 1
        for option in chosen { poll.tallies[q].optionCounts[option - 1] += 1 }
        guard poll.type == .quiz, let answer = question.answer else { return nil }
        let correct = chosen == answer
        if correct {
            poll.tallies[q].correct += 1
            voter.correctResponses += 1
            voter.score += question.weight
        }
        return correct
    }
}
