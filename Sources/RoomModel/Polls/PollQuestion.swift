/// A question's kind: choice questions offer options, text questions take free text.
public enum QuestionType: String, Sendable, CaseIterable {
    case singleChoice = "single-choice"
    case multipleChoice = "multiple-choice"
    case shortAnswer = "short-answer"
    case longAnswer = "long-answer"

    public var isChoice: Bool { self == .singleChoice || self == .multipleChoice }
}

/// One question as stored: 1-based `index`, option texts in order, and for a
/// quiz the correct option indexes (sorted).
public struct PollQuestion: Sendable, Equatable {
    public var index: Int
    public var text: String
    public var type: QuestionType
    public var skippable: Bool
    public var weight: Int
    public var answerMinLen: Int?
    public var answerMaxLen: Int?
    public var options: [String]
    public var answer: [Int]?
}
