/// A room session's chat history (PROTOCOL.md section 19): a ring of the
/// last `settings.chat.history_size` messages to everyone, and the pinned
/// message.
///
/// Every message kept takes a slot by its serial (`serial % capacity`); a
/// deleted message leaves its slot empty until a newer message reuses it, so
/// the ring holds the messages among the last `capacity` sent that were not
/// deleted. Lookups by id are a dictionary; paging walks at most `capacity`
/// slots. The pinned message is a copy: it stays pinned when the ring drops
/// it (until unpinned, or another is pinned).
public struct ChatHistory: Sendable {
    /// Slots, `serial % capacity`; nil: deleted, cleared or never used.
    /// Empty before the first message and after a clear (made at the next).
    private var slots: [ChatMessage?] = []
    private var capacity = 0
    /// The next message's serial.
    private var next = 0
    /// Serials below this were cleared (`chat-clear`).
    private var start = 0
    /// Message id → serial, for the messages in the ring.
    private var serials: [String: Int] = [:]
    public private(set) var pinned: ChatMessage?

    public init() {}

    /// The number of messages kept (deleted ones not counted).
    public var count: Int { serials.count }

    /// The oldest serial still in the ring.
    private var oldest: Int { max(start, next - capacity) }

    /// Keeps `message`, dropping the oldest when `capacity` are kept; with
    /// `capacity` 0 nothing is kept. Returns the dropped message, if any.
    @discardableResult
    mutating func append(_ message: ChatMessage, capacity: Int) -> ChatMessage? {
        guard capacity > 0 else { return nil }
        if slots.isEmpty {
            self.capacity = capacity
            slots = Array(repeating: nil, count: capacity)
        }
        let slot = next % self.capacity
        let dropped = slots[slot]
        if let dropped { serials.removeValue(forKey: dropped.id) }
        slots[slot] = message
        serials[message.id] = next
        next += 1
        return dropped
    }

    /// The message `id` if the ring holds it.
    public func message(_ id: String) -> ChatMessage? {
        guard let serial = serials[id] else { return nil }
        return slots[serial % capacity]
    }

    /// Removes message `id`; false when the ring does not hold it.
    mutating func delete(_ id: String) -> Bool {
        guard let serial = serials.removeValue(forKey: id) else { return false }
        slots[serial % capacity] = nil
        return true
    }

    /// What `clear` took out: the ring's slots and index, whole. Opaque; its
    /// owner frees it (RoomServer: off the service thread, a batch at a
    /// time: `release(upTo:)`).
    public struct Dropped: Sendable {
        fileprivate var slots: [ChatMessage?] = []
        fileprivate var serials: [String: Int] = [:]

        /// Lets go of about `budget` allocations (a message counts as 2);
        /// false once nothing is left. The index goes first, whole: its keys
        /// are the messages' own ids, so that frees one block.
        mutating func release(upTo budget: Int) -> Bool {
            if !serials.isEmpty {
                serials = [:]
                return !slots.isEmpty
            }
            var left = budget
            Reactions.Dropped.drop(&slots, &left, weight: 2)
            return !slots.isEmpty
        }
    }

    /// Empties the ring (the pin is left to the caller) in O(1): its slots
    /// and index are taken out whole and returned, for the caller to free
    /// (10,000 messages are tens of thousands of frees). The next message
    /// makes new slots.
    mutating func clear() -> Dropped {
        var dropped = Dropped()
        swap(&dropped.slots, &slots)
        swap(&dropped.serials, &serials)
        start = next
        return dropped
    }

    /// The ids of the newest `limit` messages kept, oldest first. Visits
    /// the slots from the newest down, at most `capacity` of them.
    func newestIDs(_ limit: Int) -> [String] {
        guard capacity > 0, !slots.isEmpty else { return [] }
        var ids: [String] = []
        ids.reserveCapacity(min(limit, count))
        var serial = next
        let low = oldest
        while serial > low, ids.count < limit {
            serial -= 1
            if let message = slots[serial % capacity] { ids.append(message.id) }
        }
        return ids.reversed()
    }

    mutating func pin(_ message: ChatMessage?) { pinned = message }

    /// Up to `limit` messages before `before` (by id; nil: the newest),
    /// oldest first, and whether older ones remain; only those `visible`
    /// keeps (a shadowed message is its sender's user's and the
    /// moderators'). nil when `before` is not in the ring.
    public func page(
        before: String?,
        limit: Int,
        including visible: (ChatMessage) -> Bool = { _ in true }
    ) -> (messages: [ChatMessage], more: Bool)? {
        var serial = next
        if let before {
            guard let found = serials[before] else { return nil }
            serial = found
        }
        var newestFirst: [ChatMessage] = []
        newestFirst.reserveCapacity(min(limit, count))
        var more = false
        let low = oldest
        while serial > low {
            serial -= 1
            guard let message = slots[serial % capacity], visible(message) else { continue }
            if newestFirst.count == limit {
                more = true
                break
            }
            newestFirst.append(message)
        }
        return (newestFirst.reversed(), more)
    }

    /// Calls `body` with the messages after `id` (nil: from the oldest),
    /// oldest first, until it returns false; false when `id` is not in the
    /// ring. Costs the messages visited, not the history.
    public func forEach(after id: String?, _ body: (ChatMessage) -> Bool) -> Bool {
        guard capacity > 0 else { return id == nil }
        var serial = oldest
        if let id {
            guard let found = serials[id] else { return false }
            serial = found + 1
        }
        while serial < next {
            if let message = slots[serial % capacity], !body(message) { break }
            serial += 1
        }
        return true
    }

    /// Every message kept, oldest first.
    public var messages: [ChatMessage] {
        guard capacity > 0 else { return [] }
        return (oldest..<next).compactMap { slots[$0 % capacity] }
    }

    /// A history as a snapshot saved it: `messages` oldest first (the newest
    /// `capacity` kept), and the pin.
    init(messages: [ChatMessage], pinned: ChatMessage?, capacity: Int) {
        for message in messages { append(message, capacity: capacity) }
        self.pinned = pinned
    }
}
