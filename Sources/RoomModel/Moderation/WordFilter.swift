import Foundation
import RoomConfig

/// `settings.chat.blocked_words` as a matcher (1.2, PROTOCOL.md section 22).
///
/// A text and the blocked words are compared after the same normalisation:
/// Unicode compatibility normalisation (NFKC: fullwidth, mathematical and
/// other compatibility letters become the plain ones), lower-casing (Swift's
/// Unicode lower-case mapping, scalar by scalar), format and other
/// default-ignorable characters (Cf: zero-width space and joiners, soft
/// hyphen, word joiner, BOM; variation selectors) removed, and a homoglyph
/// fold: the Cyrillic and Greek letters that look like a Latin letter in
/// either case become that letter (`homoglyph(_:)` lists them).
///
/// The rule stays whole words: a word (a maximal run of Unicode letters,
/// marks and digits) matches when it equals a blocked word. Folded
/// separators add candidates that must equal a blocked word as a whole too:
/// the words of a run joined by separators with no space in them
/// ("d.a.r.n", "d_a_r_n", "da-rn"), and single letters separated by spaces
/// ("d a r n"), each such run joined into one. So "class" does not match
/// "ass", nor "c l a s s"; "x d a r n" is "xdarn", no match.
///
/// No regular expressions: one pass over the text's scalars (after one NFKC
/// pass when the text is not ASCII) and one set lookup per word and run, so
/// the cost is linear in the text whatever the list holds. The blocked words
/// are normalised once, at init. The entry point is `WordFilter.matches(_:)`
/// (the micro-benchmark's too).
public struct WordFilter: Sendable, Equatable {
    /// The normalised blocked words, as UTF-8.
    private let words: Set<[UInt8]>
    /// Bit n: some word has n bytes (bit 63: 63 or more): other lengths are not looked up.
    private let lengths: UInt64
    /// The longest normalised word in bytes: a longer word or run cannot match.
    fileprivate let longest: Int

    /// `words` as the template gives them (RoomConfig lower-cases and checks them).
    public init(_ words: [String]) {
        var keys = Set<[UInt8]>()
        for word in words {
            let key = Self.key(of: word)
            if !key.isEmpty { keys.insert(key) }
        }
        self.words = keys
        lengths = keys.reduce(0) { bits, key in bits | (1 << UInt64(min(key.count, 63))) }
        longest = keys.map(\.count).max() ?? 0
    }

    public var isEmpty: Bool { words.isEmpty }

    /// Whether `text` contains a blocked word.
    public func matches(_ text: String) -> Bool {
        if words.isEmpty { return false }
        var scan = Scan(longest: longest)
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            for byte in text.utf8 where scan.ascii(byte, in: self) { return true }
        } else {
            for scalar in text.precomposedStringWithCompatibilityMapping.unicodeScalars
            where scan.scalar(scalar, in: self) {
                return true
            }
        }
        return scan.finish(in: self)
    }

    fileprivate func contains(_ key: [UInt8]) -> Bool {
        let n = key.count
        guard n > 0, n <= longest, lengths & (1 << UInt64(min(n, 63))) != 0 else { return false }
        return words.contains(key)
    }

    /// A blocked word normalised as a text is: its word scalars, joined.
    static func key(of word: String) -> [UInt8] {
        var scan = Scan(longest: Int.max)
        for scalar in word.precomposedStringWithCompatibilityMapping.unicodeScalars {
            if scalar.isASCII {
                if let byte = Scan.asciiWordByte(UInt8(scalar.value)) { scan.word.append(byte) }
            } else if !Scan.isIgnorable(scalar), ChatSettings.isWordScalar(scalar) {
                scan.appendLetter(scalar, scalar.properties, isMark: scalar.properties.generalCategory.isMark)
            }
        }
        return scan.word
    }

    /// The Latin letter a Cyrillic or Greek lower-case letter looks like (in
    /// either case: `н` folds to h as `Н` looks like H), else nil. Cyrillic
    /// а в е к м н о р с т у х ѕ і ј һ ԁ ԛ ԝ ӏ ү, Greek α β ε ζ η ι κ μ ν ο ρ
    /// τ υ χ ϲ ϳ, and the Latin dotless ı.
    static func homoglyph(_ scalar: Unicode.Scalar) -> UInt8? {
        switch scalar.value {
        case 0x0430: UInt8(ascii: "a")
        case 0x0432: UInt8(ascii: "b")
        case 0x0435: UInt8(ascii: "e")
        case 0x043A: UInt8(ascii: "k")
        case 0x043C: UInt8(ascii: "m")
        case 0x043D: UInt8(ascii: "h")
        case 0x043E: UInt8(ascii: "o")
        case 0x0440: UInt8(ascii: "p")
        case 0x0441: UInt8(ascii: "c")
        case 0x0442: UInt8(ascii: "t")
        case 0x0443: UInt8(ascii: "y")
        case 0x0445: UInt8(ascii: "x")
        case 0x0455: UInt8(ascii: "s")
        case 0x0456: UInt8(ascii: "i")
        case 0x0458: UInt8(ascii: "j")
        case 0x04BB: UInt8(ascii: "h")
        case 0x0501: UInt8(ascii: "d")
        case 0x051B: UInt8(ascii: "q")
        case 0x051D: UInt8(ascii: "w")
        case 0x04CF: UInt8(ascii: "l")
        case 0x04AF: UInt8(ascii: "y")
        case 0x03B1: UInt8(ascii: "a")
        case 0x03B2: UInt8(ascii: "b")
        case 0x03B5: UInt8(ascii: "e")
        case 0x03B6: UInt8(ascii: "z")
        case 0x03B7: UInt8(ascii: "h")
        case 0x03B9: UInt8(ascii: "i")
        case 0x03BA: UInt8(ascii: "k")
        case 0x03BC: UInt8(ascii: "m")
        case 0x03BD: UInt8(ascii: "n")
        case 0x03BF: UInt8(ascii: "o")
        case 0x03C1: UInt8(ascii: "p")
        case 0x03C4: UInt8(ascii: "t")
        case 0x03C5: UInt8(ascii: "y")
        case 0x03C7: UInt8(ascii: "x")
        case 0x03F2: UInt8(ascii: "c")
        case 0x03F3: UInt8(ascii: "j")
        case 0x0131: UInt8(ascii: "i")
        default: nil
        }
    }
}

