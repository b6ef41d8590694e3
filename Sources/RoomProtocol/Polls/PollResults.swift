import RoomWire

// Polls and quizzes (PROTOCOL.md section 15): a poll, the question drafts
// and answers a client writes, results, responses and the leaderboard.
// Same conventions as Peers.swift.

/// A question to write with ``RoomClient/setPollQuestions(pollID:_:timeout:)``.
public struct PollQuestionDraft: Sendable, Equatable {
    /// The question text.
    public var text: String
    /// Single or multiple choice, short or long answer.
    public var type: PollQuestionType
    /// Whether voters may skip it.
    public var skippable: Bool
    /// Points for a correct answer (quizzes), 0...1000.
    public var weight: Int
    /// Text answers: the fewest characters accepted.
    public var answerMinLen: Int?
    /// Text answers: the most characters accepted.
    public var answerMaxLen: Int?
    /// Option texts (choice questions: 1 to 10; text questions: none).
    public var options: [String]
    /// Quizzes: the correct option indexes (1-based); required for choice questions.
    public var answer: [Int]?

    /// Builds a question; `answer` is required for a quiz's choice questions.
    public init(
        _ text: String,
        type: PollQuestionType,
        options: [String] = [],
        answer: [Int]? = nil,
        skippable: Bool = false,
        weight: Int = 1,
        answerMinLen: Int? = nil,
        answerMaxLen: Int? = nil
    ) {
        self.text = text
        self.type = type
        self.options = options
        self.answer = answer
        self.skippable = skippable
        self.weight = weight
        self.answerMinLen = answerMinLen
        self.answerMaxLen = answerMaxLen
    }

    package var json: JSON {
        var question: [JSON.Member] = [
            .init("text", .string(text)), .init("type", .string(type.rawValue)),
            .init("skippable", .bool(skippable)), .init("weight", .int(weight)),
        ]
        if let answerMinLen { question.append(.init("answer_min_len", .int(answerMinLen))) }
        if let answerMaxLen { question.append(.init("answer_max_len", .int(answerMaxLen))) }
        var members: [JSON.Member] = [.init("question", .object(question))]
        if !options.isEmpty { members.append(.init("options", .array(options.map { ["text": .string($0)] }))) }
        if let answer {
            members.append(
                .init(
                    "answer",
                    type == .singleChoice && answer.count == 1
                        ? ["option": .int(answer[0])] : ["options": .array(answer.map { .int($0) })]
                )
            )
        }
        return .object(members)
    }
}

/// PollInfo, with the questions in `on-poll-start` (and a stopped quiz's `on-poll-stop`).
public struct PollInfo: Sendable, Equatable {
    /// Client-chosen or server-made, `[A-Za-z0-9_-]{1,64}`.
    public var pollID: String
    /// The title (at most 1024 bytes).
    public var title: String
    /// Poll or quiz.
    public var type: PollType
    /// Created, started or stopped.
    public var state: PollState
    /// Seconds; 0 = until stopped.
    public var duration: Int
    /// True: no response or leaderboard entry names its peer.
    public var anonymous: Bool
    /// True: results (and `on-poll-stats`) for every reader while it runs.
    public var visibility: Bool
    /// Roles that may vote; nil = every role.
    public var vote: [String]?
    /// Roles that may read every response; nil = none.
    public var responses: [String]?
    /// Peer ids of who created, started and stopped it.
    public var createdBy: String?
    public var startedBy: String?
    /// Nil when stopped by its `duration` (or not stopped).
    public var stoppedBy: String?
    /// When it was created, started and stopped (ms since the epoch).
    public var createdAt: Int64
    public var startedAt: Int64?
    public var stoppedAt: Int64?
    /// How many questions it has.
    public var questionsCount: Int
    /// Present in `on-poll-start` and a quiz's `on-poll-stop`.
    public var questions: [PollQuestion]?

    package init(_ r: WireReader) throws {
        try r.requireObject()
        pollID = try r.string("poll_id")
        title = try r.string("title")
        type = try r.choice("type")
        state = try r.choice("state")
        duration = try r.int("duration")
        anonymous = try r.bool("anonymous")
        visibility = try r.bool("visibility")
        vote = try r.optionalStrings("vote")
        responses = try r.optionalStrings("responses")
        createdBy = try r.optionalString("created_by")
        startedBy = try r.optionalString("started_by")
        stoppedBy = try r.optionalString("stopped_by")
        createdAt = try r.int64("created_at")
        startedAt = try r.optionalInt64("started_at")
        stoppedAt = try r.optionalInt64("stopped_at")
        questionsCount = try r.int("questions_count")
        questions = try r.optional("questions") { try r.elements($0, PollQuestion.init) }
    }
}

/// One answer of ``RoomClient/respondToPoll(pollID:_:timeout:)``.
public struct PollAnswer: Sendable, Equatable {
    /// The 1-based question index.
    public var question: Int
    /// Single choice: the option index (1-based).
    public var option: Int?
    /// Multiple choice: the option indexes (1-based).
    public var options: [Int]?
    /// Text questions: the answer.
    public var text: String?
    /// Skip a skippable question (it still counts as this user's answer).
    public var skipped: Bool
    /// Milliseconds taken to answer (ranks quiz ties).
    public var duration: Int?

