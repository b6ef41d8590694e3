import RoomProtocol
import Testing

@testable import RoomModel

@Suite struct ModerationTests {
    let registry: RoomRegistry
    let host: Peer, guest: Peer, viewer: Peer, moderator: Peer
    var room: Room { host.room }

    init() throws {
        (registry, _) = Fixtures.registry()
        host = try registry.join(Fixtures.request("h", role: "host")).peer
        guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        moderator = try registry.join(Fixtures.request("m", role: "moderator")).peer
        _ = try registry.addTrack(host, id: "h-mic", kind: .audio)
        _ = try registry.addTrack(host, id: "h-cam", kind: .video)
        _ = try registry.addTrack(guest, id: "g-mic", kind: .audio)
    }

    @Test func muteRequestIsEnforcedAndAnnounced() throws {
        let effects = try registry.requestTrackUpdate(
            by: .peer(moderator),
            in: room,
            targetID: host.id,
            trackID: "h-mic",
            mute: true
        )
        #expect(host.tracks.first { $0.trackID == "h-mic" }?.mute == true)
        #expect(
            effects.deliveries.sent == [
                Sent(push: "on-track-update:h-mic", to: [guest.id, viewer.id, moderator.id]),
                Sent(push: "on-track-update-request:h-mic:true", to: [host.id]),
            ]
        )
    }

    @Test func unmuteRequestOnlyAsksTheOwner() throws {
        _ = try registry.updateTrack(guest, id: "g-mic", mute: true, description: nil)
        let effects = try registry.requestTrackUpdate(
            by: .peer(host),
            in: room,
            targetID: guest.id,
            trackID: "g-mic",
            mute: false
        )
        #expect(guest.tracks[0].mute == true, "only a request")
        #expect(effects.deliveries.sent == [Sent(push: "on-track-update-request:g-mic:false", to: [guest.id])])
    }

    @Test func trackRequestsNeedTheirPermissionAndAnExistingTrack() throws {
        #expect(
            code {
                _ = try registry.requestTrackUpdate(
                    by: .peer(guest),
                    in: room,
                    targetID: host.id,
                    trackID: "h-mic",
                    mute: true
                )
            } == .permissionDenied
        )
        #expect(
            code {
                _ = try registry.requestTrackUpdate(
                    by: .peer(viewer),
                    in: room,
                    targetID: host.id,
                    trackID: "h-mic",
                    mute: false
                )
            } == .permissionDenied
        )
        #expect(
            code {
                _ = try registry.requestTrackUpdate(
                    by: .peer(host),
                    in: room,
                    targetID: "nobody",
                    trackID: "x",
                    mute: true
                )
            } == .peerNotFound
        )
        // A mute request on a track removed meanwhile.
        _ = try registry.removeTrack(guest, id: "g-mic")
        #expect(
            code {
                _ = try registry.requestTrackUpdate(
                    by: .peer(host),
                    in: room,
                    targetID: guest.id,
                    trackID: "g-mic",
                    mute: true
                )
            } == .trackNotFound
        )
    }

    @Test func changeTrackMuteStateMutesMatchingTracksOfOthers() throws {
        let (count, effects) = try registry.changeTrackMuteState(
            by: .peer(host),
            in: room,
            value: true,
            filter: TrackFilter(kind: .audio)
        )
        #expect(count == 1, "the guest's mic; never the caller's own")
        #expect(guest.tracks[0].mute)
        #expect(host.tracks.allSatisfy { !$0.mute })
        #expect(effects.deliveries.names(for: guest) == ["on-change-track-mute-state-request:true"])
        // Already muted: nothing more to mute.
        #expect(
            try registry.changeTrackMuteState(by: .peer(host), in: room, value: true, filter: TrackFilter(kind: .audio))
                .tracksAffected == 0
        )
        // value false counts muted tracks and only asks.
        let (asked, askEffects) = try registry.changeTrackMuteState(
            by: .peer(moderator),
            in: room,
            value: false,
            filter: TrackFilter(roles: ["guest", "host"])
        )
        #expect(asked == 1)
        #expect(guest.tracks[0].mute, "unmute is only asked")
        #expect(askEffects.deliveries.sent == [Sent(push: "on-change-track-mute-state-request:false", to: [guest.id])])
        // Filters combine: roles that match nothing.
        #expect(
            try registry.changeTrackMuteState(
                by: .peer(moderator),
                in: room,
                value: true,
                filter: TrackFilter(roles: ["viewer"])
            ).tracksAffected == 0
        )
        #expect(
            code {
                _ = try registry.changeTrackMuteState(by: .peer(guest), in: room, value: true, filter: TrackFilter())
            } == .permissionDenied
        )
        #expect(
            code {
                _ = try registry.changeTrackMuteState(
                    by: .peer(host),
                    in: room,
                    value: true,
                    filter: TrackFilter(roles: ["x"])
                )
            } == .roleNotFound
        )
    }

    @Test func removePeerTellsTheTargetDisconnectsItAndTellsTheOthers() throws {
        let effects = try registry.removePeer(by: .peer(moderator), in: room, targetID: viewer.id, reason: "spam")
        #expect(
            effects.deliveries.sent == [
                Sent(push: "on-peer-leave-request:false", to: [viewer.id]),
                Sent(push: "on-peer-leave", to: [host.id, guest.id, moderator.id]),
            ]
        )
        #expect(effects.disconnects.map(\.peer.id) == [viewer.id])
        #expect(effects.disconnects.first?.reason == .removed)
        #expect(room.peer(viewer.id) == nil)
        if case .peerLeave(_, let reason) = effects.deliveries[1].push { #expect(reason == .peerKicked) }
        #expect(
            code { _ = try registry.removePeer(by: .peer(guest), in: room, targetID: host.id, reason: "") }
                == .permissionDenied
        )
        #expect(
            code { _ = try registry.removePeer(by: .peer(host), in: room, targetID: viewer.id, reason: "") }
                == .peerNotFound
        )
    }

    @Test func endRoomDisconnectsEveryoneAndLockBlocksLaterJoins() throws {
        #expect(
            code { _ = try registry.endRoom(by: .peer(moderator), room, reason: "x", lock: false) } == .permissionDenied
        )
        let effects = try registry.endRoom(by: .peer(host), room, reason: "show over", lock: true)
        #expect(
            effects.deliveries.sent == [
                Sent(push: "on-peer-leave-request:true", to: [host.id, guest.id, viewer.id, moderator.id])
            ]
        )
        #expect(effects.disconnects.count == 4)
        #expect(effects.disconnects.allSatisfy { $0.reason == .roomEnded })
        #expect(registry.room("r1") == nil)
        #expect(code { _ = try registry.join(Fixtures.request("late", role: "viewer")) } == .roomLocked)
        registry.unlock("r1")
        registry.unlock("never-seen")
        #expect(code { _ = try registry.join(Fixtures.request("late", role: "viewer")) } == nil)
    }

    @Test func serverInitiatedChangesNeedNoPermission() throws {
        _ = try registry.removePeer(by: .server, in: room, targetID: host.id, reason: "", leaveReason: .serverRemoved)
        #expect(room.peer(host.id) == nil)
    }
}

