/// `settings.chat` (1.2, PROTOCOL.md section 19).
public struct ChatSettings: Sendable, Equatable {
    /// `history_size`, 0...10000: messages to everyone a room session keeps (0: none).
    public var historySize: Int = 200
    /// `blocked_words` (1.2, section 22): at most 1000 words of 1..64 bytes,
    /// each one word (Unicode letters, marks and digits), lower-cased here.
    public var blockedWords: [String] = []

    /// What `blocked_words` may hold.
    public static let maxBlockedWords = 1000
    public static let blockedWordBytes = 1...64

    public init(historySize: Int = 200, blockedWords: [String] = []) {
        self.historySize = historySize
        self.blockedWords = blockedWords.map { $0.lowercased() }
    }

    /// Whether `s` is one word: Unicode letters, marks and digits only (what the filter matches).
    public static func isOneWord(_ s: String) -> Bool {
        !s.isEmpty && s.unicodeScalars.allSatisfy(isWordScalar)
    }

    /// What a word is made of (section 22: a maximal run of Unicode letters
    /// and digits): letters, combining marks (a decomposed accent stays in
    /// its word) and numbers.
    public static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII {
            let v = scalar.value
            return (v >= 0x30 && v <= 0x39) || (v >= 0x41 && v <= 0x5A) || (v >= 0x61 && v <= 0x7A)
        }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber:
            return true
        default:
            return false
        }
    }
}

extension ChatSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        historySize = try c.int("history_size", default: historySize, in: 0...10000)
        let reported = c.problems.errors.count
        let given = try c.stringArray("blocked_words")
        guard c.problems.errors.count == reported else { return }  // a wrong type is reported by the cursor
        if given.count > Self.maxBlockedWords {
            c.report(c.path("blocked_words"), "expected at most \(Self.maxBlockedWords) words, got \(given.count)")
            return
        }
        var words: [String] = []
        var seen: Set<String> = []
        var valid = true
        for (i, word) in given.enumerated() {
            let lowered = word.lowercased()
            if !Self.blockedWordBytes.contains(word.utf8.count) {
                c.report(c.path("blocked_words", i), "must be 1 to 64 bytes, got \(word.utf8.count)")
                valid = false
            } else if !Self.isOneWord(word) {
                c.report(
                    c.path("blocked_words", i),
                    "must be one word of Unicode letters and digits (no spaces, punctuation or patterns)"
                )
                valid = false
            } else if !seen.insert(lowered).inserted {
                c.report(c.path("blocked_words", i), "duplicate word \"\(lowered)\" (words are lower-cased)")
                valid = false
            } else {
                words.append(lowered)
            }
        }
        if valid { blockedWords = words }
    }
}
