import RoomWire

/// One (target, type) and its total (PROTOCOL.md section 20): an entry of
/// `on-reactions`, of `reactions-get` (with `mine`) and the answer of `react`.
public struct ReactionCount: Sendable, Equatable, Hashable {
    /// A `message_id`, `"stream"` or `"contestant:<id>"`.
    public var target: String
    public var type: String
    public var total: Int
    /// This user's own count (`reactions-get` only); nil elsewhere.
    public var mine: Int?

    /// Builds a count, e.g. an expected value in a test.
    public init(target: String, type: String, total: Int, mine: Int? = nil) {
        self.target = target
        self.type = type
        self.total = total
        self.mine = mine
    }

    package init(_ r: WireReader) throws {
        try r.requireObject()
        target = try r.string("target")
        type = try r.string("type")
        total = try r.int("total")
        mine = try r.optionalInt("mine")
    }

    /// `target, type, total` and, when known, `mine` (inside an open object).
    @inlinable
    public func encodeFields(into w: inout JSONWriter) {
        w.field("target", target)
        w.field("type", type)
        w.field("total", total)
        if let mine { w.field("mine", mine) }
    }

    @inlinable
    public func encode(into w: inout JSONWriter) {
        w.beginObject()
        encodeFields(into: &w)
        w.endObject()
    }

    /// `"counts": [{target, type, total, mine?}…]` (inside an open object).
    @inlinable
    public static func encodeCounts(_ counts: [ReactionCount], into w: inout JSONWriter) {
        w.key("counts")
        w.beginArray()
        for count in counts { count.encode(into: &w) }
        w.endArray()
    }
}
