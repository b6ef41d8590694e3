import Synchronization

/// Work other threads hand to the service thread: they append here and call
/// `lws_cancel_service`, which wakes the loop to drain it.
final class Inbox<Item: Sendable>: Sendable {
    private let items = Mutex<[Item]>([])

    /// Appends `item`; true when the inbox was empty, so the caller must wake
    /// the loop. A post to a non-empty inbox needs no wake: the post that made
    /// it non-empty woke the loop after appending, and the drain that wake
    /// brings takes every item in the inbox at once. (One `lws_cancel_service`,
    /// a pipe write and a loop turn, per burst of posts, not per post.)
    @discardableResult
    func post(_ item: Item) -> Bool {
        items.withLock { items in
            items.append(item)
            return items.count == 1
        }
    }

    func drain() -> [Item] {
        items.withLock { items in
            defer { items.removeAll() }
            return items
        }
    }
}
