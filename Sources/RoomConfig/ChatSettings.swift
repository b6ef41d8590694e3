/// `settings.chat` (1.2, PROTOCOL.md section 19).
public struct ChatSettings: Sendable, Equatable {
    /// `history_size`, 0...10000: messages to everyone a room session keeps (0: none).
    public var historySize: Int = 200
    /// `blocked_words` (1.2, section 22): at most 1000 words of 1..64 bytes,
    /// each one word (Unicode letters, marks and digits), lower-cased here.
    public var blockedWords: [String] = []
    /// `blocked_domains` (1.3, section 31): at most 1000 host names, each
    /// `[a-z0-9-]` labels joined by dots (1..253 bytes), lower-cased here; a
    /// link to one of them or to a subdomain of one is refused (40302).
    public var blockedDomains: [String] = []
    /// `hold` (1.3, section 31): which messages to everyone wait for a moderator.
    public var hold = HoldSettings()

    /// `settings.chat.hold`.
    public struct HoldSettings: Sendable, Equatable {
        /// The user's first message to everyone of the session.
        public var firstMessage = false
        /// A message with a link (`http://`, `https://`, `www.` and a host).
        public var links = false
        /// A message with one of these words (matched as `blocked_words` are), lower-cased.
        public var words: [String] = []

        public init(firstMessage: Bool = false, links: Bool = false, words: [String] = []) {
            self.firstMessage = firstMessage
            self.links = links
            self.words = words.map { $0.lowercased() }
        }

        /// Whether any rule holds anything.
        public var isOn: Bool { firstMessage || links || !words.isEmpty }
    }

    /// What `blocked_words` may hold.
    public static let maxBlockedWords = 1000
    public static let blockedWordBytes = 1...64
    /// What `blocked_domains` may hold.
    public static let maxBlockedDomains = 1000

    public init(
        historySize: Int = 200,
        blockedWords: [String] = [],
        blockedDomains: [String] = [],
        hold: HoldSettings = HoldSettings()
    ) {
        self.historySize = historySize
        self.blockedWords = blockedWords.map { $0.lowercased() }
        self.blockedDomains = blockedDomains.map { $0.lowercased() }
        self.hold = hold
    }

    /// Whether `s` is a host name `blocked_domains` takes: labels of ASCII
    /// letters, digits and `-` (not at a label's ends), joined by single
    /// dots, 1...253 bytes.
    public static func isHostName(_ s: String) -> Bool {
        guard (1...253).contains(s.utf8.count) else { return false }
        return s.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            guard (1...63).contains(label.utf8.count), label.first != "-", label.last != "-" else { return false }
            return label.unicodeScalars.allSatisfy { $0.isASCII && (isWordScalar($0) || $0 == "-") }
        }
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
        if let words = try Self.words(c, "blocked_words") { blockedWords = words }
        blockedDomains = try Self.domains(c)
        hold =
            try c.object("hold") { h throws(TemplateError) in
                var hold = HoldSettings()
                hold.firstMessage = try h.bool("first_message", default: false)
                hold.links = try h.bool("links", default: false)
                hold.words = try Self.words(h, "words") ?? []
                return hold
            } ?? HoldSettings()
    }

    /// A list of words the filter matches (`blocked_words`, `hold.words`):
    /// at most 1000 one-word strings of 1..64 bytes, unique once lower-cased;
    /// nil when one is wrong (each reported).
    static func words(_ c: TemplateCursor, _ key: String) throws(TemplateError) -> [String]? {
        let reported = c.problems.errors.count
        let given = try c.stringArray(key)
        guard c.problems.errors.count == reported else { return nil }  // a wrong type is reported by the cursor
        if given.count > Self.maxBlockedWords {
            c.report(c.path(key), "expected at most \(Self.maxBlockedWords) words, got \(given.count)")
            return nil
        }
        var words: [String] = []
        var seen: Set<String> = []
        var valid = true
        for (i, word) in given.enumerated() {
            let lowered = word.lowercased()
            if !Self.blockedWordBytes.contains(word.utf8.count) {
                c.report(c.path(key, i), "must be 1 to 64 bytes, got \(word.utf8.count)")
                valid = false
            } else if !Self.isOneWord(word) {
                c.report(
                    c.path(key, i),
                    "must be one word of Unicode letters and digits (no spaces, punctuation or patterns)"
                )
                valid = false
            } else if !seen.insert(lowered).inserted {
                c.report(c.path(key, i), "duplicate word \"\(lowered)\" (words are lower-cased)")
                valid = false
            } else {
                words.append(lowered)
            }
        }
        return valid ? words : nil
    }

    /// `blocked_domains`: at most 1000 host names, unique once lower-cased.
    static func domains(_ c: TemplateCursor) throws(TemplateError) -> [String] {
        let reported = c.problems.errors.count
        let given = try c.stringArray("blocked_domains")
        guard c.problems.errors.count == reported else { return [] }
        if given.count > Self.maxBlockedDomains {
            c.report(
                c.path("blocked_domains"),
                "expected at most \(Self.maxBlockedDomains) host names, got \(given.count)"
            )
            return []
        }
        var domains: [String] = []
        var seen: Set<String> = []
        for (i, domain) in given.enumerated() {
            let lowered = domain.lowercased()
            if !Self.isHostName(lowered) {
                c.report(
                    c.path("blocked_domains", i),
                    "must be a host name like example.com (labels of letters, digits and -), got \"\(domain.prefix(80))\""
                )
            } else if !seen.insert(lowered).inserted {
                c.report(c.path("blocked_domains", i), "duplicate host \"\(lowered)\" (hosts are lower-cased)")
            } else {
                domains.append(lowered)
            }
        }
        return domains
    }
}
