import RoomWire

// The session store (PROTOCOL.md section 14). Same conventions as
// Methods.swift and Models.swift.

extension RoomClient {
    // MARK: - Session store

    /// Sets a session-store key (`set-metadata {key, value}`); `.null` deletes it.
    ///
    /// Every peer listening to the key, this one included, gets
    /// ``RoomEvent/metadataChanged(_:)``.
    ///
    /// - Returns: The entry with its new version.
    /// - Throws: `rpc` with 40300 (`view_and_polls_only`), 41300 (value over
    ///   `max_session_value_bytes`), 40907 (over `max_session_keys`), -32602 (bad key).
    @discardableResult
    public func setMetadata(_ key: String, value: JSON, timeout: Duration? = nil) async throws -> MetadataEntry {
        let result = try await call(
            "set-metadata",
            .object([.init("key", .string(key)), .init("value", value)]),
            timeout: timeout
        )
        return try decode("set-metadata", result) { try MetadataEntry(WireReader($0, path: "")) }
    }

    /// Reads one key (`get-metadata {key}`): version 0 and `.null` if never set.
    public func metadata(_ key: String, timeout: Duration? = nil) async throws -> MetadataEntry {
        let result = try await call("get-metadata", ["key": .string(key)], timeout: timeout)
        return try decode("get-metadata", result) { try MetadataEntry(WireReader($0, path: "")) }
    }

    /// Every key that has a value (`get-metadata {}`), sorted by key.
    public func allMetadata(timeout: Duration? = nil) async throws -> [MetadataEntry] {
        let result = try await call("get-metadata", timeout: timeout)
        return try decode("get-metadata", result) {
            try WireReader($0, path: "").elements("entries").map { try MetadataEntry($0) }
        }
    }

    /// Replaces the keys this peer listens to (`listen-metadata-change {keys}`):
    /// `["*"]` is every key, `[]` none. Listening pushes nothing by itself.
    ///
    /// - Returns: The keys now listened to.
    @discardableResult
    public func listenMetadata(_ keys: [String], timeout: Duration? = nil) async throws -> [String] {
        let result = try await call("listen-metadata-change", ["keys": .array(keys.map(JSON.string))], timeout: timeout)
        return try decode("listen-metadata-change", result) { try WireReader($0, path: "").strings("keys") }
    }
}

/// A session-store entry: `{key, value, version, updated_by, updated_at}`.
public struct MetadataEntry: Sendable, Equatable {
    /// The key, `[A-Za-z0-9_.-]{1,64}`.
    public var key: String
    /// Any JSON value; `.null` when unset or deleted.
    public var value: JSON
    /// 0 when never set; grows by 1 per set of the key (a delete included).
    public var version: Int
    /// Who set it last; nil for a never-set or deleted key on read.
    public var updatedBy: PeerRef?
    /// When, ms since the epoch; nil for a never-set or deleted key on read.
    public var updatedAt: Int64?

    /// Builds an entry, e.g. an expected value in a test.
    public init(key: String, value: JSON, version: Int, updatedBy: PeerRef? = nil, updatedAt: Int64? = nil) {
        self.key = key
        self.value = value
        self.version = version
        self.updatedBy = updatedBy
        self.updatedAt = updatedAt
    }

    init(_ r: WireReader) throws {
        try r.requireObject()
        key = try r.string("key")
        value = r.child("value").json ?? .null
        version = try r.int("version")
        updatedBy = r.has("updated_by") ? try PeerRef(r.child("updated_by")) : nil
        updatedAt = r.has("updated_at") ? try r.int64("updated_at") : nil
    }
}
