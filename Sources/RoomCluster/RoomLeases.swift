import CNats

/// A room's home: the node that holds the room's lease, the run of that node
/// (its incarnation: a node restarted with the same id is a new run, and the
/// old run's leases are not its own), and the revision of the KV entry that
/// says so (what a renewal or release must match).
public struct RoomLease: Sendable, Equatable {
    public var room: String
    public var node: NodeID
    /// Nil in a lease written before runs were recorded (the value is the node id alone).
    public var run: String?
    public var revision: UInt64

    public init(room: String, node: NodeID, run: String? = nil, revision: UInt64) {
        self.room = room
        self.node = node
        self.run = run
        self.revision = revision
    }

    /// The KV value: `NODE RUN`.
    var value: String { run.map { "\(node) \($0)" } ?? node.rawValue }

    /// A lease as its KV value says (`NODE RUN`, or `NODE` alone).
    init(room: String, value: String, revision: UInt64) {
        let parts = value.split(separator: " ", maxSplits: 1).map(String.init)
        self.init(
            room: room,
            node: NodeID(parts.first ?? ""),
            run: parts.count > 1 ? parts[1] : nil,
            revision: revision
        )
    }
}

/// The outcome of a claim: this node now holds the lease, or another
/// holder (possibly an earlier incarnation of this node id) does.
public enum LeaseClaim: Sendable, Equatable {
    case claimed(RoomLease)
    case held(RoomLease)
}

/// Room home leases in the JetStream KV bucket `roomd-rooms` (one key per
/// room, history 1, the bucket's TTL is the lease lifetime): the primitive
/// the routing of rooms is built on. No consensus of roomd's own: every
/// rule is one compare-and-set of JetStream.
/// - claim: create-if-absent (a key that expired, was never written or was
///   released counts as absent); only one of racing claimants wins.
/// - renew: update at the holder's revision; any other write in between
///   (a takeover after expiry) makes it fail, so a home that lost its lease
///   learns it on its next renewal.
/// - expire: an entry not renewed within the TTL is removed by nats-server.
/// - release: update at the holder's revision to an empty value (free).
///
/// Every method is a blocking NATS request (up to the request timeout):
/// call them from a cluster thread, never the service thread.
///
/// `@unchecked Sendable`: `kv` is a C `kvStore`, which the NATS client
/// locks and reference-counts, so any thread may use it; it is destroyed in
/// `deinit`, when no thread holds this object any more.
public final class RoomLeases: @unchecked Sendable {
    public static let bucket = "roomd-rooms"
    /// Bound on a stored value (a node id is at most 64 bytes).
    static let maxValueBytes: Int32 = 128
    /// Bound on the whole bucket (what nats-server keeps for roomd's leases).
    static let maxBucketBytes: Int64 = 64 << 20

    let kv: OpaquePointer
    public let nodeID: NodeID
    /// This run of the node (`RoomCluster.incarnation`), written into its leases.
    public let run: String
    /// The bucket's TTL: a lease not renewed for this long expires.
    public let ttlMillis: Int64

    init(kv: OpaquePointer, nodeID: NodeID, run: String, ttlMillis: Int64) {
        self.kv = kv
        self.nodeID = nodeID
        self.run = run
        self.ttlMillis = ttlMillis
    }

    /// What this run writes into a lease it holds.
    private var mine: String { "\(nodeID) \(run)" }

    deinit { kvStore_Destroy(kv) }

    /// The KV key of a room: the id itself when it is `[A-Za-z0-9_-]+`,
    /// else `x.` and the hex of its UTF-8 (KV keys allow fewer characters
    /// than room ids; plain ids never contain a dot, so no two rooms share a key).
    public static func key(_ room: String) -> String {
        if !room.isEmpty, room.utf8.allSatisfy(ClusterConfig.isIdentifierByte) { return room }
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var out = Array("x.".utf8)
        for byte in room.utf8 { out += [hex[Int(byte >> 4)], hex[Int(byte & 15)]] }
        return String(decoding: out, as: UTF8.self)
    }

