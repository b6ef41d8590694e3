import Crypto
import RoomCollections
import RoomModel

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
