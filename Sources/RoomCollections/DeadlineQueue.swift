/// Deadlines by time: an indexed binary heap with stable handles. The
/// earliest is read in O(1); `schedule`, `reschedule`, `cancel` and
/// `popDue` are O(log n). It holds exactly the live deadlines — a cancelled
/// or popped entry leaves at once and its payload is released then (no lazy
/// deletion) — so it is bounded by what it times.
///
/// Order: `(at, rank, seq)`. `rank` orders kinds due at the same
/// millisecond; `seq` counts every `schedule` and `reschedule` of the queue,
/// so that among equals the one scheduled first comes first: the order is
/// total and deterministic (no hashing involved).
///
/// An `ID` is a slot and a generation: a slot is reused once its entry left,
/// with the next generation, so an ID kept after its entry left (a stale
/// one) matches nothing and every operation on it is a no-op.
public struct DeadlineQueue<Payload> {
    /// The handle of one scheduled entry.
    public struct ID: Hashable, Sendable {
        @usableFromInline let slot: Int32
        @usableFromInline let generation: UInt32

        @inlinable init(slot: Int32, generation: UInt32) {
            self.slot = slot
            self.generation = generation
        }
    }

    @usableFromInline struct Slot {
        @usableFromInline var at: Int64 = 0
        @usableFromInline var seq: UInt64 = 0
        @usableFromInline var rank: Int32 = 0
        /// The entry's place in `heap`; -1 while the slot is free.
        @usableFromInline var heapIndex: Int32 = -1
        @usableFromInline var generation: UInt32 = 0
        @usableFromInline var payload: Payload?

        @inlinable init() {}
    }

    /// Every slot ever used; a free one has no payload and waits in `free`.
    @usableFromInline var slots: [Slot] = []
    @usableFromInline var free: [Int32] = []
    /// Slot numbers in heap order: the earliest at 0.
    @usableFromInline var heap: [Int32] = []
    @usableFromInline var seq: UInt64 = 0

    @inlinable public init() {}

    /// Entries scheduled and not yet popped or cancelled.
    @inlinable public var count: Int { heap.count }
    @inlinable public var isEmpty: Bool { heap.isEmpty }

    /// Slots allocated: the most entries ever live at once (they are reused).
    @inlinable public var capacity: Int { slots.count }

    /// When the earliest entry is due; nil when there is none. O(1).
    @inlinable public var next: Int64? {
        guard let top = heap.first else { return nil }
        return slots[Int(top)].at
    }

    /// When `id`'s entry is due; nil when it was popped or cancelled.
    @inlinable public func deadline(of id: ID) -> Int64? {
        isLive(id) ? slots[Int(id.slot)].at : nil
    }

    /// `id`'s payload; nil when it was popped or cancelled.
    @inlinable public func payload(of id: ID) -> Payload? {
        isLive(id) ? slots[Int(id.slot)].payload : nil
    }

    /// Adds `payload`, due at `at`. O(log n).
    @discardableResult
    @inlinable public mutating func schedule(_ payload: Payload, at: Int64, rank: Int = 0) -> ID {
        let slot: Int32
        if let reused = free.popLast() {
            slot = reused
        } else {
            slot = Int32(slots.count)
            slots.append(Slot())
        }
        seq &+= 1
        let index = Int(slot)
        slots[index].at = at
        slots[index].rank = Int32(clamping: rank)
        slots[index].seq = seq
        slots[index].payload = payload
        slots[index].heapIndex = Int32(heap.count)
        heap.append(slot)
        siftUp(heap.count - 1)
        return ID(slot: slot, generation: slots[index].generation)
    }

    /// Moves `id`'s entry to `at` (behind the entries already due then at its
    /// rank). O(log n); false, and nothing done, for a stale `id`.
    @discardableResult
    @inlinable public mutating func reschedule(_ id: ID, at: Int64) -> Bool {
        guard isLive(id) else { return false }
        let index = Int(id.slot)
        seq &+= 1
        slots[index].at = at
        slots[index].seq = seq
        let position = Int(slots[index].heapIndex)
        siftUp(position)
        siftDown(Int(slots[index].heapIndex))
        return true
    }

