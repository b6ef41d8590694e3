/// Something the server must tell peers. The model decides who gets what;
/// the server encodes each `Delivery` once and queues the bytes per recipient.
public enum Push {
    /// `on-peer-join {peer}`; `withTracks` says whether the recipients see the peer's tracks.
    case peerJoin(Peer, withTracks: Bool)
    /// `on-peer-leave {peer_id, reason}`.
    case peerLeave(peerID: String, reason: LeaveReason)
    /// `on-peer-update {peer, changed}`.
    case peerUpdate(Peer, changed: [PeerField], withTracks: Bool)
    /// `on-broadcast`.
    case broadcast(ChatMessage)
}

public struct Delivery {
    public var recipients: [Peer]
    public var push: Push

    public init(_ push: Push, to recipients: [Peer]) {
        self.recipients = recipients
        self.push = push
    }
}

public enum LeaveReason: String, Sendable {
    case clientRequest = "client request"
    case peerKicked = "peer kicked"
    case websocketClosed = "websocket closed"
    case serverRemoved = "server removed peer"
}

public enum PeerField: String, Sendable {
    case name, data, role, groups
}

/// A chat message as delivered (`on-broadcast`).
public struct ChatMessage {
    public enum Recipient: Equatable {
        case broadcast
        case peer(String)
        case roles([String])
    }

    public var id: String
    public var timestamp: Int64
    public var sender: Peer
    public var recipient: Recipient
    public var message: String
    public var type: String
}
