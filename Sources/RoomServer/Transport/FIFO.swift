/// A first-in, first-out queue: an array and the index of its first element,
/// compacted once the consumed part is at least half of it (amortised O(1)).
/// The standard library has no deque, and roomd adds no dependency for one.
struct FIFO<Element> {
    private var items: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }
    var count: Int { items.count - head }
    var first: Element? { head < items.count ? items[head] : nil }

    mutating func append(_ element: Element) { items.append(element) }

    @discardableResult
    mutating func removeFirst() -> Element {
        let element = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: items.count <= 1024)
            head = 0
        } else if head >= 64, head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Removes elements from the front while `condition` holds.
    mutating func removeFirst(while condition: (Element) -> Bool) {
        while let element = first, condition(element) { removeFirst() }
    }
}