    /// Removes `id`'s entry and returns its payload; nil, and nothing done,
    /// for a stale `id`. O(log n).
    @discardableResult
    @inlinable public mutating func cancel(_ id: ID) -> Payload? {
        guard isLive(id) else { return nil }
        return remove(at: Int(slots[Int(id.slot)].heapIndex)).payload
    }

    /// Removes and returns the earliest entry when it is due at `now`
    /// (`at <= now`); nil otherwise. The entry has left before the caller
    /// acts on it: what it schedules or cancels meanwhile is safe, and
    /// cancelling its own `id` is a no-op. O(log n).
    @inlinable public mutating func popDue(now: Int64) -> (id: ID, at: Int64, payload: Payload)? {
        guard let top = heap.first, slots[Int(top)].at <= now else { return nil }
        return remove(at: 0)
    }

    /// Removes every entry (their IDs all become stale).
    @inlinable public mutating func removeAll() {
        while !heap.isEmpty { _ = remove(at: heap.count - 1) }
    }

    /// The live entries' due times, earliest first (tests, diagnostics: O(n log n)).
    public var dueTimes: [Int64] {
        heap.map { slots[Int($0)].at }.sorted()
    }

    // MARK: the heap

    @inlinable func isLive(_ id: ID) -> Bool {
        let index = Int(id.slot)
        return index >= 0 && index < slots.count && slots[index].generation == id.generation
            && slots[index].heapIndex >= 0
    }

    /// Whether the entry in slot `a` comes before the one in slot `b`.
    @inlinable func precedes(_ a: Int32, _ b: Int32) -> Bool {
        // Field by field: a copy of the slot would retain its payload.
        let (i, j) = (Int(a), Int(b))
        if slots[i].at != slots[j].at { return slots[i].at < slots[j].at }
        if slots[i].rank != slots[j].rank { return slots[i].rank < slots[j].rank }
        return slots[i].seq < slots[j].seq
    }

    @inlinable mutating func remove(at position: Int) -> (id: ID, at: Int64, payload: Payload) {
        let slot = heap[position]
        let index = Int(slot)
        let last = heap.removeLast()
        if position < heap.count {
            heap[position] = last
            slots[Int(last)].heapIndex = Int32(position)
            siftUp(position)
            siftDown(Int(slots[Int(last)].heapIndex))
        }
        let id = ID(slot: slot, generation: slots[index].generation)
        let at = slots[index].at
        let payload = slots[index].payload!
        slots[index].payload = nil
        slots[index].heapIndex = -1
        slots[index].generation &+= 1
        free.append(slot)
        return (id, at, payload)
    }

    @inlinable mutating func siftUp(_ start: Int) {
        var child = start
        let moving = heap[child]
        while child > 0 {
            let parent = (child - 1) / 2
            guard precedes(moving, heap[parent]) else { break }
            heap[child] = heap[parent]
            slots[Int(heap[child])].heapIndex = Int32(child)
            child = parent
        }
        heap[child] = moving
        slots[Int(moving)].heapIndex = Int32(child)
    }

    @inlinable mutating func siftDown(_ start: Int) {
        var parent = start
        let moving = heap[parent]
        let count = heap.count
        while true {
            let left = 2 * parent + 1
            guard left < count else { break }
            let right = left + 1
            let smaller = right < count && precedes(heap[right], heap[left]) ? right : left
            guard precedes(heap[smaller], moving) else { break }
            heap[parent] = heap[smaller]
            slots[Int(heap[parent])].heapIndex = Int32(parent)
            parent = smaller
        }
        heap[parent] = moving
        slots[Int(moving)].heapIndex = Int32(parent)
    }
}

extension DeadlineQueue: Sendable where Payload: Sendable {}
extension DeadlineQueue.Slot: Sendable where Payload: Sendable {}
