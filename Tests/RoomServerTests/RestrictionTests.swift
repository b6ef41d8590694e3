import Foundation
import RoomClient
import RoomWire
import Testing

/// `view_and_polls_only` (PROTOCOL.md section 4, 1.1): such a peer may view
/// and vote, nothing else, whatever its role's permissions.
@Suite struct RestrictionTests {
    @Test func aRestrictedHostMayNotPublishSpeakActOnOthersOrChangeTheRoom() async throws {
        let daemon = try await Daemon.start()
        let stage = try await Stage(daemon: daemon)
        let (restricted, joined) = try await daemon.join("rh", as: "host", restrictions: "view_and_polls_only")
        let selfID = try #require(joined["peer"]?["peer_id"])
        try await stage.settle()
        let denied: [(String, JSON)] = [
            ("broadcast", ["info": ["message": "hi"]]),
            ("broadcast", ["info": ["message": "hi"], "peer_id": stage.id("guest")]),
            ("track-add", ["type": "audio"]),
            ("track-update", ["track_id": "x", "mute": true]),
            ("track-remove", ["track_id": "x"]),
            ("peer-update", ["name": "Eve"]),
            ("group-join", ["name": "_handraise"]),
            ("group-leave", ["name": "_handraise"]),
            ("group-add", ["name": "stage", "peer_id": stage.id("viewer")]),
            ("group-remove", ["name": "stage", "peer_id": stage.id("viewer")]),
            ("role-change-request", ["requested_for": stage.id("viewer"), "role": "guest", "force": true]),
            ("role-change-request", ["requested_for": stage.id("viewer"), "role": "guest"]),
            ("role-change-request", ["roles": ["viewer"], "role": "guest"]),
            ("track-update-request", ["requested_for": stage.id("guest"), "track_id": "x", "mute": true]),
            ("change-track-mute-state-request", ["value": true]),
            ("peer-leave-request", ["requested_for": stage.id("guest")]),
            ("end-room", ["lock": true]),
            ("audio-level", ["levels": []]),
        ]
        for (method, params) in denied {
            let failure = try await restricted.failure(method, params)
            #expect(failure.code == 40300, "\(method) \(params): \(failure)")
            #expect(failure.message.contains("view_and_polls_only"), "\(method): \(failure.message)")
        }
        for client in stage.all {
            #expect(await Stage.methods(client).isEmpty, "nobody saw anything happen")
        }
        // What it may still do: read, ping, answer a role change made to it, leave.
        #expect(try await restricted.call("ping")["server_time"] != nil)
        #expect(try await restricted.call("find-peer", ["limit": 10])["total"] == 5)
        let token = try await stage.host.call("role-change-request", ["requested_for": selfID, "role": "viewer"])[
            "token"
        ]
        #expect(try await restricted.next("on-role-change-request")["token"] == token)
        #expect(try await restricted.call("role-change", ["token": token!])["peer"]?["role"] == "viewer")
        _ = try await restricted.call("leave")
    }
}
