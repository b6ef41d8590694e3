/// A strict RFC 8259 parser for the template file. Unlike Foundation's it
/// rejects duplicate keys and trailing commas, keeps booleans apart from
/// numbers, and says where the text is wrong:
/// `invalid JSON: line 3, column 9: expected ',' or '}', found '"'`.
struct TemplateJSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0
    private static let maxDepth = 256

    static func parse(_ bytes: [UInt8]) throws(TemplateError) -> TemplateJSON {
        var p = TemplateJSONParser(bytes: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { p.index = 3 }  // UTF-8 byte order mark
        let value = try p.value()
        p.skipWhitespace()
        guard p.index == bytes.count else { throw p.error("expected the end of the file, found \(p.found)") }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func value() throws(TemplateError) -> TemplateJSON {
        skipWhitespace()
        switch current ?? 0 {  // 0 (also the end of the file) is no value
        case UInt8(ascii: "{"): return try container(close: "}") { p throws(TemplateError) in try p.members() }
        case UInt8(ascii: "["): return try container(close: "]") { p throws(TemplateError) in try p.elements() }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("expected a value, found \(found)")
        }
    }

    /// `{…}` or `[…]`: counts nesting, consumes the brackets, reads the inside with `body`.
    private mutating func container(close: Unicode.Scalar,
                                    _ body: (inout TemplateJSONParser) throws(TemplateError) -> TemplateJSON)
        throws(TemplateError) -> TemplateJSON {
        depth += 1
        guard depth <= Self.maxDepth else { throw error("nested deeper than \(Self.maxDepth) levels") }
        index += 1
        let value = try body(&self)
        skipWhitespace()
        guard current == UInt8(ascii: close) else { throw error("expected ',' or '\(close)', found \(found)") }
        index += 1
        depth -= 1
        return value
    }

    private mutating func members() throws(TemplateError) -> TemplateJSON {
        var members: [String: TemplateJSON] = [:]
        skipWhitespace()
        guard current != UInt8(ascii: "}") else { return .object(members) }
        repeat {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a string key, found \(found)") }
            let keyStart = index
            let key = try string()
            guard members[key] == nil else {
                index = keyStart
                throw error("duplicate key \"\(key)\"")
            }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':', found \(found)") }
            index += 1
            members[key] = try value()
            skipWhitespace()
        } while skip(",")
        return .object(members)
    }

    private mutating func elements() throws(TemplateError) -> TemplateJSON {
        var elements: [TemplateJSON] = []
        skipWhitespace()
        guard current != UInt8(ascii: "]") else { return .array(elements) }
        repeat {
            elements.append(try value())
            skipWhitespace()
        } while skip(",")
        return .array(elements)
    }

    private mutating func string() throws(TemplateError) -> String {
        let start = index
        index += 1
        var utf8: [UInt8] = []
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                // Invalid UTF-8 decodes with replacement characters, so it does not round-trip.
                let text = String(decoding: utf8, as: UTF8.self)
                guard text.utf8.elementsEqual(utf8) else {
                    index = start
                    throw error("string is not valid UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                try escape(into: &utf8)
            case 0..<0x20:
                throw error("control character in string (escape it)")
            default:
                utf8.append(byte)
                index += 1
            }
        }
        throw error("unterminated string")
    }

    private mutating func escape(into utf8: inout [UInt8]) throws(TemplateError) {
        let start = index
        index += 1
        guard let byte = current else { throw error("unterminated string") }
        index += 1
        let simple: UInt8? = switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): byte
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
        if let simple { return utf8.append(simple) }
        guard byte == UInt8(ascii: "u") else {
            index = start
            throw error("invalid escape in string")
        }
        var code = try hex4()
        if (0xD800..<0xDC00).contains(code), bytes[index...].starts(with: [UInt8(ascii: "\\"), UInt8(ascii: "u")]) {
            index += 2
            let low = try hex4()
            guard (0xDC00..<0xE000).contains(low) else {
                index = start
                throw error("invalid \\u escape (unpaired surrogate)")
            }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let scalar = Unicode.Scalar(code) else {
            index = start
            throw error("invalid \\u escape (unpaired surrogate)")
        }
        UTF8.encode(scalar) { utf8.append($0) }
    }

    private mutating func hex4() throws(TemplateError) -> UInt32 {
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = current, let digit = Self.hexValue(byte) else {
                throw error("expected 4 hex digits after \\u, found \(found)")
            }
            code = code << 4 | digit
            index += 1
        }
        return code
    }

    private static func hexValue(_ b: UInt8) -> UInt32? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(b - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(b - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(b - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func number() throws(TemplateError) -> TemplateJSON {
        let start = index
        _ = skip("-")
        if !skip("0") { try digits() }
        var integral = true
        if skip(".") {
            integral = false
            try digits()
        }
        if skip("e") || skip("E") {
            integral = false
            _ = skip("+") || skip("-")
            try digits()
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if integral, let n = Int(text) { return .integer(n) }
        guard let x = Double(text) else {
            index = start
            throw error("invalid number")
        }
        return .number(x)
    }

    /// One or more decimal digits.
    private mutating func digits() throws(TemplateError) {
        let start = index
        while let b = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) { index += 1 }
        guard index > start else { throw error("expected a digit, found \(found)") }
    }

    private mutating func literal(_ word: String) throws(TemplateError) {
        guard bytes[index...].starts(with: word.utf8) else { throw error("expected a value, found \(found)") }
        index += word.utf8.count
    }

    /// Consumes `c` if it comes next.
    private mutating func skip(_ c: Unicode.Scalar) -> Bool {
        guard current == UInt8(ascii: c) else { return false }
        index += 1
        return true
    }

    private mutating func skipWhitespace() {
        while let b = current, b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { index += 1 }
    }

    /// What is at the current position, for problems.
    private var found: String {
        guard let b = current else { return "the end of the file" }
        return (0x21..<0x7F).contains(b) ? "'\(Character(Unicode.Scalar(b)))'" : "byte 0x\(String(b, radix: 16, uppercase: true))"
    }

    /// A problem at the current position; the column counts characters, not bytes.
    private func error(_ problem: String) -> TemplateError {
        let before = bytes[..<min(index, bytes.count)]
        let lineStart = before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        let line = before.count { $0 == 0x0A } + 1
        let column = bytes[lineStart..<before.endIndex].count { $0 & 0xC0 != 0x80 } + 1
        return TemplateError(path: "", problem: "invalid JSON: line \(line), column \(column): \(problem)")
    }
}
