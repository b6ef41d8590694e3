import Crypto

/// How a room's saved state lies in the `roomd-state` bucket (docs/CLUSTER.md,
/// "Saved state"): the encoded state is cut into chunks where its content
/// says so (content-defined chunking, a gear hash), each chunk is the value
/// of one **slot** key (`<room key>.s<n>`), and the room's own key holds the
/// **manifest** that lists, in order, the slot and digest of every chunk.
///
/// Content-defined cuts make a save write only what changed: a message
/// appended to a 10,000-message history changes the last chunk of the chat,
/// one evicted from its front the first; every other chunk keeps its bytes,
/// its digest and its slot. A save writes its new chunks into slots that
/// the manifest in force does not name, then the manifest: a home that dies
/// in between leaves the previous manifest whole, with every chunk it names.
/// Slots are overwritten, never deleted while the room lives, so the bucket
/// gathers no delete markers (JetStream keeps one per deleted key).
///
/// Pure: `StateLayout.plan` decides, `RoomStates` does the NATS calls.
public struct StateLayout: Sendable, Equatable {
    /// One chunk: the slot that holds it, its length and digest.
    public struct Chunk: Sendable, Equatable {
        public var slot: Int
        public var length: Int
        public var digest: Digest

        public init(slot: Int, length: Int, digest: Digest) {
            self.slot = slot
            self.length = length
            self.digest = digest
        }
    }

    /// The first 16 bytes of a chunk's SHA-256.
    public struct Digest: Sendable, Hashable {
        public var high: UInt64
        public var low: UInt64

        public init(high: UInt64, low: UInt64) {
            self.high = high
            self.low = low
        }

        public init(of bytes: UnsafeRawBufferPointer) {
            let hash = SHA256.hash(data: bytes)
            var high: UInt64 = 0
            var low: UInt64 = 0
            for (i, byte) in hash.prefix(16).enumerated() {
                if i < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
            }
            self.init(high: high, low: low)
        }
    }

    /// The chunks in the state's order (a slot may appear twice: equal chunks share it).
    public var chunks: [Chunk]
    /// How many slot keys exist (`0..<slots`); those the chunks do not name are free.
    public var slots: Int

    public init(chunks: [Chunk], slots: Int) {
        self.chunks = chunks
        self.slots = slots
    }

    /// The state's length in bytes.
    public var length: Int { chunks.reduce(0) { $0 + $1.length } }

    // MARK: cutting

    /// Chunk bounds: no cut before `minChunk` bytes, one at the latest at
    /// `maxChunk`; between them a cut where the gear hash's top 15 bits are
    /// zero (one byte in 32,768): chunks average about 40 KiB.
    public static let minChunk = 8 * 1024
    public static let maxChunk = 256 * 1024
    static let cutMask: UInt64 = 0xFFFE_0000_0000_0000

    /// The gear table: 256 fixed pseudo-random words (splitmix64 from a
    /// fixed seed), the same in every build, so every node cuts alike.
    static let gear: [UInt64] = {
        var state: UInt64 = 0x726F_6F6D_6473_7461  // "roomdsta"
        return (0..<256).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }()

    /// The ends (exclusive) of the chunks `bytes` is cut into; empty for no bytes.
    public static func cuts(_ bytes: UnsafeRawBufferPointer) -> [Int] {
        var ends: [Int] = []
        let count = bytes.count
        if count == 0 { return ends }
        gear.withUnsafeBufferPointer { table in
            var start = 0
            while start < count {
                let limit = min(count, start + maxChunk)
                var end = limit
                var i = start + minChunk
                if i < limit {
                    var hash: UInt64 = 0
                    // Warm the hash on the 64 bytes before the first possible cut.
                    for j in max(start, i - 64)..<i { hash = (hash << 1) &+ table[Int(bytes[j])] }
                    while i < limit {
                        hash = (hash << 1) &+ table[Int(bytes[i])]
                        i += 1
                        if hash & cutMask == 0 {
                            end = i
                            break
                        }
                    }
                }
                ends.append(end)
                start = end
            }
        }
        return ends
    }

    // MARK: planning a save

