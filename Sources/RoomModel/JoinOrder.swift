/// Peers kept sorted by join sequence, so listings never sort: a join
/// appends in O(1), a leave or role change costs a binary search and a move.
struct JoinOrder {
    private(set) var peers: [Peer] = []

    var count: Int { peers.count }

    /// Adds a peer that joined after every peer already here.
    mutating func append(_ peer: Peer) { peers.append(peer) }

    /// Adds a peer at its place (a role change brings an older peer in).
    mutating func insert(_ peer: Peer) { peers.insert(peer, at: index(of: peer.sequence)) }

    mutating func remove(_ peer: Peer) {
        let index = index(of: peer.sequence)
        if index < peers.count, peers[index] === peer { peers.remove(at: index) }
    }

    /// The first position whose sequence is not below `sequence`.
    private func index(of sequence: Int) -> Int {
        var low = 0
        var high = peers.count
        while low < high {
            let mid = (low + high) / 2
            if peers[mid].sequence < sequence { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
