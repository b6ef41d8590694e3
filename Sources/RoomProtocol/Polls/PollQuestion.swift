import RoomWire

// A poll's questions (PROTOCOL.md section 15): as the server reports them,
// and as `poll-questions-set` writes them. Same conventions as Peers.swift.

/// The kind of a question: choice questions offer options, text questions take free text.
public enum PollQuestionType: String, Sendable, Equatable, Hashable, CaseIterable {
    case singleChoice = "single-choice"
    case multipleChoice = "multiple-choice"
    case shortAnswer = "short-answer"
    case longAnswer = "long-answer"

    /// Single or multiple choice.
    public var isChoice: Bool { self == .singleChoice || self == .multipleChoice }
}

/// A question as the server reports it (`index` is 1-based). `answer`
/// (the correct option indexes) is set for quizzes only for `pollWrite`
/// peers, or for everyone once the quiz stopped. The server keeps its
/// polls' questions as these values (answers sorted).
public struct PollQuestion: Sendable, Equatable, Hashable {
    /// 1-based position in the poll.
    public var index: Int
    /// The question text.
    public var text: String
    /// Single or multiple choice, short or long answer.
    public var type: PollQuestionType
    /// Whether `skipped: true` is accepted.
    public var skippable: Bool
    /// Points for a correct answer (quizzes).
    public var weight: Int
    /// Text answers: the fewest characters accepted.
    public var answerMinLen: Int?
    /// Text answers: the most characters accepted.
    public var answerMaxLen: Int?
    /// Option texts in order (option `i` is `options[i-1]`).
    public var options: [String]
    /// Quizzes: the correct option indexes (1-based), when this peer may see them.
    public var answer: [Int]?

    /// Builds a question, e.g. an expected value in a test.
    public init(
        index: Int,
        text: String,
        type: PollQuestionType,
        skippable: Bool,
        weight: Int,
        answerMinLen: Int? = nil,
        answerMaxLen: Int? = nil,
        options: [String],
        answer: [Int]? = nil
    ) {
        self.index = index
        self.text = text
        self.type = type
        self.skippable = skippable
        self.weight = weight
        self.answerMinLen = answerMinLen
        self.answerMaxLen = answerMaxLen
        self.options = options
        self.answer = answer
    }

    package init(_ r: WireReader) throws {
        try r.requireObject()
        index = try r.int("index")
        text = try r.string("text")
        type = try r.choice("type")
        skippable = try r.bool("skippable")
        weight = try r.int("weight")
        answerMinLen = try r.optionalInt("answer_min_len")
        answerMaxLen = try r.optionalInt("answer_max_len")
        options = try r.elements("options").map { try $0.string("text") }
        answer = try r.optionalObject("answer") { a in try a.optionalInt("option").map { [$0] } ?? a.ints("options") }
    }

    /// `{index, text, type, skippable, weight, answer_min_len?, answer_max_len?,
    /// options:[{index, text}], answer?}`: `answer` only for a quiz shown `withAnswer`.
    @inlinable
    public func encode(into w: inout JSONWriter, quiz: Bool, withAnswer: Bool) {
        w.beginObject()
        w.field("index", index)
        w.field("text", text)
        w.field("type", type.rawValue)
        w.field("skippable", skippable)
        w.field("weight", weight)
        if let answerMinLen { w.field("answer_min_len", answerMinLen) }
        if let answerMaxLen { w.field("answer_max_len", answerMaxLen) }
        w.key("options")
        w.beginArray()
        for (i, text) in options.enumerated() {
            w.beginObject()
            w.field("index", i + 1)
            w.field("text", text)
            w.endObject()
        }
        w.endArray()
        if quiz, withAnswer, let answer {
            w.key("answer")
            w.beginObject()
            if type == .singleChoice {
                w.field("option", answer[0])
            } else {
                w.key("options")
                w.wireInts(answer)
            }
            w.endObject()
        }
        w.endObject()
    }
}
