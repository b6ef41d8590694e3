/// Running counts of one question.
public struct QuestionTally: Sendable, Equatable {
    /// Answers per option (index 0 is option 1).
    public var optionCounts: [Int]
    public var skipped = 0
    /// Answers that were not skips.
    public var total = 0
    /// Quiz: correct answers.
    public var correct = 0

    public init(options: Int) { optionCounts = Array(repeating: 0, count: options) }
}

/// One user's standing in a poll.
public struct PollVoter: Sendable, Equatable {
    public var userID: UserID
    /// The peer of the user's latest answer.
    public var peer: ActorRef
    /// Bit i set: question i+1 answered (at most 20 questions).
    var answered: UInt32 = 0
    public var score = 0
    public var correctResponses = 0
    public var totalResponses = 0
    /// Sum of the `duration` (ms) of the user's answers.
    public var duration: Int64 = 0
    /// Indexes into `Poll.records`.
    public var records: [Int] = []
}

/// One accepted answer (or skip).
public struct PollRecord: Sendable, Equatable {
    public var question: Int
    public var options: [Int]
    public var text: String?
    public var skipped: Bool
    public var userID: UserID
    public var peer: ActorRef
}
