import RoomConfig
import RoomProtocol
import Testing

@testable import RoomModel

@Suite struct RoleChangeTests {
    let registry: RoomRegistry
    let clock: ManualClock
    let host: Peer, viewer: Peer, viewer2: Peer, moderator: Peer
    var room: Room { host.room }

    init() throws {
        (registry, clock) = Fixtures.registry(guestLimit: 1)
        host = try registry.join(Fixtures.request("h", role: "host")).peer
        viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        viewer2 = try registry.join(Fixtures.request("v2", role: "viewer")).peer
        moderator = try registry.join(Fixtures.request("m", role: "moderator")).peer
        _ = try registry.addTrack(host, id: "h-mic", kind: .audio)
    }

    func invite(_ peer: Peer, to role: String = "guest", by: Peer? = nil) throws(RoomError) -> String {
        let (outcome, effects) = try registry.requestRoleChange(
            by: .peer(by ?? host),
            in: room,
            targetID: peer.id,
            role: role,
            force: false
        )
        guard case .requested(let token) = outcome else { throw RoomError(.internalError, "no token") }
        #expect(effects.deliveries.sent == [Sent(push: "on-role-change-request:\(role)", to: [peer.id])])
        return token
    }

    @Test func politeRequestAcceptedAppliesTheRole() throws {
        let token = try invite(viewer)
        #expect(viewer.role.name == "viewer", "nothing changes before the answer")
        let effects = try registry.acceptRoleChange(viewer, token: token)
        #expect(viewer.role.name == "guest")
        let toViewer = effects.deliveries.names(for: viewer)
        // Policy first, then the peer update; guests see host tracks, as viewers did: no track pushes.
        #expect(toViewer == ["on-policy-change:guest", "on-peer-update"])
        #expect(
            Set(effects.deliveries.filter { $0.push.name == "on-peer-update" }.flatMap(\.to))
                == [host.id, viewer.id, viewer2.id, moderator.id]
        )
        #expect(
            code { _ = try registry.acceptRoleChange(viewer, token: token) } == .roleChangeRequestNotFound,
            "single use"
        )
    }

    @Test func onlyTheTargetMayUseItsTokenAndItExpires() throws {
        let token = try invite(viewer)
        #expect(code { _ = try registry.acceptRoleChange(viewer2, token: token) } == .roleChangeRequestNotFound)
        #expect(code { _ = try registry.rejectRoleChange(viewer2, token: token) } == .roleChangeRequestNotFound)
        clock.advance(byMillis: Int64(registry.settings.roleChange.requestTTLS) * 1000)
        #expect(code { _ = try registry.acceptRoleChange(viewer, token: token) } == .roleChangeRequestNotFound)
        let expired = registry.expireDueEffects()
        #expect(expired.deliveries.sent == [Sent(push: "on-role-change-rejected:expired", to: [host.id])])
        #expect(registry.nextDeadline == nil)
        #expect(code { _ = try registry.acceptRoleChange(viewer, token: "nonsense") } == .roleChangeRequestNotFound)
    }

    @Test func expiryIsReportedOnceAndOnlyForDueRequests() throws {
        let first = try invite(viewer)
        clock.advance(byMillis: 10_000)
        _ = try invite(viewer2, to: "moderator")
        #expect(registry.nextDeadline == clock.now - 10_000 + 60_000)
        clock.advance(byMillis: 50_000)
        let due = registry.expireDueEffects()
        guard case .roleChangeRejected(let token, let requestedFor, let role, _) = due.deliveries.first?.push else {
            Issue.record("expected one rejection")
            return
        }
        #expect(due.deliveries.count == 1)
        #expect((token, requestedFor, role) == (first, viewer.id, "guest"))
        #expect(registry.expireDueEffects().deliveries.isEmpty)
    }

    /// Requests made in one millisecond expire in one: their rejections go
    /// out in the order the requests were made, every run alike.
    @Test func requestsThatExpireTogetherAreRejectedInTheOrderMade() throws {
        var targets = [viewer, viewer2]
        for n in 0..<10 { targets.append(try registry.join(Fixtures.request("x\(n)", role: "viewer")).peer) }
        let tokens = try targets.map { try invite($0, to: "moderator") }
        clock.advance(byMillis: Int64(registry.settings.roleChange.requestTTLS) * 1000)
        let rejected = registry.expireDueEffects().deliveries.compactMap { delivery -> String? in
            guard case .roleChangeRejected(let token, _, _, .expired) = delivery.push else { return nil }
            return token
        }
        #expect(rejected == tokens, "in the order made, not a dictionary's")
    }

    @Test func rejectTellsTheRequester() throws {
        let token = try invite(viewer)
        let effects = try registry.rejectRoleChange(viewer, token: token)
        #expect(effects.deliveries.sent == [Sent(push: "on-role-change-rejected:rejected", to: [host.id])])
        #expect(viewer.role.name == "viewer")
    }

    @Test func sameRoleIsUnchangedAndPermissionRoleAndPeerAreChecked() throws {
        let (outcome, effects) = try registry.requestRoleChange(
            by: .peer(host),
            in: room,
            targetID: viewer.id,
            role: "viewer",
            force: false
        )
        guard case .unchanged = outcome else {
            Issue.record("expected unchanged")
            return
        }
        #expect(effects.deliveries.isEmpty)
        #expect(
            code {
                _ = try registry.requestRoleChange(
                    by: .peer(viewer),
                    in: room,
                    targetID: viewer2.id,
                    role: "guest",
                    force: true
                )
            } == .permissionDenied
        )
        #expect(
            code {
                _ = try registry.requestRoleChange(
                    by: .peer(host),
                    in: room,
                    targetID: viewer.id,
                    role: "nope",
                    force: true
                )
            } == .roleNotFound
        )
        #expect(
            code {
                _ = try registry.requestRoleChange(
                    by: .peer(host),
                    in: room,
                    targetID: "ghost",
                    role: "guest",
                    force: true
                )
            } == .peerNotFound
        )
    }

    @Test func maxPeerCountIsCheckedAtRequestAndAgainAtAccept() throws {
        let token = try invite(viewer)  // guest limit is 1
        let second = try invite(viewer2)
        _ = try registry.acceptRoleChange(viewer, token: token)
        #expect(code { _ = try registry.acceptRoleChange(viewer2, token: second) } == .roleLimitReached)
        #expect(code { _ = try invite(moderator) } == .roleLimitReached)
        #expect(viewer2.role.name == "viewer")
    }

    @Test func forcedChangeRemovesTracksTheNewRoleMayNotPublishAndFixesVisibility() throws {
        _ = try registry.requestRoleChange(by: .peer(host), in: room, targetID: viewer.id, role: "guest", force: true)
        _ = try registry.addTrack(viewer, id: "v-mic", kind: .audio)
        _ = try registry.addTrack(viewer, id: "v-cam", kind: .video)
        // guest → moderator: publishes nothing, also sees moderators.
        let (_, effects) = try registry.requestRoleChange(
            by: .peer(host),
            in: room,
            targetID: viewer.id,
            role: "moderator",
            force: true
        )
        #expect(viewer.tracks.isEmpty)
        let everyoneElse = [host.id, viewer2.id, moderator.id]
        #expect(
            effects.deliveries.sent.prefix(2) == [
                Sent(push: "on-track-remove:v-mic", to: everyoneElse),
                Sent(push: "on-track-remove:v-cam", to: everyoneElse),
            ]
        )
        #expect(effects.deliveries.names(for: viewer) == ["on-policy-change:moderator", "on-peer-update"])
    }

    @Test func visibilityFollowsTheNewRoleBothWays() throws {
        // A template where a "backstage" role sees no one and nobody sees it.
        var template = Fixtures.template()
        template.roles["backstage"] = Role(
            name: "backstage",
            priority: 5,
            publishParams: PublishParams(allowed: [.audio])
        )
        let registry = RoomRegistry(template: template, clock: ManualClock(), ids: SequentialIDGenerator())
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        let hidden = try registry.join(Fixtures.request("b", role: "backstage")).peer
        _ = try registry.addTrack(host, id: "h-mic", kind: .audio)
        _ = try registry.addTrack(hidden, id: "b-mic", kind: .audio)
        // backstage → host: now sees host tracks, and hosts/viewers now see its track.
        let (_, effects) = try registry.requestRoleChange(
            by: .peer(host),
            in: host.room,
            targetID: hidden.id,
            role: "host",
            force: true
        )
        #expect(hidden.tracks.map(\.trackID) == ["b-mic"], "hosts may publish audio: the track stays")
        #expect(
            effects.deliveries.names(for: hidden) == ["on-policy-change:host", "on-peer-update", "on-track-add:h-mic"]
        )
        #expect(effects.deliveries.names(for: viewer).contains("on-track-add:b-mic"))
        #expect(effects.deliveries.names(for: host).contains("on-track-add:b-mic"))
        // And back: both directions are removed again.
        let (_, back) = try registry.requestRoleChange(
            by: .peer(host),
            in: host.room,
            targetID: hidden.id,
            role: "backstage",
            force: true
        )
        #expect(back.deliveries.names(for: hidden).contains("on-track-remove:h-mic"))
        #expect(back.deliveries.names(for: viewer).contains("on-track-remove:b-mic"))
    }

    @Test func aForcedChangeWhileAPoliteRequestIsPendingKeepsTheRequestAnswerable() throws {
        let token = try invite(viewer, to: "guest")
        _ = try registry.requestRoleChange(
            by: .peer(host),
            in: room,
            targetID: viewer.id,
            role: "moderator",
            force: true
        )
        #expect(viewer.role.name == "moderator")
        _ = try registry.acceptRoleChange(viewer, token: token)
        #expect(viewer.role.name == "guest", "the accepted request still applies")
    }

    @Test func acceptingAfterTheRequesterLeftStillApplies() throws {
        let token = try invite(viewer, by: moderator)
        _ = registry.leave(moderator, reason: .clientRequest)
        let effects = try registry.acceptRoleChange(viewer, token: token)
        #expect(viewer.role.name == "guest")
        #expect(!effects.deliveries.contains { $0.recipients.contains { $0 === moderator } })
        // A rejection to a requester who left goes nowhere.
        let other = try invite(viewer2, to: "moderator")
        _ = registry.leave(host, reason: .clientRequest)
        #expect(try registry.rejectRoleChange(viewer2, token: other).deliveries.isEmpty)
    }

    @Test func requestsToAPeerThatLeftAreDropped() throws {
        _ = try invite(viewer)
        _ = registry.leave(viewer, reason: .websocketClosed)
        #expect(registry.nextDeadline == nil)
    }

    @Test func bulkChangesEveryPeerOfTheRolesAllOrNothing() throws {
        #expect(
            code { _ = try registry.bulkRoleChange(by: .peer(host), in: room, roles: ["viewer"], to: "guest") }
                == .roleLimitReached
        )
        #expect(viewer.role.name == "viewer" && viewer2.role.name == "viewer", "all or nothing")
        #expect(
            code {
                _ = try registry.bulkRoleChange(
                    by: .peer(host),
                    in: room,
                    roles: ["viewer", "moderator"],
                    to: "moderator"
                )
            } == .bulkTargetInSources
        )
        #expect(
            code { _ = try registry.bulkRoleChange(by: .peer(viewer), in: room, roles: ["viewer"], to: "moderator") }
                == .permissionDenied
        )
        let (changed, _) = try registry.bulkRoleChange(
            by: .peer(moderator),
            in: room,
            roles: ["viewer", "moderator"],
            to: "host"
        )
        #expect(changed.map(\.id) == [viewer.id, viewer2.id, moderator.id], "the caller too, when its role is listed")
        #expect([viewer, viewer2, moderator].allSatisfy { $0.role.name == "host" })
    }

    @Test func maxPeerCountMinusOneRefusesChangesInto() throws {
        let (registry, _) = Fixtures.registry(banned: true)
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        #expect(
            code {
                _ = try registry.requestRoleChange(
                    by: .peer(host),
                    in: host.room,
                    targetID: viewer.id,
                    role: "banned",
                    force: true
                )
            } == .roleLimitReached
        )
    }
}
