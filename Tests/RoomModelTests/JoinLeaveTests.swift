import RoomConfig
import Testing

@testable import RoomModel

@Suite struct JoinLeaveTests {
    @Test func firstJoinCreatesTheRoomWithAFreshSession() throws {
        let (registry, clock) = Fixtures.registry()
        let ada = try registry.join(Fixtures.request("ada", role: "host"))
        #expect(ada.room.id == "r1")
        #expect(ada.room.startedAt == clock.now)
        #expect(ada.peer.joinedAt == clock.now)
        #expect(ada.others.isEmpty)
        #expect(ada.deliveries.isEmpty)
        #expect(ada.resumed == false)
        let firstSession = ada.room.sessionID

        _ = registry.leave(ada.peer, reason: .clientRequest)
        #expect(registry.room("r1") == nil, "the room goes with its last peer")

        let again = try registry.join(Fixtures.request("ada", role: "host"))
        #expect(again.room.sessionID != firstSession)
    }

    @Test func othersAreToldAndTheJoinerSeesTheOthersInJoinOrder() throws {
        let (registry, _) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        let guest = try registry.join(Fixtures.request("g", role: "guest"))
        #expect(guest.others.map(\.peer.id) == [host.id, viewer.id])
        // A guest subscribes to host and guest, not to viewers.
        #expect(guest.others.map(\.withTracks) == [true, false])
        // Everyone is told; those who subscribe to guests see its tracks.
        let pushes = guest.deliveries.map { delivery -> (PeerID, Bool, [PeerID]) in
            guard case .peerJoin(let peer, let withTracks) = delivery.push else { return ("", false, []) }
            return (peer.id, withTracks, delivery.to)
        }
        // Host and viewer both subscribe to guests: one delivery, with tracks.
        #expect(pushes.count == 1)
        #expect(pushes.contains { $0.0 == guest.peer.id && $0.1 && $0.2 == [host.id, viewer.id] })
        #expect(!pushes.contains { $0.2.contains(guest.peer.id) }, "the joiner is not told about itself")
    }

    @Test func leaveTellsTheOthersWithTheReason() throws {
        let (registry, _) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        let deliveries = registry.leave(viewer, reason: .websocketClosed)
        #expect(deliveries.count == 1)
        #expect(deliveries[0].to == [host.id])
        guard case .peerLeave(let id, let reason) = deliveries[0].push else {
            Issue.record("expected on-peer-leave")
            return
        }
        #expect(id == viewer.id)
        #expect(reason.rawValue == "websocket closed")
        #expect(registry.room("r1")?.peerCount == 1)
        #expect(registry.leave(viewer, reason: .clientRequest).isEmpty, "leaving twice is a no-op")
    }

    @Test func joinErrorsCarryTheirCodes() throws {
        var settings = Settings()
        settings.room.maxPeers = 2
        let (registry, _) = Fixtures.registry(settings: settings, guestLimit: 1, banned: true)
        func code(_ request: JoinRequest) -> ErrorCode? {
            do {
                _ = try registry.join(request)
                return nil
            } catch { return error.code }
        }
        #expect(code(Fixtures.request("x", role: "nosuchrole")) == .roleClaimInvalid)
        #expect(code(Fixtures.request("x", role: "banned")) == .roleClaimInvalid)
        var mismatch = Fixtures.request("x", role: "host")
        mismatch.requestedRoomID = "other"
        #expect(code(mismatch) == .roomIDMismatch)

        _ = try registry.join(Fixtures.request("g1", role: "guest"))
        #expect(code(Fixtures.request("g2", role: "guest")) == .roleLimitReached)
        _ = try registry.join(Fixtures.request("v1", role: "viewer"))
        #expect(code(Fixtures.request("v2", role: "viewer")) == .roomFull)
        #expect(code(Fixtures.request("v2", role: "viewer", room: "r2")) == nil, "limits are per room")

        var tooLong = Fixtures.request("x", role: "viewer", room: "r3")
        tooLong.name = String(repeating: "n", count: settings.limits.maxNameBytes + 1)
        #expect(code(tooLong) == .tooLarge)
        var bigData = Fixtures.request("x", role: "viewer", room: "r3")
        bigData.data = String(repeating: "d", count: settings.limits.maxMetadataBytes + 1)
        #expect(code(bigData) == .tooLarge)
    }

    @Test func withoutAutoCreateOnlyPredefinedRoomsExist() throws {
        var settings = Settings()
        settings.room.autoCreate = false
        settings.room.predefined = ["studio"]
        let (registry, _) = Fixtures.registry(settings: settings)
        #expect(throws: RoomError.self) { try registry.join(Fixtures.request("a", role: "host", room: "elsewhere")) }
        do {
            _ = try registry.join(Fixtures.request("a", role: "host", room: "elsewhere"))
        } catch {
            #expect(error.code == .roomNotFound)
        }
        let joined = try registry.join(Fixtures.request("a", role: "host", room: "studio"))
        #expect(joined.room.id == "studio")
    }

    @Test func resumeTakesOverTheSamePeerOfTheSameUserOnly() throws {
        let (registry, _) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let endpoint = PeerEndpoint(kind: .held)
        host.endpoint = endpoint
        _ = try registry.join(Fixtures.request("v", role: "viewer"))

        var thief = Fixtures.request("someone-else", role: "host")
        thief.resumePeerID = host.id
        #expect(throws: RoomError(.peerIDOfOtherUser, "peer \"\(host.id)\" belongs to another user")) {
            try registry.join(thief)
        }
        var unknown = Fixtures.request("h", role: "host")
        unknown.resumePeerID = "peer-999"
        #expect(throws: RoomError(.peerGone, "peer \"peer-999\" is gone")) { try registry.join(unknown) }

        var resume = Fixtures.request("h", role: "host")
        resume.resumePeerID = host.id
        let outcome = try registry.join(resume)
        #expect(outcome.resumed)
        #expect(outcome.peer === host)
        #expect(outcome.replacedEndpoint === endpoint)
        #expect(outcome.deliveries.isEmpty, "nothing is pushed to others on resume")
        #expect(registry.room("r1")?.peerCount == 2)
    }
}
