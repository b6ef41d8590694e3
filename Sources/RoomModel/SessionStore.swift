import RoomWire

/// One key of the session store: `{key, value, version, updated_by, updated_at}`.
public struct SessionEntry: Sendable, Equatable {
    public var key: String
    /// The compact JSON encoding of the value (`null` when unset or deleted).
    public var value: [UInt8]
    public var version: Int
    public var updatedBy: ActorRef?
    public var updatedAt: Int64?

    public var isNull: Bool { value == SessionStore.null }
}

/// Which keys a peer listens to (`listen-metadata-change`).
public enum MetadataListening: Sendable, Equatable {
    case keys(Set<String>)
    case all

    public static let none = MetadataListening.keys([])

    func covers(_ key: String) -> Bool {
        switch self {
        case .all: true
        case .keys(let keys): keys.contains(key)
        }
    }
}

/// A room session's key-value store (PROTOCOL.md section 14, 100ms session
/// store). Deleted keys keep their version (a tombstone) so that versions
/// never go back. Tombstones are bounded by distinct keys: a key deleted
/// again keeps one tombstone (moved to the end), a key set again loses it,
/// and beyond `max_session_keys` of them the oldest is forgotten (its key
/// then reads as never set). So the store — and a room's saved state — holds
/// at most 2 × `max_session_keys` keys, however many deletes come.
public struct SessionStore: Sendable, Equatable {
    static let null: [UInt8] = Array("null".utf8)
    private(set) var entries: [String: SessionEntry] = [:]
    /// Keys whose value is not null.
    private(set) var liveCount = 0
    /// The deleted keys (exactly the keys whose entry is null), oldest deletion first.
    private(set) var tombstones: [String] = []

    init() {}

    /// A store as a snapshot saved it (SessionStoreSnapshot.swift): `entries` with unique keys.
    init(entries: [SessionEntry], tombstones: [String]) {
        for entry in entries {
            self.entries[entry.key] = entry
            if !entry.isNull { liveCount += 1 }
        }
        self.tombstones = tombstones
    }

    /// Two stores are equal when their entries are (tombstones are bookkeeping).
    public static func == (a: SessionStore, b: SessionStore) -> Bool { a.entries == b.entries }

    /// The entry of `key`; a never-set key reads as version 0, and a deleted
    /// one as its last version, both with `updated_by`/`updated_at` null.
    public func entry(_ key: String) -> SessionEntry {
        guard let entry = entries[key] else {
            return SessionEntry(key: key, value: Self.null, version: 0, updatedBy: nil, updatedAt: nil)
        }
        if entry.isNull {
            return SessionEntry(key: key, value: Self.null, version: entry.version, updatedBy: nil, updatedAt: nil)
        }
        return entry
    }

    /// Every key with a value, sorted by key.
    public var liveEntries: [SessionEntry] {
        entries.values.filter { !$0.isNull }.sorted { $0.key < $1.key }
    }

    mutating func set(
        _ key: String,
        value: [UInt8],
        by actor: ActorRef,
        at now: Int64,
        maxKeys: Int
    )
        throws(RoomError) -> SessionEntry
    {
        let previous = entries[key]
        let wasLive = previous.map { !$0.isNull } ?? false
        let isLive = value != Self.null
        if isLive, !wasLive, liveCount >= maxKeys {
            throw RoomError(.tooMany, "key: the room already has \(maxKeys) session-store keys (max_session_keys)")
        }
        let entry = SessionEntry(
            key: key,
            value: value,
            version: (previous?.version ?? 0) + 1,
            updatedBy: actor,
            updatedAt: now
        )
        entries[key] = entry
        if isLive, !wasLive { liveCount += 1 }
        if !isLive, wasLive { liveCount -= 1 }
        if previous != nil, !wasLive, let index = tombstones.firstIndex(of: key) {
            tombstones.remove(at: index)  // deleted again, or set again: its old tombstone goes
        }
        if !isLive {
            tombstones.append(key)
            if tombstones.count > maxKeys {  // the oldest is forgotten
                entries.removeValue(forKey: tombstones.removeFirst())
            }
        }
        return entry
    }
}

extension RoomRegistry {
    /// `[A-Za-z0-9_.-]{1,64}`
    public static func isValidMetadataKey(_ key: String) -> Bool {
        let utf8 = key.utf8
        guard (1...64).contains(utf8.count) else { return false }
        return utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x5F || c == 0x2E
                || c == 0x2D
        }
    }

    /// `set-metadata` (or REST): `value` null deletes. Every peer listening
    /// to the key, the setter included, gets `on-metadata-change`.
    public func setMetadata(
        by initiator: Initiator,
        in room: Room,
        key: String,
        value: JSON
    )
        throws(RoomError) -> (entry: SessionEntry, deliveries: [Delivery])
    {
        // Params first, then permissions, then limits (PROTOCOL.md section 2's order).
        guard Self.isValidMetadataKey(key) else { throw .invalidParams("key: must match [A-Za-z0-9_.-]{1,64}") }
        if case .peer(let peer) = initiator { try peer.requireUnrestricted("set-metadata") }
        let encoded = value.bytes
        let limit = settings.limits.maxSessionValueBytes
        if encoded.count > limit {
            throw RoomError(
                .tooLarge,
                "value: \(encoded.count) bytes is over the limit of \(limit) (max_session_value_bytes)"
            )
        }
        let entry = try room.sessionStore.set(
            key,
            value: encoded,
            by: ActorRef(initiator),
            at: clock.nowMillis(),
            maxKeys: settings.limits.maxSessionKeys
        )
        let listeners = room.peersInJoinOrder.filter { $0.metadataListening.covers(key) }
        return (entry, [Delivery(.metadataChange(entry), to: listeners)].nonEmpty)
    }

    /// `listen-metadata-change {keys}`: replaces what `peer` listens to.
    /// `["*"]` is every key, `[]` none. Returns the keys as stored (deduplicated, sorted).
    public func listenMetadata(_ peer: Peer, keys: [String]) throws(RoomError) -> [String] {
        let limit = settings.limits.maxSessionKeys
        if keys.count > limit {
            throw .invalidParams("keys: at most \(limit) keys (max_session_keys), got \(keys.count)")
        }
        for (index, key) in keys.enumerated() where key != "*" && !Self.isValidMetadataKey(key) {
            throw .invalidParams("keys[\(index)]: must be \"*\" or match [A-Za-z0-9_.-]{1,64}")
        }
        if keys.contains("*") {
            peer.metadataListening = .all
            return ["*"]
        }
        let set = Set(keys)
        peer.metadataListening = .keys(set)
        return set.sorted()
    }
}
