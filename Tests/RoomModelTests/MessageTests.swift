import Testing

@testable import RoomModel

@Suite struct MessageTests {
    let registry: RoomRegistry
    let clock: ManualClock
    let host: Peer, guest: Peer, viewer: Peer, viewer2: Peer

    init() throws {
        (registry, clock) = Fixtures.registry()
        host = try registry.join(Fixtures.request("h", role: "host")).peer
        guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        viewer2 = try registry.join(Fixtures.request("v2", role: "viewer")).peer
    }

    @Test func broadcastGoesToEveryoneButTheSender() throws {
        clock.advance(byMillis: 5)
        let (chat, deliveries) = try registry.broadcast(from: guest, message: "hi", type: "chat", to: .everyone)
        #expect(deliveries.count == 1)
        #expect(deliveries[0].to == [host.id, viewer.id, viewer2.id])
        #expect(chat.recipient == .broadcast)
        #expect(chat.timestamp == clock.now)
        #expect(chat.sender == ActorRef(guest))
        #expect(chat.message == "hi")
    }

    @Test func directGoesToThatPeerOnly() throws {
        let (chat, deliveries) = try registry.broadcast(
            from: host,
            message: "psst",
            type: "chat",
            to: .peer(viewer.id.rawValue)
        )
        #expect(deliveries.map(\.to) == [[viewer.id]])
        #expect(chat.recipient == .peer(viewer.id.rawValue))
        #expect(throws: RoomError(.peerNotFound, "peer_id \"nobody\" is not in the room")) {
            try registry.broadcast(from: host, message: "x", type: "chat", to: .peer("nobody"))
        }
    }

    @Test func groupGoesToTheListedRolesButNeverTheSender() throws {
        let (_, deliveries) = try registry.broadcast(
            from: viewer,
            message: "m",
            type: "chat",
            to: .roles(["viewer", "host"])
        )
        #expect(deliveries.map(\.to) == [[host.id, viewer2.id]])
        let (_, none) = try registry.broadcast(from: guest, message: "m", type: "chat", to: .roles(["moderator"]))
        #expect(none.isEmpty)
        #expect(throws: RoomError(.roleNotFound, "roles: no role named \"hots\"")) {
            try registry.broadcast(from: host, message: "m", type: "chat", to: .roles(["hots"]))
        }
        #expect(throws: RoomError.self) {
            try registry.broadcast(from: host, message: "m", type: "chat", to: .roles([]))
        }
    }

    @Test func chatOverTheLimitIs41300AndExactlyTheLimitPasses() throws {
        let limit = registry.settings.limits.maxChatBytes
        _ = try registry.broadcast(
            from: host,
            message: String(repeating: "a", count: limit),
            type: "chat",
            to: .everyone
        )
        do {
            _ = try registry.broadcast(
                from: host,
                message: String(repeating: "a", count: limit + 1),
                type: "chat",
                to: .everyone
            )
            Issue.record("expected 41300")
        } catch {
            #expect(error.code == .tooLarge)
            #expect(error.message.contains("info.message"))
        }
        // Bytes, not characters: 2-byte characters count twice.
        #expect(throws: RoomError.self) {
            try registry.broadcast(
                from: host,
                message: String(repeating: "é", count: limit / 2 + 1),
                type: "chat",
                to: .everyone
            )
        }
    }

    @Test func viewOnlyPeersMayNotBroadcastOrUpdate() throws {
        let restricted = try registry.join(Fixtures.request("r", role: "viewer", viewOnly: true)).peer
        #expect(throws: RoomError.self) {
            try registry.broadcast(from: restricted, message: "m", type: "chat", to: .everyone)
        }
        do {
            _ = try registry.updatePeer(restricted, name: "x", data: nil)
            Issue.record("expected 40300")
        } catch {
            #expect(error.code == .permissionDenied)
        }
    }

    @Test func peerUpdateTellsEveryoneWhatChanged() throws {
        let deliveries = try registry.updatePeer(guest, name: "Gia", data: "{\"hand\":1}")
        #expect(guest.name == "Gia")
        #expect(guest.data == "{\"hand\":1}")
        let everyone = Set(deliveries.flatMap(\.to))
        #expect(everyone == [host.id, guest.id, viewer.id, viewer2.id], "the changed peer is told too")
        for delivery in deliveries {
            guard case .peerUpdate(let peer, let changed, let withTracks) = delivery.push else {
                Issue.record("expected on-peer-update")
                continue
            }
            #expect(peer === guest)
            #expect(changed == [.name, .data])
            // host, guest and viewers subscribe to guest; none is blind here.
            #expect(withTracks)
        }
        #expect(try registry.updatePeer(guest, name: "Gia", data: nil).isEmpty, "no change, nothing sent")
        let onlyData = try registry.updatePeer(guest, name: nil, data: "x")
        if case .peerUpdate(_, let changed, _) = onlyData.first?.push { #expect(changed == [.data]) }
    }

    @Test func peerUpdateSplitsRecipientsByWhetherTheySeeTracks() throws {
        let deliveries = try registry.updatePeer(viewer, name: "Vee", data: nil)
        var seeing: [PeerID] = []
        var blind: [PeerID] = []
        for delivery in deliveries {
            guard case .peerUpdate(_, _, let withTracks) = delivery.push else { continue }
            if withTracks { seeing += delivery.to } else { blind += delivery.to }
        }
        // Nobody subscribes to viewers, but a peer always sees its own tracks.
        #expect(seeing == [viewer.id])
        #expect(Set(blind) == [host.id, guest.id, viewer2.id])
    }
}
