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
    /// The ASCII words as lower-case bytes: a run of ASCII letters and digits
    /// (most of a chat) is looked up here, with no String made (measured:
    /// 269 µs for a 4 KiB message against 1,000 words with a String per word).
    private let asciiWords: Set<[UInt8]>
    /// Bit n: some ASCII word has n bytes (n < 64): other runs are not looked up.
    private let asciiLengths: UInt64
    /// The longest blocked word in scalars: a longer word of the text cannot match.
    private let longest: Int

    /// `words` as the template gives them (RoomConfig lower-cases and checks them).
    public init(_ words: [String]) {
        let lowered = words.map { $0.lowercased() }
        self.words = Set(lowered)
        let ascii = lowered.filter { $0.utf8.allSatisfy { $0 < 0x80 } && !$0.isEmpty }.map { Array($0.utf8) }
        asciiWords = Set(ascii)
        asciiLengths = ascii.reduce(0) { bits, word in word.count < 64 ? bits | (1 << UInt64(word.count)) : bits }
        longest = lowered.map { $0.unicodeScalars.count }.max() ?? 0
    }

    public var isEmpty: Bool { words.isEmpty }

    /// Whether `text` contains a blocked word.
    public func matches(_ text: String) -> Bool {
        if words.isEmpty { return false }
        let scalars = text.unicodeScalars
        var start: String.UnicodeScalarView.Index?
        var length = 0
        var ascii = true
        var run: [UInt8] = []
        run.reserveCapacity(64)
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let scalar = scalars[index]
            if ChatSettings.isWordScalar(scalar) {
                if start == nil {
                    start = index
                    length = 0
                    ascii = true
                    run.removeAll(keepingCapacity: true)
                }
                length += 1
                if scalar.isASCII, ascii {
                    let byte = UInt8(scalar.value)
                    run.append(byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte)
                } else {
                    ascii = false
                }
            } else if let from = start {
                if check(scalars[from..<index], length: length, ascii: ascii ? run : nil) { return true }
                start = nil
            }
            scalars.formIndex(after: &index)
        }
        if let from = start, check(scalars[from..<scalars.endIndex], length: length, ascii: ascii ? run : nil) {
            return true
        }
        return false
    }

    /// A run of a word: an ASCII one by its lower-case bytes; another
    /// lower-cased as a String (which may change its length: hence the
    /// generous cut), then looked up.
    private func check(_ run: Substring.UnicodeScalarView, length: Int, ascii: [UInt8]?) -> Bool {
        if let ascii {
            return length < 64 && asciiLengths & (1 << UInt64(length)) != 0 && asciiWords.contains(ascii)
        }
        guard length <= longest * 4 else { return false }
        return words.contains(String(String.UnicodeScalarView(run)).lowercased())
    }
}
