import RoomWire

// Messages (PROTOCOL.md section 5): what a send returns, who a message is
// for, and a message as received. Same conventions as Models.swift.

/// The result of the send methods (``RoomClient/broadcast(_:type:timeout:)`` and friends).
public struct MessageReceipt: Sendable, Equatable, Hashable {
    /// The id recipients see in ``Message/messageID``.
    public var messageID: String
    /// ms since the epoch; recipients see the same value.
    public var timestamp: Int64

    /// Builds a receipt.
    public init(messageID: String, timestamp: Int64) {
        self.messageID = messageID
        self.timestamp = timestamp
    }

    init(_ r: WireReader) throws {
        try r.requireObject()
        messageID = try r.string("message_id")
        timestamp = try r.int64("timestamp")
    }
}

/// Who an `on-broadcast` was addressed to: `{"type", "peer_id"?, "roles"?}`.
public struct Recipient: Sendable, Equatable, Hashable {
    /// `"broadcast"` (everyone else), `"peer"` (direct) or `"roles"` (group).
    public enum Kind: String, Sendable, Equatable, Hashable, CaseIterable {
        /// To every other peer.
        case broadcast
        /// To one peer (direct).
        case peer
        /// To the peers of the listed roles.
        case roles
    }

    /// Broadcast, peer or roles.
    public var type: Kind
    /// The recipient peer, for `.peer`.
    public var peerID: String?
    /// The recipient roles, for `.roles`.
    public var roles: [String]?

    /// Builds a recipient, e.g. an expected value in a test.
    public init(type: Kind, peerID: String? = nil, roles: [String]? = nil) {
        self.type = type
        self.peerID = peerID
        self.roles = roles
    }

    init(_ r: WireReader) throws {
        try r.requireObject()
        type = try r.choice("type")
        peerID = try r.optionalString("peer_id")
        roles = try r.has("roles") ? r.strings("roles") : nil
    }
}

/// A received chat message (`on-broadcast`).
public struct Message: Sendable, Equatable, Hashable {
    /// The id the sender got in its ``MessageReceipt``.
    public var messageID: String
    /// ms since the epoch.
    public var timestamp: Int64
    /// Who sent it.
    public var sender: PeerRef
    /// Who it was addressed to.
    public var recipient: Recipient
    /// `info.message`.
    public var message: String
    /// `info.type` (`"chat"` unless the sender chose another).
    public var type: String

    /// Builds a message, e.g. an expected value in a test.
    public init(
        messageID: String,
        timestamp: Int64,
        sender: PeerRef,
        recipient: Recipient,
        message: String,
        type: String = "chat"
    ) {
        self.messageID = messageID
        self.timestamp = timestamp
        self.sender = sender
        self.recipient = recipient
        self.message = message
        self.type = type
    }

    init(_ r: WireReader) throws {
        try r.requireObject()
        messageID = try r.string("message_id")
        timestamp = try r.int64("timestamp")
        sender = try PeerRef(r.child("sender"))
        recipient = try Recipient(r.child("recipient"))
        let info = r.child("info")
        try info.requireObject()
        message = try info.string("message")
        type = try info.string("type")
    }
}
