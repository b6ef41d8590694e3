import RoomProtocol

/// `poll-info-set` params, validated by the model.
public struct PollInfoInput: Sendable {
    public var pollID: String?
    public var title: String
    public var type: PollType
    public var duration: Int
    public var anonymous: Bool
    public var visibility: Bool
    public var vote: [String]?
    public var responses: [String]?

    public init(
        pollID: String? = nil,
        title: String,
        type: PollType,
        duration: Int = 0,
        anonymous: Bool = false,
        visibility: Bool = false,
        vote: [String]? = nil,
        responses: [String]? = nil
    ) {
        self.pollID = pollID
        self.title = title
        self.type = type
        self.duration = duration
        self.anonymous = anonymous
        self.visibility = visibility
        self.vote = vote
        self.responses = responses
    }
}

/// One entry of `poll-questions-set`.
public struct QuestionInput: Sendable {
    public var text: String
    public var type: PollQuestionType
    public var skippable: Bool
    public var weight: Int
    public var answerMinLen: Int?
    public var answerMaxLen: Int?
    public var options: [String]
    /// Correct option indexes (1-based), for quizzes.
    public var answer: [Int]?

    public init(
        text: String,
        type: PollQuestionType,
        skippable: Bool = false,
        weight: Int = 1,
        answerMinLen: Int? = nil,
        answerMaxLen: Int? = nil,
        options: [String] = [],
        answer: [Int]? = nil
    ) {
        self.text = text
        self.type = type
        self.skippable = skippable
        self.weight = weight
        self.answerMinLen = answerMinLen
        self.answerMaxLen = answerMaxLen
        self.options = options
        self.answer = answer
    }
}

/// One entry of `poll-response`.
public struct ResponseInput: Sendable {
    public var question: Int
    public var option: Int?
    public var options: [Int]?
    public var text: String?
    public var skipped: Bool
    /// Milliseconds taken to answer.
    public var duration: Int64

    public init(
        question: Int,
        option: Int? = nil,
        options: [Int]? = nil,
        text: String? = nil,
        skipped: Bool = false,
        duration: Int64 = 0
    ) {
        self.question = question
        self.option = option
        self.options = options
        self.text = text
        self.skipped = skipped
        self.duration = duration
    }
}

/// The `result` entry of one response: `correct` for quizzes, or the error of that entry alone.
public struct ResponseOutcome: Sendable, Equatable {
    public var question: Int
    public var correct: Bool?
    public var error: RoomError?
}
