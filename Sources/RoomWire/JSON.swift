/// A JSON value as it travels on the wire.
///
/// Numbers keep their source text so that a JSON-RPC `id` such as
/// `12345678901234567890` or `1.50` is echoed byte for byte. Objects keep
/// their members in order; lookups scan from the end so a duplicated key
/// resolves to its last occurrence, as most parsers do.
public enum JSON: Sendable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSON])
    case object([Member])

    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: JSON
        public init(_ key: String, _ value: JSON) {
            self.key = key
            self.value = value
        }
    }

    /// Builds an object from pairs, keeping their order.
    public static func obj(_ pairs: KeyValuePairs<String, JSON>) -> JSON {
        .object(pairs.map { Member($0.key, $0.value) })
    }

    public static func int<I: BinaryInteger>(_ value: I) -> JSON { .number(String(value)) }

    public subscript(key: String) -> JSON? {
        guard case .object(let members) = self else { return nil }
        for member in members.reversed() where member.key == key { return member.value }
        return nil
    }

    public subscript(index: Int) -> JSON? {
        guard case .array(let items) = self, items.indices.contains(index) else { return nil }
        return items[index]
    }

    public var isNull: Bool { if case .null = self { return true } else { return false } }
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var arrayValue: [JSON]? { if case .array(let a) = self { return a } else { return nil } }
    public var objectValue: [Member]? { if case .object(let o) = self { return o } else { return nil } }

    /// The number as an integer, if it is one (no fraction, no exponent, fits Int64).
    public var intValue: Int? {
        guard case .number(let text) = self else { return nil }
        return Int(text)
    }

    public var doubleValue: Double? {
        guard case .number(let text) = self else { return nil }
        return Double(text)
    }

    /// The name of the JSON type, for error messages ("expected string, got number").
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// Serialized UTF-8 bytes.
    public var bytes: [UInt8] {
        var writer = JSONWriter()
        writer.value(self)
        return writer.bytes
    }

    /// Serialized text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Parses one JSON value.
    /// `rejectDuplicateKeys`: a key twice in one object is an error (else the last one counts).
    public static func parse(
        _ bytes: [UInt8],
        maxDepth: Int = 64,
        rejectDuplicateKeys: Bool = false
    )
        throws(JSONParseError) -> JSON
    {
        let result: Result<JSON, JSONParseError> = bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(buffer, maxDepth: maxDepth, rejectDuplicateKeys: rejectDuplicateKeys)
            do throws(JSONParseError) { return .success(try parser.parseDocument()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    public static func parse(_ text: String) throws(JSONParseError) -> JSON {
        try parse(Array(text.utf8))
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(String(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
}

extension JSON: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(elements.map { Member($0.0, $0.1) })
    }
}

extension JSON: Equatable {
    /// Objects compare as maps (member order does not matter, the last of
    /// duplicated keys counts); numbers compare by value when both parse.
    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)):
            if a == b { return true }
            if let x = Double(a), let y = Double(b) { return x == y }
            return false
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object, .object):
            let left = lhs.members
            let right = rhs.members
            guard left.count == right.count else { return false }
            return left.allSatisfy { key, value in right[key] == value }
        default: return false
        }
    }

    /// Object members by key (the last of duplicated keys wins).
    private var members: [String: JSON] {
        guard case .object(let members) = self else { return [:] }
        return Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
    }
}

extension JSON: CustomStringConvertible {
    public var description: String { text }
}
