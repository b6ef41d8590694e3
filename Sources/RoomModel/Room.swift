/// One room session: created on its first join, destroyed with its last peer.
public final class Room {
    public let id: String
    public let sessionID: String
    public let startedAt: Int64
    public private(set) var peers: [String: Peer] = [:]
    private var roleCounts: [String: Int] = [:]
    private var nextSequence = 0

    init(id: String, sessionID: String, startedAt: Int64) {
        self.id = id
        self.sessionID = sessionID
        self.startedAt = startedAt
    }

    public var peerCount: Int { peers.count }

    public func peer(_ id: String) -> Peer? { peers[id] }

    public func count(ofRole role: String) -> Int { roleCounts[role, default: 0] }

    /// Every peer in join order.
    public var peersInJoinOrder: [Peer] { peers.values.sorted { $0.sequence < $1.sequence } }

    /// Every peer but `excluded`, in join order.
    public func others(than excluded: Peer) -> [Peer] { peersInJoinOrder.filter { $0 !== excluded } }

    func makeSequence() -> Int {
        nextSequence += 1
        return nextSequence
    }

    func add(_ peer: Peer) {
        peers[peer.id] = peer
        roleCounts[peer.role.name, default: 0] += 1
    }

    func remove(_ peer: Peer) {
        guard peers.removeValue(forKey: peer.id) != nil else { return }
        roleCounts[peer.role.name, default: 0] -= 1
    }

    func changeRole(of peer: Peer, to role: Role) {
        roleCounts[peer.role.name, default: 0] -= 1
        peer.role = role
        roleCounts[role.name, default: 0] += 1
    }
}
