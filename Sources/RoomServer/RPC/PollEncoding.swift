import RoomModel
import RoomProtocol
import RoomWire

/// Wire shapes of PROTOCOL.md section 15: PollInfo, questions, PollResult,
/// responses and leaderboard entries.
extension JSONWriter {
    private mutating func optional(_ name: String, _ value: String?) {
        key(name)
        if let value { string(value) } else { null() }
    }

    private mutating func optional(_ name: String, _ value: PeerID?) { optional(name, value?.rawValue) }

    private mutating func optional(_ name: String, _ value: Int64?) {
        key(name)
        if let value { int(value) } else { null() }
    }

    private mutating func optionalStrings(_ name: String, _ values: [String]?) {
        key(name)
        if let values { strings(values) } else { null() }
    }

    /// The PollInfo members (inside an open object).
    mutating func pollInfoFields(_ poll: Poll) { pollInfoFields(FeedPollInfo(poll)) }

    /// The PollInfo members of a poll as it was (the audience feed's, RestFeed.swift).
    mutating func pollInfoFields(_ poll: FeedPollInfo) {
        field("poll_id", poll.pollID)
        field("title", poll.title)
        field("type", poll.type.rawValue)
        field("state", poll.state.rawValue)
        field("duration", poll.duration)
        field("anonymous", poll.anonymous)
        field("visibility", poll.visibility)
        optionalStrings("vote", poll.vote)
        optionalStrings("responses", poll.responses)
        optional("created_by", poll.createdBy)
        optional("started_by", poll.startedBy)
        optional("stopped_by", poll.stoppedBy)
        field("created_at", poll.createdAt)
        optional("started_at", poll.startedAt)
        optional("stopped_at", poll.stoppedAt)
        field("questions_count", poll.questionsCount)
    }

    mutating func pollInfo(_ poll: Poll, questions: Bool = false, withAnswers: Bool = false) {
        object { w in
            w.pollInfoFields(poll)
            if questions {
                w.key("questions")
                w.array { w in
                    for question in poll.questions {
                        w.pollQuestion(question, quiz: poll.type == .quiz, withAnswer: withAnswers)
                    }
                }
            }
        }
    }

    /// Question `{index, text, type, skippable, weight, answer_min_len?, answer_max_len?, options, answer?}`.
    mutating func pollQuestion(_ question: PollQuestion, quiz: Bool, withAnswer: Bool) {
        question.encode(into: &self, quiz: quiz, withAnswer: withAnswer)
    }

    /// The PollResult members (inside an open object).
    mutating func pollResultFields(_ poll: Poll, maxUser: Int, withCorrect: Bool) {
        field("poll_id", poll.id)
        field("user_count", poll.voters.count)
        field("max_user", maxUser)
        field("total_response", poll.totalResponses)
        key("questions")
        array { w in
            for (i, question) in poll.questions.enumerated() {
                let tally = i < poll.tallies.count ? poll.tallies[i] : QuestionTally(options: question.options.count)
                w.object { w in
                    w.field("question", question.index)
                    w.field("type", question.type.rawValue)
                    w.key("options")
                    w.array { w in for count in tally.optionCounts { w.int(count) } }
                    w.field("skipped", tally.skipped)
                    w.field("total", tally.total)
                    if poll.type == .quiz, withCorrect, question.answer != nil { w.field("correct", tally.correct) }
                }
            }
        }
    }

    /// The PollResult members of a poll as it was at the end of a second (the audience feed's).
    mutating func pollResultFields(_ stats: FeedPollStats) {
        field("poll_id", stats.pollID)
        field("user_count", stats.userCount)
        field("max_user", stats.maxUser)
        field("total_response", stats.totalResponse)
        key("questions")
        array { w in
            for entry in stats.questions {
                w.object { w in
                    w.field("question", entry.question)
                    w.field("type", entry.type)
                    w.key("options")
                    w.array { w in for count in entry.tally.optionCounts { w.int(count) } }
                    w.field("skipped", entry.tally.skipped)
                    w.field("total", entry.tally.total)
                    if entry.showsCorrect { w.field("correct", entry.tally.correct) }
                }
            }
        }
    }

    /// A `poll-responses` entry; anonymous polls never name the peer.
    mutating func pollRecord(_ record: PollRecord, question: PollQuestion?, anonymous: Bool) {
        object { w in
            w.field("question", record.question)
            if question?.type == .singleChoice, let option = record.options.first {
                w.field("option", option)
            } else if question?.type == .multipleChoice {
                w.key("options")
                w.array { w in for option in record.options { w.int(option) } }
            }
            if let text = record.text { w.field("text", text) }
            w.field("skipped", record.skipped)
            if !anonymous {
                w.key("peer")
                w.actorRef(record.peer)
            }
        }
    }
}