    /// What a save of `bytes` over `previous` (the layout in force, nil when
    /// unknown or none) writes: the new layout, and the chunks to store —
    /// each a slot and the byte range it takes — before the manifest.
    /// Chunks whose digest the previous layout has keep their slot; new ones
    /// take the lowest slots the previous layout does not name.
    public static func plan(
        _ bytes: UnsafeRawBufferPointer,
        over previous: StateLayout?
    ) -> (layout: StateLayout, writes: [(slot: Int, range: Range<Int>)]) {
        var kept: [Digest: Int] = [:]
        var named = Set<Int>()
        for chunk in previous?.chunks ?? [] {
            kept[chunk.digest] = chunk.slot
            named.insert(chunk.slot)
        }
        var chunks: [Chunk] = []
        var writes: [(slot: Int, range: Range<Int>)] = []
        var nextFree = 0
        var start = 0
        for end in cuts(bytes) {
            let range = start..<end
            start = end
            let digest = Digest(of: UnsafeRawBufferPointer(rebasing: bytes[range]))
            if let slot = kept[digest] {
                chunks.append(Chunk(slot: slot, length: range.count, digest: digest))
                continue
            }
            while named.contains(nextFree) { nextFree += 1 }
            let slot = nextFree
            named.insert(slot)
            kept[digest] = slot
            writes.append((slot, range))
            chunks.append(Chunk(slot: slot, length: range.count, digest: digest))
        }
        let slots = max(previous?.slots ?? 0, (chunks.map(\.slot).max() ?? -1) + 1)
        return (StateLayout(chunks: chunks, slots: slots), writes)
    }

    /// Slots at the end that no chunk names, once there are more than 16 of
    /// them (a state that shrank): deleted after the manifest, so a room's
    /// slot keys stay within its largest state plus a few.
    public var surplusSlots: Range<Int> {
        let used = (chunks.map(\.slot).max() ?? -1) + 1
        return slots - used > 16 ? used..<slots : slots..<slots
    }

    // MARK: the manifest

    /// The manifest's first bytes. A saved state written whole (before
    /// chunking, a JSON object) starts with `{` and is read as it is.
    static let magic = Array("roomd-state-chunks-1\n".utf8)

    /// The manifest: the magic, then the slot count and the chunk count,
    /// then per chunk its slot, length (4 bytes each) and digest (16),
    /// little-endian.
    public func encoded() -> [UInt8] {
        var out = Self.magic
        out.reserveCapacity(out.count + 8 + chunks.count * 24)
        func put32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { out += $0 } }
        func put64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { out += $0 } }
        put32(slots)
        put32(chunks.count)
        for chunk in chunks {
            put32(chunk.slot)
            put32(chunk.length)
            put64(chunk.digest.high)
            put64(chunk.digest.low)
        }
        return out
    }

    /// Whether `value` (a room key's value) is a manifest.
    public static func isManifest(_ value: [UInt8]) -> Bool { value.starts(with: magic) }

    /// The manifest `encoded()` wrote; nil when `value` is not one or is cut.
    public init?(manifest value: [UInt8]) {
        guard Self.isManifest(value) else { return nil }
        var at = Self.magic.count
        func get32() -> Int? {
            guard at + 4 <= value.count else { return nil }
            defer { at += 4 }
            return (0..<4).reduce(0) { $0 | Int(value[at + $1]) << (8 * $1) }
        }
        func get64() -> UInt64? {
            guard at + 8 <= value.count else { return nil }
            defer { at += 8 }
            return (0..<8).reduce(UInt64(0)) { $0 | UInt64(value[at + $1]) << (8 * UInt64($1)) }
        }
        guard let slots = get32(), let count = get32(), value.count == at + count * 24 else { return nil }
        var chunks: [Chunk] = []
        chunks.reserveCapacity(count)
        for _ in 0..<count {
            guard let slot = get32(), let length = get32(), let high = get64(), let low = get64(), slot < slots
            else { return nil }
            chunks.append(Chunk(slot: slot, length: length, digest: Digest(high: high, low: low)))
        }
        self.init(chunks: chunks, slots: slots)
    }
}

/// A room's saved state as loaded: its bytes and, when it was saved in
/// chunks, their layout (which the node that restores the room saves over).
public struct SavedState: Sendable {
    public var bytes: [UInt8]
    public var layout: StateLayout?

    public init(bytes: [UInt8], layout: StateLayout?) {
        self.bytes = bytes
        self.layout = layout
    }
}
