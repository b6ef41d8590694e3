import RoomConfig
import Testing

@testable import RoomModel

@Suite struct ReconnectionTests {
    @Test func graceKeepsThePeerUntilItsDeadline() throws {
        var settings = Settings()
        settings.room.reconnectGraceS = 20
        let (registry, clock) = Fixtures.registry(settings: settings)
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        #expect(registry.startGrace(viewer))
        #expect(registry.nextDeadline == clock.now + 20_000)
        clock.advance(byMillis: 19_999)
        #expect(registry.expireDueDeliveries().isEmpty)
        #expect(host.room.peer(viewer.id) === viewer)
        clock.advance(byMillis: 1)
        var resume = Fixtures.request("v", role: "viewer")
        resume.resumePeerID = viewer.id
        #expect(code { _ = try registry.join(resume) } == .peerGone, "the deadline is exact")
        let left = registry.expireDueDeliveries()
        #expect(left.sent == [Sent(push: "on-peer-leave", to: [host.id])])
        #expect(registry.nextDeadline == nil)
    }

    @Test func resumeEndsTheGraceAndNoGraceMeansNone() throws {
        let (registry, clock) = Fixtures.registry()
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        #expect(registry.startGrace(viewer))
        var resume = Fixtures.request("v", role: "viewer")
        resume.resumePeerID = viewer.id
        #expect(try registry.join(resume).resumed)
        #expect(viewer.graceDeadline == nil)
        clock.advance(byMillis: 60_000)
        #expect(registry.expireDueDeliveries().isEmpty, "a resumed peer stays")

        var settings = Settings()
        settings.room.reconnectGraceS = 0
        let (noGrace, _) = Fixtures.registry(settings: settings)
        let peer = try noGrace.join(Fixtures.request("p", role: "viewer")).peer
        #expect(!noGrace.startGrace(peer))
    }
}

@Suite struct GraceQueueTests {
    @Test func aPeerThatResumedAndDroppedAgainExpiresOnceAtItsNewDeadline() throws {
        let (registry, clock) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        #expect(registry.startGrace(viewer))
        clock.advance(byMillis: 5_000)
        var resume = Fixtures.request("v", role: "viewer")
        resume.resumePeerID = viewer.id
        _ = try registry.join(resume)
        #expect(registry.startGrace(viewer))
        #expect(registry.nextDeadline == clock.now + 20_000, "the stale first deadline is skipped")
        clock.advance(byMillis: 15_000)
        #expect(registry.expireDueDeliveries().isEmpty, "the first deadline passed, but the peer resumed since")
        clock.advance(byMillis: 5_000)
        #expect(registry.expireDueDeliveries().sent == [Sent(push: "on-peer-leave", to: [host.id])])
    }
}
