import Crypto
import RoomCollections
import RoomModel
import RoomWire

/// The audience feed's bodies (PROTOCOL.md section 24), one per (room, S,
/// T), built once and served to every caller of that span. A body never
/// changes once built (its span is in the past), so entries are only ever
/// added and evicted, oldest first, when the cache is over `maxEntries` or
/// `maxBytes`. Its `RestFeed`'s service thread only (checked there): a
/// lookup is a dictionary read, no lock.
final class FeedCache {
    struct Key: Hashable, Sendable {
        var room: RoomID
        var from: Int64
        var to: Int64
    }

    struct Entry: Sendable {
        var body: [UInt8]
        /// A strong validator: `"` + the first 16 bytes of the body's SHA-256 in hex + `"`.
        var etag: String
    }

    static let defaultMaxEntries = 4096
    static let defaultMaxBytes = 64 << 20

    let maxEntries: Int
    let maxBytes: Int
    private var entries: [Key: Entry] = [:]
    /// Insertion order, for eviction.
    private var order = FIFO<Key>()
    private(set) var bytes = 0
    /// Lookups answered from the cache, and bodies built (metrics, tests).
    private(set) var hits = 0
    private(set) var builds = 0

    init(maxEntries: Int = defaultMaxEntries, maxBytes: Int = defaultMaxBytes) {
        self.maxEntries = max(1, maxEntries)
        self.maxBytes = max(1, maxBytes)
    }

    var count: Int { entries.count }

    func entry(_ key: Key) -> Entry? {
        guard let entry = entries[key] else { return nil }
        hits += 1
        return entry
    }

    /// Keeps `body` for `key` (a body over the byte budget is served once, not kept).
    @discardableResult
    func insert(_ key: Key, body: [UInt8]) -> Entry {
        let entry = Entry(body: body, etag: Self.etag(body))
        builds += 1
        guard entries[key] == nil, body.count <= maxBytes else { return entries[key] ?? entry }
        entries[key] = entry
        order.append(key)
        bytes += body.count
        while entries.count > maxEntries || bytes > maxBytes, let oldest = order.popFirst() {
            if let gone = entries.removeValue(forKey: oldest) { bytes -= gone.body.count }
        }
        return entry
    }

    static func etag(_ body: [UInt8]) -> String {
        let digest = SHA256.hash(data: body)
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = [UInt8(ascii: "\"")]
        for byte in digest.prefix(16) {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 15)])
        }
        text.append(UInt8(ascii: "\""))
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether an `If-None-Match` value names `etag` (a list, weak forms, or `*`).
    static func matches(_ ifNoneMatch: String?, _ etag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        for part in ifNoneMatch.split(separator: ",") {
            var tag = part.drop(while: { $0 == " " || $0 == "\t" })
            while tag.last == " " || tag.last == "\t" { tag = tag.dropLast() }
            if tag == "*" || tag == etag || (tag.hasPrefix("W/") && tag.dropFirst(2) == etag) { return true }
        }
        return false
    }
}

/// One stored second of a session's feed record, encoded once: its lists'
/// entries as JSON in one buffer, which every span holding that second
/// copies into its body (`FeedPieces`, `RestFeed.assemble`). A second is
/// in the past once a span holds it, so its piece never changes.
struct FeedPiece {
    /// Every entry below is a range of it.
    var buffer: [UInt8] = []
    /// The second's messages, comma-separated (no brackets); empty when none.
    var chat: Range<Int> = 0..<0
    /// Its deleted ids, comma-separated.
    var deleted: Range<Int> = 0..<0
    /// One object per entry of each list, in the second's order.
    var reactions: [Range<Int>] = []
    var polls: [Range<Int>] = []
    var pollStats: [Range<Int>] = []
    var questions: [Range<Int>] = []
    /// The second's item count when encoded (a check that the piece is that second's).
    var items = 0

    init(_ second: FeedSecond) {
        var w = JSONWriter(reserving: 512)
        /// What `body` wrote, less the comma the writer put before it.
        func segment(_ body: (inout JSONWriter) -> Void) -> Range<Int> {
            let start = w.bytes.count
            body(&w)
            let from = start < w.bytes.count && w.bytes[start] == UInt8(ascii: ",") ? start + 1 : start
            return from..<w.bytes.count
        }
        chat = segment { w in for message in second.chat { w.chatMessage(message) } }
        deleted = segment { w in for id in second.deleted { w.string(id) } }
        reactions = second.reactions.map { count in segment { w in w.object { w in w.reactionCountFields(count) } } }
        polls = second.polls.map { info in segment { w in w.object { w in w.pollInfoFields(info) } } }
        pollStats = second.pollStats.map { stats in segment { w in w.object { w in w.pollResultFields(stats) } } }
        questions = second.questions.map { question in segment { w in w.question(question) } }
        buffer = w.bytes
        items = second.items
    }
}

