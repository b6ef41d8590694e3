import RoomConfig

/// `settings.chat.blocked_words` as a matcher (1.2, PROTOCOL.md section 22):
/// a text matches when one of its words, lower-cased, is a blocked word. A
/// word is a maximal run of Unicode letters, marks and digits; the words
/// are compared as Swift strings (canonical equivalence: a composed and a
/// decomposed "é" are the same). No regular expressions: one pass over the
/// text's scalars and one hash lookup per word, so the cost is linear in the
/// text whatever the list holds.
///
/// The entry point is `WordFilter.matches(_:)` (the micro-benchmark's too).
public struct WordFilter: Sendable, Equatable {
    private let words: Set<String>
    /// The longest blocked word in scalars: a longer word of the text cannot match.
    private let longest: Int

    /// `words` as the template gives them (RoomConfig lower-cases and checks them).
    public init(_ words: [String]) {
        let lowered = words.map { $0.lowercased() }
        self.words = Set(lowered)
        longest = lowered.map { $0.unicodeScalars.count }.max() ?? 0
    }

    public var isEmpty: Bool { words.isEmpty }

    /// Whether `text` contains a blocked word.
    public func matches(_ text: String) -> Bool {
        if words.isEmpty { return false }
        let scalars = text.unicodeScalars
        var start: String.UnicodeScalarView.Index?
        var length = 0
        var index = scalars.startIndex
        while index < scalars.endIndex {
            if ChatSettings.isWordScalar(scalars[index]) {
                if start == nil {
                    start = index
                    length = 0
                }
                length += 1
            } else if let from = start {
                if length <= longest * 4, check(scalars[from..<index]) { return true }
                start = nil
            }
            scalars.formIndex(after: &index)
        }
        if let from = start, length <= longest * 4, check(scalars[from..<scalars.endIndex]) { return true }
        return false
    }

    /// A run of a word: lower-cased (which may change its length: hence the
    /// generous cut above), then looked up.
    private func check(_ run: Substring.UnicodeScalarView) -> Bool {
        words.contains(String(String.UnicodeScalarView(run)).lowercased())
    }
}
