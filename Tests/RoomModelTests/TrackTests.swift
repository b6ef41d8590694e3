import RoomProtocol
import Testing

@testable import RoomModel

@Suite struct TrackTests {
    let registry: RoomRegistry
    let host: Peer, guest: Peer, viewer: Peer, moderator: Peer

    init() throws {
        (registry, _) = Fixtures.registry()
        host = try registry.join(Fixtures.request("h", role: "host")).peer
        guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        moderator = try registry.join(Fixtures.request("m", role: "moderator")).peer
    }

    @Test func trackAddGoesToSubscribersOnlyNeverThePublisher() throws {
        let (track, deliveries) = try registry.addTrack(guest, id: "g-mic", kind: .audio)
        #expect(track == Track(trackID: "g-mic", type: .audio, source: .regular, mute: false, description: ""))
        // host, viewer and moderator subscribe to guest.
        #expect(deliveries.sent == [Sent(push: "on-track-add:g-mic", to: [host.id, viewer.id, moderator.id])])
        let (_, hostTrack) = try registry.addTrack(host, id: "h-screen", kind: .video, source: .screen)
        #expect(hostTrack.sent == [Sent(push: "on-track-add:h-screen", to: [guest.id, viewer.id, moderator.id])])
    }

    @Test func publishRightsFollowPublishParamsAllowed() {
        #expect(code { _ = try registry.addTrack(viewer, id: nil, kind: .audio) } == .permissionDenied)
        #expect(code { _ = try registry.addTrack(guest, id: nil, kind: .video, source: .screen) } == .permissionDenied)
        #expect(code { _ = try registry.addTrack(guest, id: nil, kind: .video) } == nil)
        #expect(code { _ = try registry.addTrack(moderator, id: nil, kind: .video) } == .permissionDenied)
        #expect(code { _ = try registry.addTrack(host, id: nil, kind: .audio, source: .screen) } == nil)
    }

    @Test func idsAreUniqueInTheRoomAndTracksPerPeerAreLimited() throws {
        _ = try registry.addTrack(host, id: "same", kind: .audio)
        #expect(code { _ = try registry.addTrack(guest, id: "same", kind: .audio) } == .trackConflict)
        for index in 1..<registry.settings.limits.maxTracksPerPeer {
            _ = try registry.addTrack(host, id: nil, kind: .video)
            #expect(host.tracks.count == index + 1)
        }
        #expect(code { _ = try registry.addTrack(host, id: nil, kind: .video) } == .trackConflict)
        #expect(Set(host.tracks.map(\.trackID)).count == host.tracks.count, "server-made ids are unique")
        // Removing frees the id for others.
        _ = try registry.removeTrack(host, id: "same")
        #expect(code { _ = try registry.addTrack(guest, id: "same", kind: .audio) } == nil)
    }

    @Test func viewOnlyMayNotPublish() throws {
        let restricted = try registry.join(Fixtures.request("r", role: "host", viewOnly: true)).peer
        #expect(code { _ = try registry.addTrack(restricted, id: nil, kind: .audio) } == .permissionDenied)
    }

    @Test func updateAndRemoveReachSubscribersAndNeedAnOwnTrack() throws {
        _ = try registry.addTrack(guest, id: "g-cam", kind: .video)
        let (muted, update) = try registry.updateTrack(guest, id: "g-cam", mute: true, description: "front")
        #expect(muted.mute && muted.description == "front")
        #expect(update.sent == [Sent(push: "on-track-update:g-cam", to: [host.id, viewer.id, moderator.id])])
        #expect(
            try registry.updateTrack(guest, id: "g-cam", mute: true, description: nil).1.isEmpty,
            "no change, no push"
        )
        #expect(
            code { _ = try registry.updateTrack(host, id: "g-cam", mute: false, description: nil) } == .trackNotFound
        )
        #expect(code { _ = try registry.removeTrack(host, id: "g-cam") } == .trackNotFound)
        let removed = try registry.removeTrack(guest, id: "g-cam")
        #expect(removed.sent == [Sent(push: "on-track-remove:g-cam", to: [host.id, viewer.id, moderator.id])])
        #expect(guest.tracks.isEmpty)
    }

    @Test func joinSnapshotShowsTracksByTheSameRule() throws {
        _ = try registry.addTrack(guest, id: "g-mic", kind: .audio)
        let late = try registry.join(Fixtures.request("v2", role: "viewer"))
        let byID = Dictionary(uniqueKeysWithValues: late.others.map { ($0.peer.id, $0.withTracks) })
        #expect(byID[guest.id] == true)
        #expect(byID[viewer.id] == false)
        #expect(byID[moderator.id] == false)
    }
}
