import CNats

/// The last saved state of each room (`RoomSnapshot`, encoded by the server)
/// in the JetStream KV bucket `roomd-state`, history 1, no TTL: a room's
/// home writes it after changes and deletes it when the room ends; the node
/// that takes the room over after its home died (or drained) reads it.
///
/// A state has no size cap: it lies in chunks of at most 256 KiB, one slot
/// key each, and the room's key (`RoomLeases.key`) holds the manifest that
/// names them (`StateLayout`). A save writes only the chunks that changed.
/// A value written whole by an older build (a JSON object) is still read.
///
/// Every method is a blocking NATS request: never on the service thread.
///
/// `@unchecked Sendable`: `kv` is a C `kvStore`, which the NATS client locks
/// and reference-counts; destroyed in `deinit` when no thread holds this.
public final class RoomStates: @unchecked Sendable {
    public static let bucket = "roomd-state"
    /// Bound on one value: a chunk (256 KiB) or a manifest (24 bytes per chunk,
    /// at most 8 KiB of state per chunk: 320 KiB for a state of 100 MiB),
    /// under nats-server's default 1 MiB payload.
    public static let maxValueBytes: Int32 = 1000 * 1024
    /// No bound of the bucket's own: nats-server's JetStream store limits
    /// (`max_file_store`) bound it, and a room's state is bounded by its
    /// settings (docs/CLUSTER.md).
    static let maxBucketBytes: Int64 = -1

    let kv: OpaquePointer

    init(kv: OpaquePointer) { self.kv = kv }

    deinit { kvStore_Destroy(kv) }

    /// The key of chunk slot `slot` of the room whose key is `roomKey`
    /// (room keys have no `.` but their `x.` prefix, so none is a slot key).
    static func slotKey(_ roomKey: String, _ slot: Int) -> String { "\(roomKey).s\(slot)" }

    /// Saves `state` as `room`'s over `previous` (the layout in force, nil
    /// when none is known): writes the chunks that changed, then the
    /// manifest; returns the new layout and the bytes written.
    public func save(
        _ room: String,
        _ state: [UInt8],
        over previous: StateLayout?
    ) throws(ClusterError) -> (layout: StateLayout, written: Int) {
        let key = RoomLeases.key(room)
        let (layout, writes) = state.withUnsafeBytes { StateLayout.plan($0, over: previous) }
        var written = 0
        for write in writes {
            let status = state.withUnsafeBytes { all in
                let chunk = UnsafeRawBufferPointer(rebasing: all[write.range])
                var revision: UInt64 = 0
                return kvStore_Put(&revision, kv, Self.slotKey(key, write.slot), chunk.baseAddress, Int32(chunk.count))
            }
            if status != NATS_OK { throw natsError("save \(Self.slotKey(key, write.slot))", status) }
            written += write.range.count
        }
        let manifest = layout.encoded()
        try put(key, manifest)
        written += manifest.count
        let surplus = layout.surplusSlots  // O(chunks): once
        for slot in surplus { try remove(Self.slotKey(key, slot)) }
        var trimmed = layout
        trimmed.slots = surplus.lowerBound
        return (trimmed, written)
    }

    /// `room`'s saved state, nil when none. A manifest whose chunks are
    /// missing or do not match their digests throws.
    public func load(_ room: String) throws(ClusterError) -> SavedState? {
        let key = RoomLeases.key(room)
        guard let value = try get(key) else { return nil }
        guard StateLayout.isManifest(value) else { return SavedState(bytes: value, layout: nil) }
        guard let layout = StateLayout(manifest: value) else {
            throw ClusterError(operation: "load \(key)", status: "bad manifest", detail: "\(value.count) bytes")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(layout.length)
        for chunk in layout.chunks {
            let slotKey = Self.slotKey(key, chunk.slot)
            guard let part = try get(slotKey), part.count == chunk.length,
                part.withUnsafeBytes({ StateLayout.Digest(of: $0) }) == chunk.digest
            else {
                throw ClusterError(operation: "load \(slotKey)", status: "chunk missing or changed", detail: "")
            }
            bytes += part
        }
        return SavedState(bytes: bytes, layout: layout)
    }

    /// Deletes `room`'s saved state: the manifest, then its slots (`layout`'s,
    /// else those the manifest on the bus names).
    public func delete(_ room: String, layout: StateLayout?) throws(ClusterError) {
        let key = RoomLeases.key(room)
        var slots = layout?.slots
        if slots == nil, let value = try get(key) { slots = StateLayout(manifest: value)?.slots }
        try remove(key)
        for slot in 0..<(slots ?? 0) { try remove(Self.slotKey(key, slot)) }
    }

    private func put(_ key: String, _ value: [UInt8]) throws(ClusterError) {
        var revision: UInt64 = 0
        let status = value.withUnsafeBytes { kvStore_Put(&revision, kv, key, $0.baseAddress, Int32($0.count)) }
        if status != NATS_OK { throw natsError("save \(key)", status) }
    }

    private func get(_ key: String) throws(ClusterError) -> [UInt8]? {
        var entry: OpaquePointer?
        let status = kvStore_Get(&entry, kv, key)
        if status == NATS_NOT_FOUND { return nil }
        guard status == NATS_OK, let entry else { throw natsError("load \(key)", status) }
        defer { kvEntry_Destroy(entry) }
        let length = Int(kvEntry_ValueLen(entry))
        guard length > 0, let bytes = kvEntry_Value(entry) else { return nil }
        return Array(UnsafeRawBufferPointer(start: bytes, count: length))
    }

    private func remove(_ key: String) throws(ClusterError) {
        let status = kvStore_Delete(kv, key)
        if status != NATS_OK, status != NATS_NOT_FOUND { throw natsError("delete \(key)", status) }
    }
}
