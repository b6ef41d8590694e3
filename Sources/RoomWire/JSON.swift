/// A JSON value as it travels on the wire.
///
/// Numbers keep their source text so that a JSON-RPC `id` such as
/// `12345678901234567890` or `1.50` is echoed byte for byte. Objects keep
/// their members in order; lookups scan from the end so a duplicated key
/// resolves to its last occurrence, as most parsers do.
public enum JSON: Sendable, Equatable {
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
    public static func parse(_ bytes: [UInt8], maxDepth: Int = 64) throws(JSONParseError) -> JSON {
        let result: Result<JSON, JSONParseError> = bytes.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(buffer, maxDepth: maxDepth)
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

extension JSON: CustomStringConvertible {
    public var description: String { text }
}
