/// A chat message as delivered (`on-broadcast`) and as kept in the history
/// (PROTOCOL.md sections 5 and 19). `sender` is the PeerRef as it was when
/// the message was sent (the server PeerRef for REST `send-message`).
public struct ChatMessage: Sendable, Equatable {
    public enum Recipient: Sendable, Equatable {
        case broadcast
        case peer(String)
        case roles([String])
    }

    public var id: String
    public var timestamp: Int64
    public var sender: ActorRef
    public var recipient: Recipient
    public var message: String
    public var type: String
    /// Sent by a shadow-banned user (1.3, section 31): seen only by its
    /// user's peers and `moderateChat` peers, never in the feed.
    public var shadowed: Bool

    public init(
        id: String,
        timestamp: Int64,
        sender: ActorRef,
        recipient: Recipient,
        message: String,
        type: String,
        shadowed: Bool = false
    ) {
        self.id = id
        self.timestamp = timestamp
        self.sender = sender
        self.recipient = recipient
        self.message = message
        self.type = type
        self.shadowed = shadowed
    }
}
