/// Voting, results, responses and the quiz leaderboard (PROTOCOL.md section 15).
extension RoomRegistry {
    /// `poll-response`: one answer per user per question. Each entry is
    /// judged on its own: a second answer to a question is 40906 in that
    /// entry, a malformed one -32602, and the other entries still count.
    /// Cost: O(entries × options chosen) — counters are kept running.
    public func respond(_ peer: Peer, pollID: String, _ entries: [ResponseInput]) throws(RoomError)
        -> (poll: Poll, outcomes: [ResponseOutcome])
    {
        guard let poll = peer.room.polls[pollID], poll.state != .created || canWritePolls(peer) else {
            throw RoomError(.pollNotFound, "poll_id: no poll \"\(pollID)\"")
        }
        guard mayVote(peer, in: poll) else {
            throw RoomError(.permissionDenied, "permission denied: role \"\(peer.role.name)\" may not vote in this poll")
        }
        guard poll.state == .started else {
            throw RoomError(.wrongState, "poll \"\(pollID)\" is \(poll.state.rawValue): votes are taken while started")
        }
        if entries.count > Self.maxQuestionsPerPoll {
            throw .invalidParams("responses: at most \(Self.maxQuestionsPerPoll) entries, got \(entries.count)")
        }
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
    private func record(_ entry: ResponseInput, in poll: Poll, by voter: inout PollVoter, peer: Peer)
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
            guard let given = entry.text else { throw .invalidParams("text: required (or skipped) for question \(entry.question)") }
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
        poll.records.append(PollRecord(question: entry.question, options: chosen, text: text, skipped: entry.skipped,
                                       userID: peer.userID, peer: ActorRef(peer)))
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

    // MARK: reading results

    /// `poll-result`: `pollWrite`; anyone who may read or vote once
    /// `visibility` is true or the poll has stopped.
    public func requireResultAccess(_ peer: Peer, _ poll: Poll) throws(RoomError) {
        if canWritePolls(peer) { return }
        if poll.visibility || poll.state == .stopped { return }
        throw RoomError(.permissionDenied, "permission denied: results of poll \"\(poll.id)\" are not visible yet")
    }

    /// `poll-responses`: a page of answers (`own`: the caller's user only).
    public func pollResponses(_ peer: Peer, _ poll: Poll, own: Bool, index: Int, count: Int) throws(RoomError)
        -> (records: [PollRecord], last: Bool)
    {
        if own {
            guard mayVote(peer, in: poll) || canWritePolls(peer) else {
                throw RoomError(.permissionDenied, "permission denied: role \"\(peer.role.name)\" may not vote in this poll")
            }
            let mine = poll.voters[peer.userID]?.records ?? []
            let page = mine.dropFirst(index).prefix(count).map { poll.records[$0] }
            return (page, mine.count - min(index, mine.count) <= count)  // no overflow for any index
        }
        let allowed = canWritePolls(peer) || (poll.responses?.contains(peer.role.name) ?? false)
        guard allowed else {
            throw RoomError(.permissionDenied, "permission denied: role lacks pollWrite and is not in the poll's responses roles")
        }
        let page = Array(poll.records.dropFirst(index).prefix(count))
        return (page, poll.records.count - min(index, poll.records.count) <= count)
    }

    /// `poll-leaderboard`: quizzes only; `pollWrite`, or anyone who may read once stopped.
    public func leaderboard(_ peer: Peer, _ poll: Poll, offset: Int, count: Int) throws(RoomError) -> Leaderboard {
        guard poll.type == .quiz else { throw .invalidParams("poll_id: poll \"\(poll.id)\" is not a quiz") }
        guard canWritePolls(peer) || poll.state == .stopped else {
            throw RoomError(.permissionDenied, "permission denied: the leaderboard is shown once the quiz has stopped")
        }
        let graded = poll.questions.filter { $0.answer != nil }.count
        let ranked = poll.voters.values.sorted { a, b in
            if a.score != b.score { return a.score > b.score }
            if a.duration != b.duration { return a.duration < b.duration }
            return (a.peer.peerID ?? "", a.userID) < (b.peer.peerID ?? "", b.userID)
        }
        let room = poll.room ?? peer.room
        let entries = ranked.enumerated().dropFirst(offset).prefix(count).map { position, voter in
            LeaderboardEntry(position: position + 1, voter: voter)
        }
        return Leaderboard(totalUsers: poll.eligibleVoterCount(in: room, roleNames: template.roleNames),
                           votedUsers: ranked.count,
                           correctUsers: ranked.filter { graded > 0 && $0.correctResponses == graded }.count,
                           entries: entries, last: ranked.count - min(offset, ranked.count) <= count)
    }

    // MARK: on-poll-stats

    /// The stats interval is served in slices: every peer belongs to one
    /// slice (by join order), and each timer tick serves one slice, so that a
    /// poll in a room of 10,000 sends ~500 pushes every twentieth of the
    /// interval instead of 10,000 at once (a burst that would hold up the votes
    /// behind it). A peer's slice comes round once per interval: at most one
    /// push per poll per peer per interval, and only when a vote counted since
    /// its slice's last push. At most 20 slices, each at least 50 ms apart.
    public var pollStatsSlices: Int { max(1, min(20, settings.polls.statsIntervalMs / 50)) }

    /// The stats timer's period: the interval divided by the slices, rounded
    /// up (so that a slice comes round no sooner than once per interval).
    public var pollStatsTickMs: Int {
        let slices = pollStatsSlices
        return (settings.polls.statsIntervalMs + slices - 1) / slices
    }

    /// One stats tick (the server calls this every `pollStatsTickMs`): for
    /// each poll with votes its slice has not heard of, one `on-poll-stats`
    /// to that slice's `pollWrite` peers (with `correct`) and, with
    /// `visibility`, to its other peers that may read the poll. Each
    /// delivery is encoded once for all its recipients.
    public func tickPollStats() -> [Delivery] {
        let slices = pollStatsSlices
        var deliveries: [Delivery] = []
        pollSchedule.tickStats(slices: slices) { poll, room, slice in
            var writers: [Peer] = []
            var readers: [Peer] = []
            for peer in room.peersInJoinOrder where peer.sequence % slices == slice {
                if canWritePolls(peer) {
                    writers.append(peer)
                } else if poll.visibility, mayRead(peer, poll) {
                    readers.append(peer)
                }
            }
            let maxUser = poll.eligibleVoterCount(in: room, roleNames: template.roleNames)
            deliveries.append(Delivery(.pollStats(poll, maxUser: maxUser, withCorrect: true), to: writers))
            // The quiz's correct counts would hint at the answers: others see them once it stopped.
            deliveries.append(Delivery(.pollStats(poll, maxUser: maxUser, withCorrect: poll.answersPublic), to: readers))
        }
        return deliveries.nonEmpty
    }
}

/// `poll-leaderboard`'s result.
public struct Leaderboard: Sendable {
    public var totalUsers: Int
    public var votedUsers: Int
    public var correctUsers: Int
    public var entries: [LeaderboardEntry]
    public var last: Bool
}

public struct LeaderboardEntry: Sendable {
    public var position: Int
    public var voter: PollVoter
}
