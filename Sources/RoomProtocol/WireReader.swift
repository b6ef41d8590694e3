import RoomWire

/// Reads one JSON value at a path, for error messages such as
/// `join result: peers[2].tracks.t1.mute: expected a boolean, got string`.
/// Every failure is a `WireError`.
package struct WireReader {
    package let json: JSON?
    package let path: String

    package init(_ json: JSON?, path: String) {
        self.json = json
        self.path = path
    }

    package func fail(_ problem: String) -> WireError {
        WireError(path: path, problem: problem)
    }

    package func requireObject() throws {
        guard let json else { throw fail("missing") }
        guard case .object = json else { throw fail("expected an object, got \(json.typeName)") }
    }

    package func child(_ key: String) -> WireReader {
        WireReader(json?[key], path: path.isEmpty ? key : "\(path).\(key)")
    }

    /// Present and not null.
    package func has(_ key: String) -> Bool {
        guard let value = json?[key] else { return false }
        return !value.isNull
    }

    /// The value at `key` as `take` reads it: absent fails as "missing", a
    /// value `take` refuses as "expected \(expected), got \(got(value))".
    private func value<T>(
        _ key: String,
        _ take: (JSON) -> T?,
        expected: String,
        got: (JSON) -> String = { $0.typeName }
    ) throws -> T {
        let field = child(key)
        guard let value = field.json else { throw field.fail("missing") }
        guard let taken = take(value) else { throw field.fail("expected \(expected), got \(got(value))") }
        return taken
    }

    /// Absent or null is nil; otherwise `read(key)`.
    package func optional<T>(_ key: String, _ read: (String) throws -> T) throws -> T? {
        has(key) ? try read(key) : nil
    }

    /// Absent or null is nil; otherwise the object at `key` as `decode` reads it.
    package func optionalObject<T>(_ key: String, _ decode: (WireReader) throws -> T) throws -> T? {
        has(key) ? try decode(child(key)) : nil
    }

    package func string(_ key: String) throws -> String {
        try value(key, \.stringValue, expected: "a string")
    }

    /// Absent or null is nil.
    package func optionalString(_ key: String) throws -> String? {
        try optional(key, string)
    }

    package func int(_ key: String) throws -> Int {
        try value(key, \.intValue, expected: "an integer", got: \.text)
    }

    package func int64(_ key: String) throws -> Int64 {
        Int64(try int(key))
    }

    /// Absent or null is nil.
    package func optionalInt(_ key: String) throws -> Int? {
        try optional(key, int)
    }

    /// Absent or null is nil.
    package func optionalInt64(_ key: String) throws -> Int64? {
        try optional(key, int64)
    }

    package func bool(_ key: String) throws -> Bool {
        try value(key, \.boolValue, expected: "a boolean")
    }

    /// Absent or null is nil.
    package func optionalBool(_ key: String) throws -> Bool? {
        try optional(key, bool)
    }

    package func choice<T: RawRepresentable & CaseIterable>(_ key: String) throws -> T
    where T.RawValue == String {
        let text = try string(key)
        guard let value = T(rawValue: text) else {
            throw child(key).fail(
                "expected one of \(T.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(text)\""
            )
        }
        return value
    }

    package func optionalChoice<T: RawRepresentable & CaseIterable>(_ key: String) throws -> T?
    where T.RawValue == String {
        try optional(key) { try choice($0) as T }
    }

    package func elements(_ key: String) throws -> [WireReader] {
        let items = try value(key, \.arrayValue, expected: "an array")
        let path = child(key).path
        return items.enumerated().map { WireReader($0.element, path: "\(path)[\($0.offset)]") }
    }

    /// Each element read by `read`, in order.
    package func elements<T>(_ key: String, _ read: (WireReader) throws -> T) throws -> [T] {
        var result: [T] = []
        for item in try elements(key) { result.append(try read(item)) }
        return result
    }

    package func strings(_ key: String) throws -> [String] {
        try elements(key) { item in
            guard let text = item.json?.stringValue else {
                throw item.fail("expected a string, got \(item.json?.typeName ?? "nothing")")
            }
            return text
        }
    }

    /// Absent or null is nil.
    package func optionalStrings(_ key: String) throws -> [String]? {
        try optional(key, strings)
    }

    /// An array of integers; an element that is not one fails as "expected an integer".
    package func ints(_ key: String) throws -> [Int] {
        try elements(key) { item in
            guard let n = item.json?.intValue else { throw item.fail("expected an integer") }
            return n
        }
    }

    /// Absent or null is nil.
    package func optionalInts(_ key: String) throws -> [Int]? {
        try optional(key, ints)
    }

    /// An object's members in order (the last of duplicated keys wins).
    package func members(_ key: String) throws -> [(String, WireReader)] {
        let field = child(key)
        try field.requireObject()
        var seen: [String: Int] = [:]
        var result: [(String, WireReader)] = []
        for member in field.json!.objectValue! {
            let reader = field.child(member.key)
            if let index = seen[member.key] {
                result[index].1 = reader
            } else {
                seen[member.key] = result.count
                result.append((member.key, reader))
            }
        }
        return result
    }
}
