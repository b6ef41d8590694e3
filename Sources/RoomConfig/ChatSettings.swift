/// `settings.chat` (1.2, PROTOCOL.md section 19).
public struct ChatSettings: Sendable, Equatable {
    /// `history_size`, 0...10000: messages to everyone a room session keeps (0: none).
    public var historySize: Int = 200

    public init(historySize: Int = 200) {
        self.historySize = historySize
    }
}

extension ChatSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        historySize = try c.int("history_size", default: historySize, in: 0...10000)
    }
}