@Suite struct GroupTests {
    @Test func joinLeaveAddRemoveAndTheirRules() throws {
        let (registry, _) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        let raised = try registry.addToGroup(by: .peer(viewer), viewer, group: RoomRegistry.handRaiseGroup)
        #expect(viewer.groups == ["_handraise"])
        #expect(Set(raised.flatMap(\.to)) == [host.id, viewer.id], "everyone, the peer included")
        if case .peerUpdate(_, let changed, _) = raised.first?.push { #expect(changed == [.groups]) }
        #expect(
            try registry.addToGroup(by: .peer(viewer), viewer, group: "_handraise").isEmpty,
            "already in: nothing sent"
        )
        #expect(try registry.removeFromGroup(by: .peer(viewer), viewer, group: "other").isEmpty, "not in: nothing sent")
        // Others need changeRole.
        #expect(code { _ = try registry.addToGroup(by: .peer(viewer), host, group: "stage") } == .permissionDenied)
        #expect(code { _ = try registry.removeFromGroup(by: .peer(viewer), host, group: "stage") } == .permissionDenied)
        _ = try registry.removeFromGroup(by: .peer(host), viewer, group: "_handraise")
        #expect(viewer.groups.isEmpty)
        for index in 0..<RoomRegistry.maxGroupsPerPeer {
            _ = try registry.addToGroup(by: .peer(host), host, group: "g\(index)")
        }
        #expect(code { _ = try registry.addToGroup(by: .peer(host), host, group: "one-more") } == .trackConflict)
        let restricted = try registry.join(Fixtures.request("r", role: "viewer", viewOnly: true)).peer
        #expect(
            code { _ = try registry.addToGroup(by: .peer(restricted), restricted, group: "_handraise") }
                == .permissionDenied
        )
    }
}
