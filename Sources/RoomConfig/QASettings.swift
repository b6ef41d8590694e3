/// `settings.qa` (1.2, PROTOCOL.md section 21).
public struct QASettings: Sendable, Equatable {
    /// `max_questions`, 1...10000: questions a room session takes (deleted ones count).
    public var maxQuestions: Int = 500
    /// `interval_ms`, 100...60000: at most one `on-questions` per peer per interval.
    public var intervalMs: Int = 1000

    public init(maxQuestions: Int = 500, intervalMs: Int = 1000) {
        self.maxQuestions = maxQuestions
        self.intervalMs = intervalMs
    }
}

extension QASettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        maxQuestions = try c.int("max_questions", default: maxQuestions, in: 1...10000)
        intervalMs = try c.int("interval_ms", default: intervalMs, in: 100...60000)
    }
}
