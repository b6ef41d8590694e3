import Foundation
import RoomClient
import RoomWire
import Testing

@Suite struct ModerationTests {
    @Test func muteIsEnforcedUnmuteIsOnlyAsked() async throws {
        let stage = try await Stage()
        _ = try await stage.host.call("track-add", ["track_id": "h-mic", "type": "audio"])
        try await stage.settle()
        _ = try await stage.moderator.call(
            "track-update-request",
            ["requested_for": stage.id("host"), "track_id": "h-mic", "mute": true]
        )
        let asked = try await stage.host.next("on-track-update-request")
        #expect(asked["track_id"] == "h-mic")
        #expect(asked["mute"] == true)
        #expect(asked["requested_by"]?["role"] == "moderator")
        for client in [stage.guest, stage.viewer, stage.moderator] {
            #expect(try await client.next("on-track-update")["track"]?["mute"] == true)
        }
        _ = try await stage.moderator.call(
            "track-update-request",
            ["requested_for": stage.id("host"), "track_id": "h-mic", "mute": false]
        )
        #expect(try await stage.host.next("on-track-update-request")["mute"] == false)
        #expect(await Stage.methods(stage.viewer).isEmpty, "unmute changes nothing by itself")
        // The owner decides.
        _ = try await stage.host.call("track-update", ["track_id": "h-mic", "mute": false])
        #expect(try await stage.viewer.next("on-track-update")["track"]?["mute"] == false)
    }

    @Test func trackRequestErrors() async throws {
        let stage = try await Stage()
        _ = try await stage.guest.call("track-add", ["track_id": "g-mic", "type": "audio"])
        #expect(
            try await stage.guest.errorCode(
                "track-update-request",
                ["requested_for": stage.id("guest"), "track_id": "g-mic", "mute": true]
            ) == 40300
        )
        #expect(
            try await stage.viewer.errorCode(
                "track-update-request",
                ["requested_for": stage.id("guest"), "track_id": "g-mic", "mute": false]
            ) == 40300
        )
        #expect(
            try await stage.host.errorCode(
                "track-update-request",
                ["requested_for": "nobody", "track_id": "g-mic", "mute": true]
            ) == 40400
        )
        #expect(
            try await stage.host.errorCode(
                "track-update-request",
                ["requested_for": stage.id("guest"), "track_id": "g-mic"]
            ) == -32602
        )
        _ = try await stage.guest.call("track-remove", ["track_id": "g-mic"])
        #expect(
            try await stage.host.errorCode(
                "track-update-request",
                ["requested_for": stage.id("guest"), "track_id": "g-mic", "mute": true]
            ) == 40401
        )
    }

    @Test func changeTrackMuteStateMutesEveryMatchingTrackOfOthers() async throws {
        let stage = try await Stage()
        _ = try await stage.guest.call("track-add", ["track_id": "g-mic", "type": "audio"])
        _ = try await stage.guest.call("track-add", ["track_id": "g-cam", "type": "video"])
        _ = try await stage.host.call("track-add", ["track_id": "h-mic", "type": "audio"])
        try await stage.settle()
        let muted = try await stage.host.call("change-track-mute-state-request", ["value": true, "type": "audio"])
        #expect(muted["tracks_affected"] == 1, "the guest's mic, not the caller's own")
        let request = try await stage.guest.next("on-change-track-mute-state-request")
        #expect(request["value"] == true)
        #expect(request["type"] == "audio")
        #expect(request["roles"] == nil)
        #expect(try await stage.viewer.next("on-track-update")["track"]?["track_id"] == "g-mic")
        let asked = try await stage.moderator.call(
            "change-track-mute-state-request",
            ["value": false, "roles": ["guest"]]
        )
        #expect(asked["tracks_affected"] == 1)
        #expect(try await stage.guest.next("on-change-track-mute-state-request")["roles"] == ["guest"])
        #expect(try await stage.guest.errorCode("change-track-mute-state-request", ["value": true]) == 40300)
        #expect(
            try await stage.host.errorCode("change-track-mute-state-request", ["value": true, "source": "tv"]) == -32602
        )
        #expect(try await stage.host.errorCode("change-track-mute-state-request", [:]) == -32602)
    }

    @Test func removedPeerIsTold4001AndOthersSeePeerKicked() async throws {
        let stage = try await Stage()
        _ = try await stage.moderator.call(
            "peer-leave-request",
            ["requested_for": stage.id("viewer"), "reason": "spam"]
        )
        let told = try await stage.viewer.next("on-peer-leave-request")
        #expect(told["reason"] == "spam")
        #expect(told["room_end"] == false)
        #expect(told["requested_by"]?["peer_id"] == stage.id("moderator"))
        #expect(try await stage.viewer.closeCode() == 4001)
        for client in [stage.host, stage.guest, stage.moderator] {
            #expect(try await client.next("on-peer-leave") == ["peer_id": stage.id("viewer"), "reason": "peer kicked"])
        }
        #expect(try await stage.guest.errorCode("peer-leave-request", ["requested_for": stage.id("host")]) == 40300)
        #expect(try await stage.host.errorCode("peer-leave-request", ["requested_for": stage.id("viewer")]) == 40400)
        #expect(try await stage.host.errorCode("peer-leave-request", [:]) == -32602)
    }

    @Test func endRoomWithLockThenJoinIs40003() async throws {
        let stage = try await Stage()
        #expect(try await stage.moderator.errorCode("end-room", [:]) == 40300)
        let ended = try await stage.host.call("end-room", ["reason": "show over", "lock": true])
        #expect(ended == [:])
        for client in stage.all {
            let told = try await client.next("on-peer-leave-request")
            #expect(told["room_end"] == true)
            #expect(told["reason"] == "show over")
            #expect(try await client.closeCode() == 4002)
        }
        let late = try await stage.daemon.client()
        let token = try stage.daemon.token(user: "late", role: "viewer")
        #expect(try await late.errorCode("join", ["token": .string(token)]) == 40003)
        // Other rooms are unaffected.
        _ = try await stage.daemon.join("x", as: "viewer", room: "room-2")
    }
}