    /// Builds one answer.
    public init(
        question: Int,
        option: Int? = nil,
        options: [Int]? = nil,
        text: String? = nil,
        skipped: Bool = false,
        duration: Int? = nil
    ) {
        self.question = question
        self.option = option
        self.options = options
        self.text = text
        self.skipped = skipped
        self.duration = duration
    }

    package var json: JSON {
        var members: [JSON.Member] = [.init("question", .int(question))]
        if let option { members.append(.init("option", .int(option))) }
        if let options { members.append(.init("options", .array(options.map { .int($0) }))) }
        if let text { members.append(.init("text", .string(text))) }
        if skipped { members.append(.init("skipped", true)) }
        if let duration { members.append(.init("duration", .int(duration))) }
        return .object(members)
    }
}

/// The `result` entry of one answer: `correct` (quizzes), or its own error
/// (40906 already answered, -32602 malformed) while the others still count.
public struct PollAnswerOutcome: Sendable, Equatable {
    /// The 1-based question index of the answer.
    public var question: Int
    /// Quizzes: whether the answer was right.
    public var correct: Bool?
    /// This entry's error code (40906, -32602, 41300), nil when it counted.
    public var errorCode: Int?
    /// The error's message, naming the field.
    public var errorMessage: String?

    package init(_ r: WireReader) throws {
        try r.requireObject()
        question = try r.int("question")
        correct = try r.optionalBool("correct")
        let error = try r.optionalObject("error") { e in (code: try e.int("code"), message: try e.string("message")) }
        errorCode = error?.code
        errorMessage = error?.message
    }
}

/// PollResult (and `on-poll-stats`): running counts.
public struct PollResult: Sendable, Equatable {
    public struct Question: Sendable, Equatable {
        /// The 1-based question index.
        public var question: Int
        /// The question's type.
        public var type: PollQuestionType
        /// Answers per option (option `i` is `options[i-1]`).
        public var options: [Int]
        /// Users who skipped it.
        public var skipped: Int
        /// Answers that were not skips.
        public var total: Int
        /// Quizzes, for those who may see the answers.
        public var correct: Int?
    }

    /// The poll.
    public var pollID: String
    /// Distinct voters.
    public var userCount: Int
    /// Peers in the room who may vote.
    public var maxUser: Int
    /// Answers that were not skips, over all questions.
    public var totalResponse: Int
    /// Per question, in order.
    public var questions: [Question]

    package init(_ r: WireReader) throws {
        try r.requireObject()
        pollID = try r.string("poll_id")
        userCount = try r.int("user_count")
        maxUser = try r.int("max_user")
        totalResponse = try r.int("total_response")
        questions = try r.elements("questions").map { q in
            try q.requireObject()
            return Question(
                question: try q.int("question"),
                type: try q.choice("type"),
                options: try q.ints("options"),
                skipped: try q.int("skipped"),
                total: try q.int("total"),
                correct: try q.optionalInt("correct")
            )
        }
    }
}

/// One entry of `poll-responses`; `peer` is nil in anonymous polls.
public struct PollResponse: Sendable, Equatable {
    /// The 1-based question index.
    public var question: Int
    /// Single choice: the option chosen.
    public var option: Int?
    /// Multiple choice: the options chosen.
    public var options: [Int]?
    /// Text questions: the answer.
    public var text: String?
    /// The user skipped the question.
    public var skipped: Bool
    /// Who answered; nil in anonymous polls.
    public var peer: PeerRef?

    package init(_ r: WireReader) throws {
        try r.requireObject()
        question = try r.int("question")
        option = try r.optionalInt("option")
        options = try r.optionalInts("options")
        text = try r.optionalString("text")
        skipped = try r.bool("skipped")
        peer = try r.optionalObject("peer", PeerRef.init)
    }
}

/// `poll-leaderboard`'s result.
public struct PollLeaderboard: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        /// 1…n, no shared places.
        public var position: Int
        /// Sum of the weights of the correct answers.
        public var score: Int
        /// Correct answers and all answers (skips included).
        public var correctResponses: Int
        public var totalResponses: Int
        /// Total ms taken to answer.
        public var duration: Int64
        /// Nil in anonymous quizzes.
        public var peer: PeerRef?
    }

    /// The quiz; nil for the session's leaderboard (1.2).
    public var pollID: String?
    /// Peers in the room who may vote (the session's: users who may vote in any stopped quiz).
    public var totalUsers: Int
    /// Users who answered at least once.
    public var votedUsers: Int
    /// Users who answered every question that has an answer correctly.
    public var correctUsers: Int
    /// This page, by position.
    public var entries: [Entry]
    /// True when no entries follow.
    public var last: Bool

    package init(_ r: WireReader) throws {
        try r.requireObject()
        pollID = try r.optionalString("poll_id")
        totalUsers = try r.int("total_users")
        votedUsers = try r.int("voted_users")
        correctUsers = try r.int("correct_users")
        entries = try r.elements("entries").map { e in
            try e.requireObject()
            return Entry(
                position: try e.int("position"),
                score: try e.int("score"),
                correctResponses: try e.int("correct_responses"),
                totalResponses: try e.int("total_responses"),
                duration: try e.int64("duration"),
                peer: try e.optionalObject("peer", PeerRef.init)
            )
        }
        last = try r.bool("last")
    }
}