/// One pass over a text's normalised scalars: the current word's bytes and
/// the current run of joined words, both cut at the longest blocked word
/// (a longer one cannot match, and the buffers never grow past it).
private struct Scan {
    let longest: Int
    /// The current word, normalised, as UTF-8.
    var word: [UInt8] = []
    /// Its letters (scalars other than marks): 1 makes a single letter.
    var letters = 0
    var inWord = false
    /// The word ran past `longest`: it cannot match, nor a run holding it.
    var wordTooLong = false
    /// The run of words joined so far, and how many.
    var run: [UInt8] = []
    var runWords = 0
    var runTooLong = false
    /// The last word of the run was a single letter.
    var lastSingle = false
    /// The separators since the last word hold a space.
    var gapHasSpace = false

    init(longest: Int) {
        self.longest = longest
        word.reserveCapacity(min(longest, 64) + 4)
        run.reserveCapacity(min(longest, 64) + 4)
    }

    /// An ASCII letter or digit, lower-cased; nil for anything else.
    static func asciiWordByte(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39, 0x61...0x7A: byte
        case 0x41...0x5A: byte + 0x20
        default: nil
        }
    }

    /// Format characters (Cf) and other default-ignorable ones: removed.
    static func isIgnorable(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        return properties.generalCategory == .format || properties.isDefaultIgnorableCodePoint
    }

    mutating func ascii(_ byte: UInt8, in filter: WordFilter) -> Bool {
        if let lower = Self.asciiWordByte(byte) {
            inWord = true
            letters += 1
            append(lower)
            return false
        }
        return separator(space: byte == 0x20 || (byte >= 0x09 && byte <= 0x0D), in: filter)
    }

    mutating func scalar(_ scalar: Unicode.Scalar, in filter: WordFilter) -> Bool {
        if scalar.isASCII { return ascii(UInt8(scalar.value), in: filter) }
        let properties = scalar.properties
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .decimalNumber, .letterNumber,
            .otherNumber:
            inWord = true
            appendLetter(scalar, properties, isMark: false)
        case .otherLetter, .nonspacingMark, .spacingMark, .enclosingMark:
            // Variation selectors (marks) and fillers (letters) are default-ignorable.
            if properties.isDefaultIgnorableCodePoint { return false }
            inWord = true
            appendLetter(scalar, properties, isMark: properties.generalCategory != .otherLetter)
        case .format:
            return false
        default:
            if properties.isDefaultIgnorableCodePoint { return false }
            return separator(space: properties.isWhitespace, in: filter)
        }
        return false
    }

    /// A word scalar (not ASCII), lower-cased and folded.
    mutating func appendLetter(_ scalar: Unicode.Scalar, _ properties: Unicode.Scalar.Properties, isMark: Bool) {
        if properties.changesWhenLowercased {
            for lower in properties.lowercaseMapping.unicodeScalars {
                appendFolded(lower, isMark: lower.properties.generalCategory.isMark)
            }
        } else {
            appendFolded(scalar, isMark: isMark)
        }
    }

    private mutating func appendFolded(_ scalar: Unicode.Scalar, isMark: Bool) {
        if !isMark { letters += 1 }
        if scalar.isASCII {
            append(UInt8(scalar.value))
        } else if scalar.value >= 0x0131, scalar.value <= 0x051D, let latin = WordFilter.homoglyph(scalar) {
            append(latin)
        } else {
            UTF8.encode(scalar) { append($0) }
        }
    }

    private mutating func append(_ byte: UInt8) {
        if word.count < longest { word.append(byte) } else { wordTooLong = true }
    }

    private mutating func separator(space: Bool, in filter: WordFilter) -> Bool {
        if inWord, endWord(in: filter) { return true }
        if space { gapHasSpace = true }
        return false
    }

    /// The end of a word: the word itself, then the run it joins (or the
    /// run it ends, and a new one).
    private mutating func endWord(in filter: WordFilter) -> Bool {
        inWord = false
        defer {
            word.removeAll(keepingCapacity: true)
            letters = 0
            wordTooLong = false
            gapHasSpace = false
        }
        if !wordTooLong, filter.contains(word) { return true }
        let single = letters == 1
        if runWords > 0, !gapHasSpace || (lastSingle && single) {
            runWords += 1
            if wordTooLong || run.count + word.count > longest {
                runTooLong = true
            } else {
                run += word
            }
        } else {
            if endRun(in: filter) { return true }
            run.removeAll(keepingCapacity: true)
            run += word
            runWords = 1
            runTooLong = wordTooLong
        }
        lastSingle = single
        return false
    }

    private func endRun(in filter: WordFilter) -> Bool {
        runWords > 1 && !runTooLong && filter.contains(run)
    }

    mutating func finish(in filter: WordFilter) -> Bool {
        if inWord, endWord(in: filter) { return true }
        return endRun(in: filter)
    }
}

extension Unicode.GeneralCategory {
    fileprivate var isMark: Bool {
        switch self {
        case .nonspacingMark, .spacingMark, .enclosingMark: true
        default: false
        }
    }
}
