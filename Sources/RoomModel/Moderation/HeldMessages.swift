/// A room session's messages held for review (1.3, PROTOCOL.md section 31):
/// broadcasts to everyone that `settings.chat.hold` stopped, oldest first,
/// until a `moderateChat` peer approves or rejects them. At most
/// `capacity` (the next one is 40907); they end with the session. Also the
/// users who sent a message to everyone this session (`first_message`),
/// kept only while that rule is on.
public struct HeldMessages: Sendable, Equatable {
    /// At most this many held messages per room (section 31).
    public static let capacity = 1000

    /// The held messages by id, and their ids oldest first.
    private var byID: [String: ChatMessage] = [:]
    private var order: [String] = []
    /// Users who sent a message to everyone this session (held or not).
    private var senders: Set<UserID> = []

    public init() {}

    public var count: Int { byID.count }

    /// Oldest first.
    public var all: [ChatMessage] { order.compactMap { byID[$0] } }

    public func message(_ id: String) -> ChatMessage? { byID[id] }

    /// False when `capacity` are held already.
    mutating func hold(_ message: ChatMessage) -> Bool {
        guard byID.count < Self.capacity else { return false }
        byID[message.id] = message
        order.append(message.id)
        return true
    }

    /// The held message, removed (approved or rejected); nil when not held.
    mutating func take(_ id: String) -> ChatMessage? {
        guard let message = byID.removeValue(forKey: id) else { return nil }
        // The ids are at most `capacity`: removing one is O(capacity), never O(history).
        if let index = order.firstIndex(of: id) { order.remove(at: index) }
        return message
    }

    /// Whether `user` sends its first message to everyone now (and notes it).
    mutating func firstMessage(of user: UserID) -> Bool { senders.insert(user).inserted }

    /// A snapshot's held messages, oldest first.
    init(messages: [ChatMessage]) {
        for message in messages.prefix(Self.capacity) where byID[message.id] == nil {
            byID[message.id] = message
            order.append(message.id)
        }
    }
}
