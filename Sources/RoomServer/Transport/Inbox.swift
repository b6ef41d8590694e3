import Synchronization

/// Work other threads hand to the service thread: they append here and call
/// `lws_cancel_service`, which wakes the loop to drain it.
final class Inbox<Item: Sendable>: Sendable {
    private let items = Mutex<[Item]>([])

    func post(_ item: Item) {
        items.withLock { $0.append(item) }
    }

    func drain() -> [Item] {
        items.withLock { items in
            defer { items.removeAll() }
            return items
        }
    }
}
