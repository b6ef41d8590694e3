import RoomWire

/// Why bytes are not a `RoomSnapshot`: the JSON path of the offending value
/// and what is wrong with it (`peers[1].tracks[0].kind: expected one of
/// audio, video, got "midi"`).
public struct RoomSnapshotError: Error, Sendable, Equatable, CustomStringConvertible {
    /// e.g. `polls[0].voters[2].records[1]`; empty for the input as a whole.
    public var path: String
    public var problem: String

    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    public var description: String { path.isEmpty ? problem : "\(path): \(problem)" }
}

/// One JSON object of a snapshot being read. Strict: every field is
/// required (optional values are present as null), types are exact,
/// integers are integers in range, and `finish` refuses keys nobody read.
/// Reading follows the snapshot's fixed shape: no recursion of its own.
final class SnapshotReader {
    let path: String
    private let members: [String: JSON]
    /// The keys asked for so far.
    private var read: Set<String> = []

    init(_ value: JSON, path: String) throws(RoomSnapshotError) {
        guard case .object(let list) = value else {
            throw RoomSnapshotError(path: path, problem: "expected object, got \(value.typeName)")
        }
        self.path = path
        var members: [String: JSON] = [:]
        for member in list where members.updateValue(member.value, forKey: member.key) != nil {
            throw RoomSnapshotError(path: path.isEmpty ? member.key : "\(path).\(member.key)", problem: "duplicate key")
        }
        self.members = members
    }

    /// Reads `value` as an object with `body`, then refuses the keys `body` did not read.
    static func read<T>(
        _ value: JSON,
        at path: String,
        _ body: (SnapshotReader) throws(RoomSnapshotError) -> T
    )
        throws(RoomSnapshotError) -> T
    {
        let reader = try SnapshotReader(value, path: path)
        let result = try body(reader)
        if let unknown = reader.members.keys.sorted().first(where: { !reader.read.contains($0) }) {
            throw reader.failure(unknown, "unknown key")
        }
        return result
    }

    func path(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func failure(_ key: String, _ problem: String) -> RoomSnapshotError {
        RoomSnapshotError(path: path(key), problem: problem)
    }

    /// Whether `key` is there (for a key a format added later).
    func has(_ key: String) -> Bool {
        read.insert(key)
        return members[key] != nil
    }

    /// The value of `key`, which must be there.
    func value(_ key: String) throws(RoomSnapshotError) -> JSON {
        read.insert(key)
        guard let value = members[key] else { throw failure(key, "missing") }
        return value
    }

    // MARK: scalars

    func string(_ key: String) throws(RoomSnapshotError) -> String {
        let value = try value(key)
        guard case .string(let s) = value else { throw failure(key, "expected string, got \(value.typeName)") }
        return s
    }

    /// A room's, peer's or user's id: a string in the saved state.
    func id<ID: StringID>(_ key: String) throws(RoomSnapshotError) -> ID { ID(try string(key)) }

    func bool(_ key: String) throws(RoomSnapshotError) -> Bool {
        let value = try value(key)
        guard case .bool(let b) = value else { throw failure(key, "expected boolean, got \(value.typeName)") }
        return b
    }

    func int(_ key: String) throws(RoomSnapshotError) -> Int {
        try snapshotInteger(value(key), Int.self, at: path(key))
    }

    func int64(_ key: String) throws(RoomSnapshotError) -> Int64 {
        try snapshotInteger(value(key), Int64.self, at: path(key))
    }

    func uint32(_ key: String) throws(RoomSnapshotError) -> UInt32 {
        try snapshotInteger(value(key), UInt32.self, at: path(key))
    }

    /// A string that must be one of `T`'s raw values.
    func oneOf<T: RawRepresentable & CaseIterable>(_ key: String, _: T.Type) throws(RoomSnapshotError) -> T
    where T.RawValue == String {
        let text = try string(key)
        guard let value = T(rawValue: text) else {
            let names = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw failure(key, "expected one of \(names), got \"\(text)\"")
        }
        return value
    }

    /// nil when the value of `key` is null, else what `read` reads at `key`.
    func nullable<T>(_ key: String, _ read: (String) throws(RoomSnapshotError) -> T) throws(RoomSnapshotError) -> T? {
        if case .null = try value(key) { return nil }
        return try read(key)
    }

    // MARK: arrays and objects

    /// The array of `key`, each element read by `element` with its path.
    func array<T>(
        _ key: String,
        _ element: (JSON, String) throws(RoomSnapshotError) -> T
    )
        throws(RoomSnapshotError) -> [T]
    {
        let value = try value(key)
        guard case .array(let items) = value else { throw failure(key, "expected array, got \(value.typeName)") }
        var result: [T] = []
        result.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            result.append(try element(item, "\(path(key))[\(index)]"))
        }
        return result
    }

    /// The array of objects of `key`, each read by `body`.
    func objects<T>(
        _ key: String,
        _ body: (SnapshotReader) throws(RoomSnapshotError) -> T
    )
        throws(RoomSnapshotError) -> [T]
    {
        try array(key) { item, path throws(RoomSnapshotError) in try Self.read(item, at: path, body) }
    }

    /// The object of `key`, read by `body`.
    func object<T>(
        _ key: String,
        _ body: (SnapshotReader) throws(RoomSnapshotError) -> T
    ) throws(RoomSnapshotError) -> T {
        try Self.read(value(key), at: path(key), body)
    }

    func strings(_ key: String) throws(RoomSnapshotError) -> [String] {
        try array(key) { item, path throws(RoomSnapshotError) in
            guard case .string(let s) = item else {
                throw RoomSnapshotError(path: path, problem: "expected string, got \(item.typeName)")
            }
            return s
        }
    }

    func ints(_ key: String) throws(RoomSnapshotError) -> [Int] {
        try array(key) { item, path throws(RoomSnapshotError) in try snapshotInteger(item, Int.self, at: path) }
    }
}

/// An integer in `T`'s range, written without fraction or exponent.
func snapshotInteger<T: FixedWidthInteger>(_ value: JSON, _: T.Type, at path: String) throws(RoomSnapshotError) -> T {
    guard case .number(let text) = value else {
        throw RoomSnapshotError(path: path, problem: "expected integer, got \(value.typeName)")
    }
    guard let n = T(text) else {
        throw RoomSnapshotError(path: path, problem: "expected an integer between \(T.min) and \(T.max), got \(text)")
    }
    return n
}