    /// Who holds `room` now; nil when nobody does (never claimed, expired or released).
    public func holder(of room: String) throws(ClusterError) -> RoomLease? {
        guard let entry = try entry(Self.key(room)), !entry.value.isEmpty else { return nil }
        return RoomLease(room: room, value: entry.value, revision: entry.revision)
    }

    /// Claims `room` for this node unless another holder has it.
    public func claim(_ room: String) throws(ClusterError) -> LeaseClaim {
        try claim(room, writing: mine)
    }

    /// `claim` with `value` as the lease's value (tests write a lease of
    /// another form: one without a run, as roomd wrote them before runs).
    func claim(_ room: String, writing value: String) throws(ClusterError) -> LeaseClaim {
        let key = Self.key(room)
        // A bounded number of rounds: each lost race means another node's write won.
        for _ in 0..<3 {
            var revision: UInt64 = 0
            let status = kvStore_CreateString(&revision, kv, key, value)
            if status == NATS_OK { return .claimed(RoomLease(room: room, value: value, revision: revision)) }
            let create = natsError("claim \(key)", status)
            guard let entry = try entry(key) else {
                if status == NATS_TIMEOUT || status == NATS_CONNECTION_CLOSED { throw create }
                continue  // expired between the create and the read: try again
            }
            if !entry.value.isEmpty {
                return .held(RoomLease(room: room, value: entry.value, revision: entry.revision))
            }
            // Released: take it over at the released revision.
            if kvStore_UpdateString(&revision, kv, key, value, entry.revision) == NATS_OK {
                return .claimed(RoomLease(room: room, value: value, revision: revision))
            }
        }
        if let current = try holder(of: room) { return .held(current) }
        throw ClusterError(
            operation: "claim \(key)",
            status: "contended",
            detail: "the lease changed hands three times during the claim"
        )
    }

    /// Renews a lease this node holds: the renewed lease, or nil when it was
    /// lost (it expired and another node claimed it, or it was released).
    public func renew(_ lease: RoomLease) throws(ClusterError) -> RoomLease? {
        guard lease.node == nodeID, lease.run == run else { return nil }
        let key = Self.key(lease.room)
        var revision: UInt64 = 0
        let status = kvStore_UpdateString(&revision, kv, key, mine, lease.revision)
        if status == NATS_OK { return RoomLease(room: lease.room, node: nodeID, run: run, revision: revision) }
        let update = natsError("renew \(key)", status)
        if status == NATS_TIMEOUT || status == NATS_CONNECTION_CLOSED { throw update }
        // The entry moved on (or the read fails too, and that error is the answer).
        _ = try entry(key)
        return nil
    }

    /// Releases a lease this node holds; false when it was no longer ours.
    public func release(_ lease: RoomLease) throws(ClusterError) -> Bool {
        guard lease.node == nodeID, lease.run == run else { return false }
        let key = Self.key(lease.room)
        var revision: UInt64 = 0
        let status = kvStore_UpdateString(&revision, kv, key, "", lease.revision)
        if status == NATS_OK { return true }
        if status == NATS_TIMEOUT || status == NATS_CONNECTION_CLOSED { throw natsError("release \(key)", status) }
        _ = try entry(key)
        return false
    }

    private func entry(_ key: String) throws(ClusterError) -> (value: String, revision: UInt64)? {
        var entry: OpaquePointer?
        let status = kvStore_Get(&entry, kv, key)
        if status == NATS_NOT_FOUND { return nil }
        guard status == NATS_OK, let entry else { throw natsError("get \(key)", status) }
        defer { kvEntry_Destroy(entry) }
        let length = Int(kvEntry_ValueLen(entry))
        var value = ""
        if length > 0, let bytes = kvEntry_Value(entry) {
            value = String(decoding: UnsafeRawBufferPointer(start: bytes, count: length), as: UTF8.self)
        }
        return (value, kvEntry_Revision(entry))
    }
}
