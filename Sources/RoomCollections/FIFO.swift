/// A first-in, first-out queue: a ring buffer whose capacity is a power of
/// two, grown by doubling. `append` and `removeFirst` are O(1) (amortised for
/// `append`); a removed element's slot is cleared at once, so the queue never
/// holds a reference to what left it; nothing is ever compacted. The
/// standard library has no deque, and roomd adds no dependency for one.
///
/// Members are `@inlinable` so that a queue of a concrete element type is
/// specialised in the module that uses it.
public struct FIFO<Element> {
    /// The ring: `count` elements from `head`, wrapping at the end; the other slots are nil.
    @usableFromInline var slots: ContiguousArray<Element?>
    /// The slot of the first element.
    @usableFromInline var head: Int
    @usableFromInline var stored: Int

    @inlinable public init() {
        slots = []
        head = 0
        stored = 0
    }

    /// An empty queue with room for `minimumCapacity` elements before it grows.
    @inlinable public init(minimumCapacity: Int) {
        self.init()
        if minimumCapacity > 0 { slots = ContiguousArray(repeating: nil, count: Self.roundedUp(minimumCapacity)) }
    }

    @inlinable public var isEmpty: Bool { stored == 0 }
    @inlinable public var count: Int { stored }
    /// Elements it holds before it grows.
    @inlinable public var capacity: Int { slots.count }

    /// The oldest element.
    @inlinable public var first: Element? { stored == 0 ? nil : slots[head] }

    /// The newest element.
    @inlinable public var last: Element? { stored == 0 ? nil : slots[slot(stored - 1)] }

    /// The element `offset` places from the front (0 is `first`).
    @inlinable public subscript(offset: Int) -> Element {
        get {
            precondition(offset >= 0 && offset < stored, "FIFO index out of range")
            return slots[slot(offset)]!
        }
        set {
            precondition(offset >= 0 && offset < stored, "FIFO index out of range")
            slots[slot(offset)] = newValue
        }
    }

    @inlinable public mutating func append(_ element: Element) {
        if stored == slots.count { grow() }
        slots[slot(stored)] = element
        stored += 1
    }

    /// Removes and returns the oldest element; the queue must not be empty.
    @inlinable @discardableResult public mutating func removeFirst() -> Element {
        precondition(stored > 0, "removeFirst on an empty FIFO")
        let element = slots[head]!
        slots[head] = nil
        head = (head + 1) & (slots.count - 1)
        stored -= 1
        if stored == 0 { head = 0 }
        return element
    }

    /// Removes and returns the oldest element, nil when empty.
    @inlinable public mutating func popFirst() -> Element? {
        stored == 0 ? nil : removeFirst()
    }

    /// Removes the `k` oldest elements (at most `count`).
    @inlinable public mutating func removeFirst(_ k: Int) {
        for _ in 0..<Swift.min(Swift.max(k, 0), stored) { removeFirst() }
    }

    /// Removes elements from the front while `condition` holds.
    @inlinable public mutating func removeFirst(while condition: (Element) throws -> Bool) rethrows {
        while stored > 0, try condition(slots[head]!) { removeFirst() }
    }

    /// Removes and returns the element `offset` places from the front: O(count)
    /// (the elements before it move up one place). For the rare removal from
    /// the middle (the webhook queue's per-room order); the rest is FIFO.
    @inlinable @discardableResult public mutating func remove(at offset: Int) -> Element {
        precondition(offset >= 0 && offset < stored, "FIFO index out of range")
        let element = slots[slot(offset)]!
        var index = offset
        while index > 0 {
            slots[slot(index)] = slots[slot(index - 1)]
            index -= 1
        }
        slots[head] = nil
        head = (head + 1) & (slots.count - 1)
        stored -= 1
        if stored == 0 { head = 0 }
        return element
    }

    /// Removes every element; `keepingCapacity` keeps the storage for reuse.
    @inlinable public mutating func removeAll(keepingCapacity: Bool = false) {
        if keepingCapacity {
            for offset in 0..<stored { slots[slot(offset)] = nil }
        } else {
            slots = []
        }
        head = 0
        stored = 0
    }

    /// The slot of the element `offset` places from the front.
    @inlinable func slot(_ offset: Int) -> Int { (head + offset) & (slots.count - 1) }

    /// Doubles the ring (at least 4 slots), the elements moved to its start.
    @usableFromInline mutating func grow() {
        var bigger = ContiguousArray<Element?>(repeating: nil, count: Swift.max(4, slots.count * 2))
        for offset in 0..<stored { bigger[offset] = slots[slot(offset)] }
        slots = bigger
        head = 0
    }

    @inlinable static func roundedUp(_ capacity: Int) -> Int {
        var size = 4
        while size < capacity { size *= 2 }
        return size
    }
}

extension FIFO: Sequence {
    /// Front to back.
    public struct Iterator: IteratorProtocol {
        @usableFromInline let queue: FIFO
        @usableFromInline var offset = 0

        @inlinable init(queue: FIFO) { self.queue = queue }

        @inlinable public mutating func next() -> Element? {
            guard offset < queue.stored else { return nil }
            defer { offset += 1 }
            return queue[offset]
        }
    }

    @inlinable public func makeIterator() -> Iterator { Iterator(queue: self) }

    @inlinable public var underestimatedCount: Int { stored }
}

extension FIFO: Sendable where Element: Sendable {}

/// Equal when they hold equal elements in the same order (not the same storage).
extension FIFO: Equatable where Element: Equatable {
    @inlinable public static func == (a: FIFO, b: FIFO) -> Bool {
        a.count == b.count && a.elementsEqual(b)
    }
}

extension FIFO: ExpressibleByArrayLiteral {
    @inlinable public init(arrayLiteral elements: Element...) {
        self.init(minimumCapacity: elements.count)
        for element in elements { append(element) }
    }
}