/// The encoded seconds of every session's feed record (`FeedPiece`), by
/// (room, session, second): a span not yet cached is assembled from them,
/// so a new span costs a copy of its seconds' pieces, not an encoding of
/// them, and a second is encoded once however many spans hold it. Bounded
/// by `maxBytes`, oldest out first. Its `RestFeed`'s service thread only.
final class FeedPieces {
    struct Key: Hashable {
        var room: RoomID
        var session: String
        var second: Int64
    }

    static let defaultMaxBytes = 32 << 20
    let maxBytes: Int
    private var pieces: [Key: FeedPiece] = [:]
    private var order = FIFO<Key>()
    private(set) var bytes = 0
    /// Seconds encoded (tests, metrics).
    private(set) var encoded = 0

    init(maxBytes: Int = defaultMaxBytes) { self.maxBytes = max(1, maxBytes) }

    var count: Int { pieces.count }

    /// The piece of `second` of `session`, encoded now if it is not kept.
    func piece(room: RoomID, session: String, _ second: FeedSecond) -> FeedPiece {
        let key = Key(room: room, session: session, second: second.second)
        if let piece = pieces[key], piece.items == second.items { return piece }
        let piece = FeedPiece(second)
        encoded += 1
        guard piece.buffer.count <= maxBytes else { return piece }
        if let old = pieces.updateValue(piece, forKey: key) {
            bytes -= old.buffer.count
        } else {
            order.append(key)
        }
        bytes += piece.buffer.count
        while bytes > maxBytes, let oldest = order.popFirst() {
            if let gone = pieces.removeValue(forKey: oldest) { bytes -= gone.buffer.count }
        }
        return piece
    }
}

/// Bodies built per room and per caller (PROTOCOL.md section 24,
/// `settings.feed.builds_per_second` and `caller_builds_per_second`): token
/// buckets on the daemon's clock, each holding one second's worth. A span
/// not cached is refused (429, `Retry-After: 1`: each bucket gains a build
/// within a second, its rate being at least 1) while either bucket is
/// empty, and takes one build from each once its body is built (a 404 or
/// 410 takes nothing); a cached answer takes nothing. Bounded: each table
/// is emptied when it reaches `maxEntries` (the buckets start full again).
/// Its `RestFeed`'s service thread only.
struct FeedBuildLimits {
    enum Refusal: Equatable {
        case caller
        case room
    }

    /// Builds left (fractional while it refills) as of `last` (ms).
    private struct Bucket {
        var left: Double
        var last: Int64

        mutating func refill(rate: Int, now: Int64) {
            if now > last {
                left = min(Double(rate), left + Double(now - last) * Double(rate) / 1000)
                last = now
            }
        }
    }

    static let maxEntries = 16_384
    let roomRate: Int
    let callerRate: Int
    private var rooms: [RoomID: Bucket] = [:]
    private var callers: [String: Bucket] = [:]

    init(roomRate: Int, callerRate: Int) {
        self.roomRate = max(1, roomRate)
        self.callerRate = max(1, callerRate)
    }

    /// Whether a build for `room` asked by `caller` (a token's user, or an
    /// address) may run now: nil when it may, else which bucket is empty.
    mutating func refusal(room: RoomID, caller: String, now: Int64) -> Refusal? {
        if var bucket = callers[caller] {
            bucket.refill(rate: callerRate, now: now)
            callers[caller] = bucket
            if bucket.left < 1 { return .caller }
        }
        if var bucket = rooms[room] {
            bucket.refill(rate: roomRate, now: now)
            rooms[room] = bucket
            if bucket.left < 1 { return .room }
        }
        return nil
    }

    /// A body was built for `room`, asked by `caller`: one build from each bucket.
    mutating func built(room: RoomID, caller: String, now: Int64) {
        if callers.count >= Self.maxEntries, callers[caller] == nil { callers.removeAll(keepingCapacity: true) }
        var bucket = callers[caller] ?? Bucket(left: Double(callerRate), last: now)
        bucket.refill(rate: callerRate, now: now)
        bucket.left -= 1
        callers[caller] = bucket
        if rooms.count >= Self.maxEntries, rooms[room] == nil { rooms.removeAll(keepingCapacity: true) }
        var roomBucket = rooms[room] ?? Bucket(left: Double(roomRate), last: now)
        roomBucket.refill(rate: roomRate, now: now)
        roomBucket.left -= 1
        rooms[room] = roomBucket
    }
}
