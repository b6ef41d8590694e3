/// Why a byte sequence is not one JSON value, and where:
/// `line 3, column 9: expected ',' or '}', found '"'`.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Byte offset of the problem.
    public var offset: Int
    public var line: Int
    /// Counted in characters, not bytes.
    public var column: Int
    public var reason: String
    public var description: String { "line \(line), column \(column): \(reason)" }
}

/// A strict RFC 8259 parser over a byte buffer the caller keeps alive: no
/// trailing commas, no leading zeros, escapes and UTF-8 checked, numbers kept
/// as their text. Bounded: nesting deeper than `maxDepth` is an error, so
/// hostile input cannot exhaust the stack. Optionally rejects duplicate keys
/// (the role template does; wire messages let the last one win).
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private let maxDepth: Int
    private let rejectDuplicateKeys: Bool
    private var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, rejectDuplicateKeys: Bool) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.rejectDuplicateKeys = rejectDuplicateKeys
    }

    mutating func parseDocument() throws(JSONParseError) -> JSON {
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw fail("expected the end of the input, found \(found)") }
        return value
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    /// What is at the current position, for problems.
    private var found: String {
        guard let byte = current else { return "the end of the input" }
        return (0x21..<0x7F).contains(byte)
            ? "'\(Character(Unicode.Scalar(byte)))'"
            : "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    /// A problem at the current position.
    private func fail(_ reason: String) -> JSONParseError {
        let end = min(index, bytes.count)
        var line = 1
        var lineStart = 0
        for position in 0..<end where bytes[position] == 0x0A {
            line += 1
            lineStart = position + 1
        }
        var column = 1
        for position in lineStart..<end where bytes[position] & 0xC0 != 0x80 { column += 1 }
        return JSONParseError(offset: index, line: line, column: column, reason: reason)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func skip(_ byte: UInt8) -> Bool {
        guard current == byte else { return false }
        index += 1
        return true
    }

    private mutating func parseValue() throws(JSONParseError) -> JSON {
        skipWhitespace()
        switch current ?? 0 {  // 0 (also the end of the input) is no value
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectWord("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectWord("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("expected a value, found \(found)")
        }
    }

    private mutating func expectWord(_ word: StaticString) throws(JSONParseError) {
        let count = word.utf8CodeUnitCount
        let start = word.utf8Start
        guard index + count <= bytes.count, (0..<count).allSatisfy({ bytes[index + $0] == start[$0] }) else {
            throw fail("expected a value, found \(found)")
        }
        index += count
    }

    private mutating func enter() throws(JSONParseError) {
        depth += 1
        if depth > maxDepth { throw fail("nested deeper than \(maxDepth) levels") }
        index += 1
    }

    /// After a member or element: `,` continues, `close` ends.
    private mutating func next(close: UInt8) throws(JSONParseError) -> Bool {
        skipWhitespace()
        if skip(UInt8(ascii: ",")) { return true }
        guard skip(close) else { throw fail("expected ',' or '\(Character(Unicode.Scalar(close)))', found \(found)") }
        depth -= 1
        return false
    }

    private mutating func parseObject() throws(JSONParseError) -> JSON {
        try enter()
        var members: [JSON.Member] = []
        skipWhitespace()
        if skip(UInt8(ascii: "}")) {
            depth -= 1
            return .object(members)
        }
        repeat {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw fail("expected a string key, found \(found)") }
            let keyStart = index
            let key = try parseString()
            if rejectDuplicateKeys, members.contains(where: { $0.key == key }) {
                index = keyStart
                throw fail("duplicate key \"\(key)\"")
            }
            skipWhitespace()
            guard skip(UInt8(ascii: ":")) else { throw fail("expected ':', found \(found)") }
            members.append(JSON.Member(key, try parseValue()))
        } while try next(close: UInt8(ascii: "}"))
        return .object(members)
    }

    private mutating func parseArray() throws(JSONParseError) -> JSON {
        try enter()
        var items: [JSON] = []
        skipWhitespace()
        if skip(UInt8(ascii: "]")) {
            depth -= 1
            return .array(items)
        }
        repeat {
            items.append(try parseValue())
        } while try next(close: UInt8(ascii: "]"))
        return .array(items)
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, kept as text.
    private mutating func parseNumber() throws(JSONParseError) -> JSON {
        let start = index
        _ = skip(UInt8(ascii: "-"))
        if !skip(UInt8(ascii: "0")) { try digits() }
        if skip(UInt8(ascii: ".")) { try digits() }
        if skip(UInt8(ascii: "e")) || skip(UInt8(ascii: "E")) {
            _ = skip(UInt8(ascii: "+")) || skip(UInt8(ascii: "-"))
            try digits()
        }
        return .number(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
    }

    /// One or more decimal digits.
    private mutating func digits() throws(JSONParseError) {
        let start = index
        while let byte = current, byte >= 0x30, byte <= 0x39 { index += 1 }
        guard index > start else { throw fail("expected a digit, found \(found)") }
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes, one validation of the whole run, and none
        // when every byte is below 0x80: ASCII is valid UTF-8 as it is, and
        // `String(validating:)` is not specialized here (a generic metadata
        // lookup per call: 5 % of roomd's CPU on the taps; levers.md).
        var seen: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let run = UnsafeBufferPointer(rebasing: bytes[start..<index])
                let text = seen < 0x80 ? String(decoding: run, as: UTF8.self) : String(validating: run, as: UTF8.self)
                guard let text else {
                    index = start - 1  // point at the string
                    throw fail("string is not valid UTF-8")
                }
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("control character in string (escape it)") }
            seen |= byte
            index += 1
        }
        var scratch = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                // Escapes append valid UTF-8 of their own; only raw bytes >= 0x80 need the check.
                let text =
                    seen < 0x80 ? String(decoding: scratch, as: UTF8.self) : String(validating: scratch, as: UTF8.self)
                guard let text else {
                    index = start - 1  // point at the string
                    throw fail("string is not valid UTF-8")
                }
                index += 1
                return text
            case UInt8(ascii: "\\"):
                try escape(into: &scratch)
            default:
                if byte < 0x20 { throw fail("control character in string (escape it)") }
                seen |= byte
                scratch.append(byte)
                index += 1
            }
        }
        throw fail("unterminated string")
    }

    private mutating func escape(into scratch: inout [UInt8]) throws(JSONParseError) {
        let escapeStart = index
        index += 1  // backslash
        guard let escape = current else { throw fail("unterminated string") }
        index += 1
        switch escape {
        case UInt8(ascii: "\""): scratch.append(0x22)
        case UInt8(ascii: "\\"): scratch.append(0x5C)
        case UInt8(ascii: "/"): scratch.append(0x2F)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800...0xDBFF).contains(scalar) {
                let low = skip(UInt8(ascii: "\\")) && skip(UInt8(ascii: "u")) ? try hex4() : 0
                guard (0xDC00...0xDFFF).contains(low) else {
                    index = escapeStart
                    throw fail("invalid \\u escape (unpaired surrogate)")
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                index = escapeStart
                throw fail("invalid \\u escape (unpaired surrogate)")
            }
            scratch.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
        default:
            index -= 2
            throw fail("invalid escape in string")
        }
    }

    private mutating func hex4() throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            let digit: UInt32
            switch current ?? 0 {
            case let byte where byte >= 0x30 && byte <= 0x39: digit = UInt32(byte - 0x30)
            case let byte where byte >= 0x41 && byte <= 0x46: digit = UInt32(byte - 0x41 + 10)
            case let byte where byte >= 0x61 && byte <= 0x66: digit = UInt32(byte - 0x61 + 10)
            default: throw fail("expected 4 hex digits after \\u, found \(found)")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}
