import CNats

/// The last saved state of each room (`RoomSnapshot`, encoded by the server)
/// in the JetStream KV bucket `roomd-state`, one key per room (the keys of
/// `RoomLeases`), history 1, no TTL: a room's home writes it after changes
/// and deletes it when the room ends; the node that takes the room over
/// after its home died reads it.
///
/// Every method is a blocking NATS request: never on the service thread.
///
/// `@unchecked Sendable`: `kv` is a C `kvStore`, which the NATS client locks
/// and reference-counts; destroyed in `deinit` when no thread holds this.
public final class RoomStates: @unchecked Sendable {
    public static let bucket = "roomd-state"
    /// Bound on one room's state (under nats-server's default 1 MiB payload).
    public static let maxValueBytes: Int32 = 1000 * 1024
    static let maxBucketBytes: Int64 = 1 << 30

    let kv: OpaquePointer

    init(kv: OpaquePointer) { self.kv = kv }

    deinit { kvStore_Destroy(kv) }

    public func save(_ room: String, _ state: [UInt8]) throws(ClusterError) {
        var revision: UInt64 = 0
        let key = RoomLeases.key(room)
        let status = state.withUnsafeBytes {
            kvStore_Put(&revision, kv, key, $0.baseAddress, Int32($0.count))
        }
        if status != NATS_OK { throw natsError("save \(key)", status) }
    }

    public func load(_ room: String) throws(ClusterError) -> [UInt8]? {
        var entry: OpaquePointer?
        let key = RoomLeases.key(room)
        let status = kvStore_Get(&entry, kv, key)
        if status == NATS_NOT_FOUND { return nil }
        guard status == NATS_OK, let entry else { throw natsError("load \(key)", status) }
        defer { kvEntry_Destroy(entry) }
        let length = Int(kvEntry_ValueLen(entry))
        guard length > 0, let bytes = kvEntry_Value(entry) else { return nil }
        return Array(UnsafeRawBufferPointer(start: bytes, count: length))
    }

    public func delete(_ room: String) throws(ClusterError) {
        let key = RoomLeases.key(room)
        let status = kvStore_Delete(kv, key)
        if status != NATS_OK, status != NATS_NOT_FOUND { throw natsError("delete \(key)", status) }
    }
}
