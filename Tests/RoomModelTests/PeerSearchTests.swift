import Testing

@testable import RoomModel

@Suite struct PeerSearchTests {
    @Test func pagesThroughPeersInJoinOrderWithFilters() throws {
        let (registry, _) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        var viewers: [Peer] = []
        for index in 0..<25 { viewers.append(try registry.join(Fixtures.request("v\(index)", role: "viewer")).peer) }
        _ = try registry.addToGroup(by: .server, viewers[3], group: "_handraise")
        _ = try registry.addToGroup(by: .server, viewers[20], group: "_handraise")

        let first = try registry.findPeers(host, role: nil, group: nil, limit: 10)
        #expect(first.total == 26, "the caller is included")
        #expect(!first.eof)
        #expect(first.peers.map(\.peer.id) == [host.id] + viewers.prefix(9).map(\.id))
        let iterator = try #require(first.iterator)
        let second = try registry.nextPeers(host, iterator: iterator, limit: 10)
        #expect(second.peers.map(\.peer.id) == viewers[9..<19].map(\.id))
        let last = try registry.nextPeers(host, iterator: try #require(second.iterator), limit: 10)
        #expect(last.eof)
        #expect(last.iterator == nil)
        #expect(last.peers.map(\.peer.id) == viewers[19...].map(\.id))
        #expect(code { _ = try registry.nextPeers(host, iterator: iterator, limit: 10) } == .invalidParams, "finished")

        let hands = try registry.findPeers(host, role: "viewer", group: "_handraise", limit: 10)
        #expect(hands.peers.map(\.peer.id) == [viewers[3].id, viewers[20].id])
        #expect(hands.eof && hands.total == 2)
        #expect(try registry.findPeers(host, role: "host", group: "_handraise", limit: 10).total == 0)
        #expect(code { _ = try registry.findPeers(host, role: "king", group: nil, limit: 10) } == .roleNotFound)
        // Only its owner may use an iterator.
        let owned = try #require(try registry.findPeers(host, role: nil, group: nil, limit: 1).iterator)
        #expect(code { _ = try registry.nextPeers(viewers[0], iterator: owned, limit: 1) } == .invalidParams)
        #expect(
            code { _ = try registry.nextPeers(host, iterator: owned, limit: 1) } == nil,
            "a stranger's try does not kill it"
        )
    }

    @Test func iteratorsAreBoundedPerPeerAndDieWithIt() throws {
        let (registry, _) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        for index in 0..<3 { _ = try registry.join(Fixtures.request("v\(index)", role: "viewer")) }
        var iterators: [String] = []
        for _ in 0..<(RoomRegistry.maxIteratorsPerPeer + 2) {
            iterators.append(try #require(try registry.findPeers(host, role: nil, group: nil, limit: 1).iterator))
        }
        #expect(registry.peerSearch.iteratorCount == RoomRegistry.maxIteratorsPerPeer)
        #expect(
            code { _ = try registry.nextPeers(host, iterator: iterators[0], limit: 1) } == .invalidParams,
            "oldest dropped"
        )
        #expect(code { _ = try registry.nextPeers(host, iterator: iterators.last!, limit: 1) } == nil)
        _ = registry.leave(host, reason: .clientRequest)
        #expect(registry.peerSearch.iteratorCount == 0)
    }
}
