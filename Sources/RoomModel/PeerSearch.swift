/// `find-peer` / `peer-iter-next`: paging through a room's peers in join
/// order (PROTOCOL.md section 12). Iterators live on the server, a few per
/// peer (the oldest is dropped), and die with their peer or at eof.
struct PeerSearch {
    static let maxIteratorsPerPeer = 8

    private var iterators: [String: Iterator] = [:]
    /// Creation counter of the iterators, for dropping the oldest.
    private var serial = 0

    private struct Iterator {
        var owner: Peer
        var role: String?
        var group: String?
        /// Join sequence of the last peer returned.
        var after: Int
        var total: Int
        var created: Int
    }

    var iteratorCount: Int { iterators.count }

    /// The first page of the caller's room's peers with `role` and in `group` (AND; nil: any), the caller included.
    mutating func find(_ caller: Peer, role: String?, group: String?, limit: Int, ids: IDGenerator) -> PeerSearchPage {
        let matches = caller.room.peersInJoinOrder.filter { Self.matches($0, role: role, group: group) }
        serial += 1
        var iterator = Iterator(
            owner: caller,
            role: role,
            group: group,
            after: 0,
            total: matches.count,
            created: serial
        )
        return page(caller, &iterator, candidates: matches, limit: limit) { ids.next(.iterator) }
    }

    /// The next page of iterator `id`, which only its owner may use.
    mutating func next(_ caller: Peer, iterator id: String, limit: Int) throws(RoomError) -> PeerSearchPage {
        guard var iterator = iterators[id], iterator.owner === caller else {
            throw .invalidParams("iterator: unknown or finished iterator")
        }
        iterators.removeValue(forKey: id)
        let candidates = caller.room.peersInJoinOrder.filter {
            $0.sequence > iterator.after && Self.matches($0, role: iterator.role, group: iterator.group)
        }
        return page(caller, &iterator, candidates: candidates, limit: limit) { id }
    }

    /// The iterators of a peer that left go with it.
    mutating func forget(_ peer: Peer) {
        for (key, iterator) in iterators where iterator.owner === peer { iterators.removeValue(forKey: key) }
    }

    /// Up to `limit` of `candidates`; unless that is all of them, the
    /// iterator is kept (under `key()`) for the next page.
    private mutating func page(
        _ caller: Peer,
        _ iterator: inout Iterator,
        candidates: [Peer],
        limit: Int,
        key: () -> String
    ) -> PeerSearchPage {
        let slice = candidates.prefix(limit)
        let eof = candidates.count <= limit
        var token: String?
        if !eof {
            iterator.after = slice.last!.sequence
            let key = key()
            iterators[key] = iterator
            token = key
            dropOldIterators(of: caller)
        }
        return PeerSearchPage(
            iterator: token,
            total: iterator.total,
            eof: eof,
            peers: slice.map { ($0, $0 === caller || caller.sees(tracksOf: $0)) }
        )
    }

    private static func matches(_ peer: Peer, role: String?, group: String?) -> Bool {
        (role == nil || peer.role.name == role) && (group == nil || peer.groups.contains(group!))
    }

    private mutating func dropOldIterators(of peer: Peer) {
        let owned = iterators.filter { $0.value.owner === peer }
        guard owned.count > Self.maxIteratorsPerPeer else { return }
        for (key, _) in owned.sorted(by: { $0.value.created < $1.value.created }).prefix(
            owned.count - Self.maxIteratorsPerPeer
        ) {
            iterators.removeValue(forKey: key)
        }
    }
}

/// One page of `find-peer` / `peer-iter-next`.
public struct PeerSearchPage {
    public var iterator: String?
    public var total: Int
    public var eof: Bool
    public var peers: [(peer: Peer, withTracks: Bool)]
}

extension RoomRegistry {
    public static let maxIteratorsPerPeer = PeerSearch.maxIteratorsPerPeer
    public static let maxPageSize = 100

    /// `find-peer {role?, group?, limit}`: filters combine with AND; the caller is included.
    public func findPeers(
        _ caller: Peer,
        role: String?,
        group: String?,
        limit: Int
    ) throws(RoomError) -> PeerSearchPage {
        if let role, template.role(role) == nil { throw RoomError(.roleNotFound, "role: no role named \"\(role)\"") }
        return peerSearch.find(caller, role: role, group: group, limit: limit, ids: ids)
    }

    /// `peer-iter-next {iterator, limit}`.
    public func nextPeers(_ caller: Peer, iterator id: String, limit: Int) throws(RoomError) -> PeerSearchPage {
        try peerSearch.next(caller, iterator: id, limit: limit)
    }
}
