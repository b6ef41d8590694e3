import RoomModel
import RoomWire

/// `find-peer` / `peer-iter-next` (PROTOCOL.md section 12).
extension Dispatcher {
    static var searchMethods: [String: Method] {
        [
            "find-peer": .joined(Dispatcher.findPeer),
            "peer-iter-next": .joined(Dispatcher.peerIterNext),
        ]
    }

    func findPeer(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let limit = try params.int("limit", in: 1...RoomRegistry.maxPageSize) ?? 10
        let page = try registry.findPeers(
            call.peer,
            role: try params.string("role"),
            group: try params.string("group"),
            limit: limit
        )
        return encode(page)
    }

    func peerIterNext(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let iterator = try params.requiredString("iterator")
        let limit = try params.int("limit", in: 1...RoomRegistry.maxPageSize) ?? 10
        return encode(try registry.nextPeers(call.peer, iterator: iterator, limit: limit))
    }

    private func encode(_ page: PeerSearchPage) -> [UInt8] {
        Self.encode { w in
            w.key("iterator")
            if let iterator = page.iterator { w.string(iterator) } else { w.null() }
            w.field("total", page.total)
            w.field("eof", page.eof)
            w.key("peers")
            w.array { w in for entry in page.peers { w.peer(entry.peer, withTracks: entry.withTracks) } }
        }
    }
}
