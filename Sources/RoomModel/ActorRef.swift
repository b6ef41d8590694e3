import RoomProtocol

/// Who asked for a change: a peer, or the server's REST API.
public enum Initiator {
    case peer(Peer)
    case server
}

/// Who did something, as it was at that moment (a PeerRef that outlives
/// later renames, role changes and leaves): the wire's PeerRef, or the REST
/// API's server PeerRef (`peerID` and `role` nil, `name` "server",
/// `PeerRef.server`).
public typealias ActorRef = PeerRef

extension PeerRef {
    public init(_ peer: Peer) {
        self.init(peerID: peer.id.rawValue, role: peer.role.name, name: peer.name, userID: peer.userID.rawValue)
    }

    public init(_ initiator: Initiator) {
        switch initiator {
        case .peer(let peer): self.init(peer)
        case .server: self = .server
        }
    }
}