@Suite struct ActiveSpeakerTests {
    /// On test mode's manual clock: each tick is a clock advance, not a race with the machine's load.
    @Test func levelsBecomeActiveSpeakerListsEverySecond() async throws {
        let daemon = try await TestModeTests.manualEverywhere(settings: #"{"active_speakers":{"interval_ms":200}}"#)
        let stage = try await Stage(daemon: daemon)
        _ = try await stage.host.call("track-add", ["track_id": "h-mic", "type": "audio"])
        _ = try await stage.guest.call("track-add", ["track_id": "g-mic", "type": "audio"])
        try await stage.settle()
        _ = try await stage.guest.call("audio-level", ["levels": [["track_id": "g-mic", "level": 80]]])
        _ = try await stage.host.call("audio-level", ["levels": [["track_id": "h-mic", "level": 50]]])
        try await TestModeTests.advanceAll(daemon, by: 200)
        let list = try await stage.viewer.next("active-speakers")["speaker-list"] ?? .null
        #expect(
            list == [
                ["peer_id": stage.id("guest"), "track_id": "g-mic", "level": 80],
                ["peer_id": stage.id("host"), "track_id": "h-mic", "level": 50],
            ]
        )
        // Speech stops: lists shrink to one empty list, then silence.
        var last: JSON = list
        for _ in 0..<50 where last != [] {
            try await TestModeTests.advanceAll(daemon, by: 200)
            for message in await stage.viewer.expectSilence(for: .milliseconds(30))
            where message["method"] == "active-speakers" {
                last = message["params"]?["speaker-list"] ?? .null
            }
        }
        #expect(last == [])
        try await TestModeTests.advanceAll(daemon, by: 1000)
        #expect(await Stage.methods(stage.viewer, within: .milliseconds(300)).isEmpty)

        #expect(
            try await stage.host.errorCode("audio-level", ["levels": [["track_id": "g-mic", "level": 50]]]) == 40401
        )
        #expect(
            try await stage.host.errorCode("audio-level", ["levels": [["track_id": "h-mic", "level": 101]]]) == -32602
        )
        #expect(try await stage.host.errorCode("audio-level", ["levels": "loud"]) == -32602)
        #expect(try await stage.host.errorCode("audio-level", [:]) == -32602)
    }
}
