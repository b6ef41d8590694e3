/// `find-peer` / `peer-iter-next`: paging through a room's peers in join
/// order (PROTOCOL.md section 12). Iterators live on the server, a few per
/// peer (the oldest is dropped), and die with their peer or at eof.
struct PeerIterator {
    var owner: Peer
    var role: String?
    var group: String?
    /// Join sequence of the last peer returned.
    var after: Int
    var total: Int
    var created: Int
}

/// One page of `find-peer` / `peer-iter-next`.
public struct PeerPage {
    public var iterator: String?
    public var total: Int
    public var eof: Bool
    public var peers: [(peer: Peer, withTracks: Bool)]
}

extension RoomRegistry {
    public static let maxIteratorsPerPeer = 8
    public static let maxPageSize = 100

    /// `find-peer {role?, group?, limit}`: filters combine with AND; the caller is included.
    public func findPeers(_ caller: Peer, role: String?, group: String?, limit: Int) throws(RoomError) -> PeerPage {
        if let role, template.role(role) == nil { throw RoomError(.roleNotFound, "role: no role named \"\(role)\"") }
        let matches = caller.room.peersInJoinOrder.filter { Self.matches($0, role: role, group: group) }
        var iterator = PeerIterator(owner: caller, role: role, group: group, after: 0, total: matches.count,
                                    created: nextIteratorSerial())
        return page(caller, &iterator, candidates: matches, limit: limit)
    }

    /// `peer-iter-next {iterator, limit}`.
    public func nextPeers(_ caller: Peer, iterator id: String, limit: Int) throws(RoomError) -> PeerPage {
        guard var iterator = peerIterators[id], iterator.owner === caller else {
            throw .invalidParams("iterator: unknown or finished iterator")
        }
        peerIterators.removeValue(forKey: id)
        let candidates = caller.room.peersInJoinOrder.filter {
            $0.sequence > iterator.after && Self.matches($0, role: iterator.role, group: iterator.group)
        }
        return page(caller, &iterator, candidates: candidates, limit: limit, reuse: id)
    }

    private func page(_ caller: Peer, _ iterator: inout PeerIterator, candidates: [Peer], limit: Int,
                      reuse id: String? = nil) -> PeerPage {
        let slice = candidates.prefix(limit)
        let eof = candidates.count <= limit
        var token: String?
        if !eof {
            iterator.after = slice.last!.sequence
            let key = id ?? ids.next(.iterator)
            peerIterators[key] = iterator
            token = key
            dropOldIterators(of: caller)
        }
        return PeerPage(iterator: token, total: iterator.total, eof: eof,
                        peers: slice.map { ($0, $0 === caller || caller.sees(tracksOf: $0)) })
    }

    private static func matches(_ peer: Peer, role: String?, group: String?) -> Bool {
        (role == nil || peer.role.name == role) && (group == nil || peer.groups.contains(group!))
    }

    private func dropOldIterators(of peer: Peer) {
        let owned = peerIterators.filter { $0.value.owner === peer }
        guard owned.count > Self.maxIteratorsPerPeer else { return }
        for (key, _) in owned.sorted(by: { $0.value.created < $1.value.created }).prefix(owned.count - Self.maxIteratorsPerPeer) {
            peerIterators.removeValue(forKey: key)
        }
    }

    func forgetIterators(of peer: Peer) {
        for (key, iterator) in peerIterators where iterator.owner === peer { peerIterators.removeValue(forKey: key) }
    }

    private func nextIteratorSerial() -> Int {
        iteratorSerial += 1
        return iteratorSerial
    }
}
