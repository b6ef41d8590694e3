import RoomConfig
import Testing

@testable import RoomModel

@Suite struct ActiveSpeakerTests {
    let registry: RoomRegistry
    let host: Peer, guest: Peer, viewer: Peer, moderator: Peer

    init() throws {
        var settings = Settings()
        settings.activeSpeakers.maxSpeakers = 2
        var template = Fixtures.template(settings: settings)
        template.roles["moderator"]?.publishParams.allowed = [.audio]  // a speaking moderator
        registry = RoomRegistry(template: template, clock: ManualClock(), ids: SequentialIDGenerator())
        host = try registry.join(Fixtures.request("h", role: "host")).peer
        guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        moderator = try registry.join(Fixtures.request("m", role: "moderator")).peer
        _ = try registry.addTrack(host, id: "h-mic", kind: .audio)
        _ = try registry.addTrack(host, id: "h-cam", kind: .video)
        _ = try registry.addTrack(guest, id: "g-mic", kind: .audio)
        _ = try registry.addTrack(moderator, id: "m-mic", kind: .audio, source: .regular)
    }

    func lists(_ deliveries: [Delivery], for peer: Peer) -> [String] {
        deliveries.filter { $0.recipients.contains { $0 === peer } }.map(\.push.name)
    }

    @Test func loudestFirstAboveTheThresholdHighestLevelSinceLastTick() throws {
        try registry.reportAudioLevels(host, [("h-mic", 40)])
        try registry.reportAudioLevels(host, [("h-mic", 90)])
        try registry.reportAudioLevels(host, [("h-mic", 10)])
        try registry.reportAudioLevels(guest, [("g-mic", 60)])
        let deliveries = registry.tickActiveSpeakers()
        #expect(lists(deliveries, for: viewer) == ["active-speakers:h-mic@90,g-mic@60"])
        #expect(lists(deliveries, for: host) == ["active-speakers:h-mic@90,g-mic@60"])
        // Below threshold (35): not a speaker.
        try registry.reportAudioLevels(host, [("h-mic", 34)])
        try registry.reportAudioLevels(guest, [("g-mic", 35)])
        #expect(lists(registry.tickActiveSpeakers(), for: viewer) == ["active-speakers:g-mic@35"])
    }

    @Test func tiesGoToTheLowerPeerIDAndMaxSpeakersCaps() throws {
        // peer ids are peer-1 (host), peer-2 (guest), peer-4 (moderator).
        try registry.reportAudioLevels(moderator, [("m-mic", 50)])
        try registry.reportAudioLevels(guest, [("g-mic", 50)])
        try registry.reportAudioLevels(host, [("h-mic", 50)])
        let deliveries = registry.tickActiveSpeakers()
        // The moderator subscribes to moderators: three candidates, capped at 2.
        #expect(lists(deliveries, for: moderator) == ["active-speakers:h-mic@50,g-mic@50"])
    }

    @Test func listsAreFilteredBySubscriptionButOwnTracksAlwaysShow() throws {
        try registry.reportAudioLevels(moderator, [("m-mic", 80)])
        let deliveries = registry.tickActiveSpeakers()
        #expect(lists(deliveries, for: moderator) == ["active-speakers:m-mic@80"], "its own track")
        #expect(lists(deliveries, for: viewer).isEmpty, "viewers do not subscribe to moderators: no (empty) list")
        #expect(lists(deliveries, for: host).isEmpty)
    }

    @Test func sentOnlyWhenChangedAndOneEmptyListWhenSpeechStops() throws {
        try registry.reportAudioLevels(host, [("h-mic", 70)])
        #expect(lists(registry.tickActiveSpeakers(), for: viewer) == ["active-speakers:h-mic@70"])
        try registry.reportAudioLevels(host, [("h-mic", 70)])
        #expect(registry.tickActiveSpeakers().isEmpty, "same list: nothing sent")
        let stopped = registry.tickActiveSpeakers()
        #expect(lists(stopped, for: viewer) == ["active-speakers:"])
        #expect(lists(stopped, for: host) == ["active-speakers:"])
        #expect(registry.tickActiveSpeakers().isEmpty, "one empty list only")
    }

    @Test func aLateJoinerGetsTheCurrentListAndNoEmptyListBeforeIt() throws {
        try registry.reportAudioLevels(guest, [("g-mic", 70)])
        _ = registry.tickActiveSpeakers()
        let late = try registry.join(Fixtures.request("late", role: "viewer")).peer
        try registry.reportAudioLevels(guest, [("g-mic", 70)])
        let deliveries = registry.tickActiveSpeakers()
        #expect(lists(deliveries, for: late) == ["active-speakers:g-mic@70"])
        #expect(lists(deliveries, for: viewer).isEmpty, "unchanged for the others")
        let quiet = try registry.join(Fixtures.request("quiet", role: "viewer")).peer
        let end = registry.tickActiveSpeakers()
        #expect(lists(end, for: late) == ["active-speakers:"])
        #expect(lists(end, for: quiet).isEmpty, "never an empty list to a peer that had no list")
    }

    @Test func mutedTracksCountAsZeroAndOnlyOwnAudioTracksMayReport() throws {
        _ = try registry.updateTrack(host, id: "h-mic", mute: true, description: nil)
        try registry.reportAudioLevels(host, [("h-mic", 99)])
        #expect(registry.tickActiveSpeakers().isEmpty)
        #expect(code { try registry.reportAudioLevels(host, [("g-mic", 50)]) } == .trackNotFound)
        #expect(code { try registry.reportAudioLevels(host, [("h-cam", 50)]) } == .trackNotFound)
    }

    @Test func aTrackRemovedByAForcedRoleChangeLeavesTheList() throws {
        try registry.reportAudioLevels(guest, [("g-mic", 80)])
        try registry.reportAudioLevels(host, [("h-mic", 60)])
        #expect(lists(registry.tickActiveSpeakers(), for: viewer) == ["active-speakers:g-mic@80,h-mic@60"])
        try registry.reportAudioLevels(guest, [("g-mic", 80)])
        _ = try registry.requestRoleChange(
            by: .peer(host),
            in: host.room,
            targetID: guest.id,
            role: "viewer",
            force: true
        )
        try registry.reportAudioLevels(host, [("h-mic", 60)])
        let after = registry.tickActiveSpeakers()
        #expect(lists(after, for: viewer) == ["active-speakers:h-mic@60"])
        #expect(lists(after, for: guest) == ["active-speakers:h-mic@60"], "the demoted peer too")
    }

    @Test func aQuietRoomCostsNothing() throws {
        for index in 0..<50 { _ = try registry.join(Fixtures.request("x\(index)", role: "viewer")) }
        #expect(registry.tickActiveSpeakers().isEmpty)
        #expect(registry.activeSpeakers.roomIDs.isEmpty, "no reports, no room to tick")
        try registry.reportAudioLevels(host, [("h-mic", 50)])
        let first = registry.tickActiveSpeakers()
        #expect(
            first.count == 4,
            "one delivery per role (guest, viewer, moderator) plus the speaking host's own, not one per peer"
        )
        let viewers = first.first {
            $0.push.name == "active-speakers:h-mic@50" && $0.recipients.contains { $0 === viewer }
        }
        #expect(viewers?.recipients.count == 51)
    }
}
