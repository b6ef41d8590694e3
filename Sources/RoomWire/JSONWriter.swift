/// Appends compact JSON to a byte buffer.
///
/// The server encodes each push exactly once with it, straight from model
/// values, so no intermediate `JSON` tree is built on the hot path.
/// Separators are the caller's job only through `object`/`array` helpers:
/// `key(_:)` and the value methods insert commas themselves.
public struct JSONWriter {
    public private(set) var bytes: [UInt8]
    private var needsComma = false

    public init(reserving capacity: Int = 256, prefix: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity + prefix)
        if prefix > 0 { bytes.append(contentsOf: repeatElement(0, count: prefix)) }
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
    }

    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }
    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    public mutating func key(_ key: String) {
        separate()
        appendQuoted(key)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes `{ ... }` around `body`.
    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        beginObject()
        body(&self)
        endObject()
    }

    public mutating func array(_ body: (inout JSONWriter) -> Void) {
        beginArray()
        body(&self)
        endArray()
    }

    public mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
    }
    public mutating func int<I: BinaryInteger>(_ value: I) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
    }
    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
    }
    public mutating func null() {
        separate()
        bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
    }

    /// Splices already-encoded JSON (for example a cached role policy).
    public mutating func raw(_ encoded: some Collection<UInt8>) {
        separate()
        bytes.append(contentsOf: encoded)
    }

    public mutating func strings(_ values: some Sequence<String>) {
        array { writer in for value in values { writer.string(value) } }
    }

    public mutating func field(_ name: String, _ value: String) {
        key(name)
        string(value)
    }
    public mutating func field(_ name: String, _ value: Int) {
        key(name)
        int(value)
    }
    public mutating func field(_ name: String, _ value: Int64) {
        key(name)
        int(value)
    }
    public mutating func field(_ name: String, _ value: Bool) {
        key(name)
        bool(value)
    }

    public mutating func value(_ value: JSON) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .number(let text):
            separate()
            bytes.append(contentsOf: text.utf8)
        case .string(let s): string(s)
        case .array(let items):
            beginArray()
            for item in items { self.value(item) }
            endArray()
        case .object(let members):
            beginObject()
            for member in members {
                key(member.key)
                self.value(member.value)
            }
            endObject()
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""):
                bytes.append(0x5C)
                bytes.append(0x22)
            case UInt8(ascii: "\\"):
                bytes.append(0x5C)
                bytes.append(0x5C)
            case 0x0A:
                bytes.append(0x5C)
                bytes.append(UInt8(ascii: "n"))
            case 0x0D:
                bytes.append(0x5C)
                bytes.append(UInt8(ascii: "r"))
            case 0x09:
                bytes.append(0x5C)
                bytes.append(UInt8(ascii: "t"))
            case 0x00..<0x20:
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30])
                bytes.append(Self.hex[Int(byte >> 4)])
                bytes.append(Self.hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension JSONWriter {
    /// The newest (last) of `items` whose encodings, one separator each, fit
    /// in `budget` bytes, encoded and oldest first; with `keepingOne` the
    /// newest is kept even when it alone is over. What a bounded answer or a
    /// room's saved state holds of a long history.
    public static func newest<T>(
        _ items: [T],
        within budget: Int,
        keepingOne: Bool = false,
        _ encode: (inout JSONWriter, T) -> Void
    ) -> [[UInt8]] {
        var kept: [[UInt8]] = []
        var used = 0
        for item in items.reversed() {
            var w = JSONWriter()
            encode(&w, item)
            used += w.bytes.count + 1
            if used > budget, !(keepingOne && kept.isEmpty) { break }
            kept.append(w.bytes)
        }
        return kept.reversed()
    }

    /// An array of the first of `items` whose encodings (one comma each)
    /// fit in `budget` bytes, and always the first one; true when some were
    /// left out (a page's `more`). What `stage-list`, `question-list` and
    /// REST's pages hold.
    public mutating func leadingArray<T>(
        _ items: [T],
        within budget: Int,
        size: (T) -> Int,
        _ encode: (inout JSONWriter, T) -> Void
    ) -> Bool {
        var used = 2
        var kept = 0
        beginArray()
        for item in items {
            let itemSize = size(item) + 1
            if kept > 0, used + itemSize > budget { break }
            used += itemSize
            kept += 1
            encode(&self, item)
        }
        endArray()
        return kept < items.count
    }
}
