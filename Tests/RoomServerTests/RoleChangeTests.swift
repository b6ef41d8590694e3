import Foundation
import RoomClient
import RoomWire
import Testing

@Suite struct RoleChangeTests {
    @Test func politeInvitationAcceptedMakesAGuest() async throws {
        let stage = try await Stage()
        _ = try await stage.host.call("track-add", ["track_id": "h-mic", "type": "audio"])
        try await stage.settle()
        let asked = try await stage.host.call(
            "role-change-request",
            ["requested_for": stage.id("viewer"), "role": "guest"]
        )
        let token = try #require(asked["token"]?.stringValue)
        let request = try await stage.viewer.next("on-role-change-request")
        #expect(request["token"]?.stringValue == token)
        #expect(request["role"] == "guest")
        #expect(request["requested_by"]?["peer_id"] == stage.id("host"))
        #expect(request["requested_by"]?["info"]?["user_id"] == "h")

        #expect(try await stage.guest.errorCode("role-change", ["token": .string(token)]) == 40403, "only the target")
        let accepted = try await stage.viewer.call("role-change", ["token": .string(token)])
        #expect(accepted["peer"]?["role"] == "guest")
        let policy = try await stage.viewer.next("on-policy-change")
        #expect(policy["name"] == "guest")
        #expect(policy["known_roles"]?["guest"]?["publishParams"]?["allowed"] == ["audio", "video"])
        for client in stage.all {
            let update = try await client.next("on-peer-update")
            #expect(update["changed"] == ["role"])
            #expect(update["peer"]?["role"] == "guest")
        }
        #expect(try await stage.viewer.errorCode("role-change", ["token": .string(token)]) == 40403, "single use")
        // Now it may publish.
        _ = try await stage.viewer.call("track-add", ["type": "audio"])
    }

    /// On the manual clock, with the shipped 60-s request_ttl_s.
    @Test func rejectionAndExpiryTellTheRequester() async throws {
        let daemon = try await TestModeTests.manualEverywhere()
        let stage = try await Stage(daemon: daemon)
        let first = try await stage.host.call(
            "role-change-request",
            ["requested_for": stage.id("viewer"), "role": "guest"]
        )
        _ = try await stage.viewer.call("role-change-reject", ["token": first["token"]!])
        let rejected = try await stage.host.next("on-role-change-rejected")
        #expect(
            rejected == [
                "token": first["token"]!, "requested_for": stage.id("viewer"), "role": "guest", "reason": "rejected",
            ]
        )

        let second = try await stage.moderator.call(
            "role-change-request",
            ["requested_for": stage.id("viewer"), "role": "guest"]
        )
        try await TestModeTests.advanceAll(daemon, by: 59_999)
        #expect(await Stage.methods(stage.moderator).isEmpty, "not a millisecond early")
        try await TestModeTests.advanceAll(daemon, by: 1)
        let expired = try await stage.moderator.next("on-role-change-rejected")
        #expect(expired["reason"] == "expired")
        #expect(expired["token"] == second["token"])
        #expect(try await stage.viewer.errorCode("role-change", ["token": second["token"]!]) == 40403)
        #expect(try await stage.viewer.errorCode("role-change-reject", ["token": "made-up"]) == 40403)
    }

    @Test func forcedChangeBackToViewerRemovesTracksAndSendsPolicy() async throws {
        let stage = try await Stage()
        _ = try await stage.guest.call("track-add", ["track_id": "g-mic", "type": "audio"])
        _ = try await stage.guest.call("track-add", ["track_id": "g-cam", "type": "video"])
        try await stage.settle()
        let result = try await stage.host.call(
            "role-change-request",
            ["requested_for": stage.id("guest"), "role": "viewer", "force": true]
        )
        #expect(result == [:])
        for client in [stage.host, stage.viewer, stage.moderator] {
            let removed = await Stage.methods(client)
            #expect(removed == ["on-track-remove", "on-track-remove", "on-peer-update"])
        }
        let toGuest = await Stage.methods(stage.guest)
        #expect(toGuest == ["on-policy-change", "on-peer-update"], "no track pushes about its own tracks")
        #expect(try await stage.guest.errorCode("track-add", ["type": "audio"]) == 40300)
    }

    @Test func roleChangeErrors() async throws {
        let stage = try await Stage()
        #expect(
            try await stage.viewer.errorCode(
                "role-change-request",
                ["requested_for": stage.id("guest"), "role": "host"]
            ) == 40300
        )
        #expect(
            try await stage.host.errorCode("role-change-request", ["requested_for": stage.id("guest"), "role": "king"])
                == 40402
        )
        #expect(
            try await stage.host.errorCode("role-change-request", ["requested_for": "nobody", "role": "guest"]) == 40400
        )
        #expect(try await stage.host.errorCode("role-change-request", ["requested_for": stage.id("guest")]) == -32602)
        #expect(try await stage.host.errorCode("role-change", [:]) == -32602)
        let same = try await stage.host.call(
            "role-change-request",
            ["requested_for": stage.id("guest"), "role": "guest"]
        )
        #expect(same == [:], "same role: {} and no token")
        #expect(await Stage.methods(stage.guest).isEmpty)
    }

    @Test func bulkChangeAndItsErrors() async throws {
        let stage = try await Stage()
        let (viewer2, _) = try await stage.daemon.join("v2", as: "viewer")
        try await stage.settle()
        #expect(
            try await stage.host.errorCode(
                "role-change-request",
                ["roles": ["viewer"], "role": "guest", "force": false]
            ) == -32602
        )
        #expect(
            try await stage.host.errorCode(
                "role-change-request",
                ["roles": ["viewer", "guest"], "role": "guest", "force": true]
            ) == 40902
        )
        #expect(
            try await stage.host.errorCode("role-change-request", ["roles": [], "role": "guest", "force": true])
                == -32602
        )
        #expect(
            try await stage.host.errorCode(
                "role-change-request",
                ["roles": ["viewer"], "requested_for": stage.id("viewer"), "role": "guest", "force": true]
            ) == -32602
        )
        let result = try await stage.moderator.call(
            "role-change-request",
            ["roles": ["viewer"], "role": "guest", "force": true]
        )
        let changed = Set(result["changed"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        #expect(changed.count == 2)
        #expect(changed.contains(stage.ids["viewer"]!))
        #expect(try await viewer2.next("on-policy-change")["name"] == "guest")
    }

    @Test func bulkChangeHittingMaxPeerCountChangesNobody() async throws {
        let daemon = try await Daemon.start(
            template: Daemon.shippedTemplate { roles in
                roles["guest"]?["maxPeerCount"] = 2
            }
        )
        let stage = try await Stage(daemon: daemon)
        let (viewer2, _) = try await daemon.join("v2", as: "viewer")
        try await stage.settle()
        #expect(
            try await stage.host.errorCode(
                "role-change-request",
                ["roles": ["viewer"], "role": "guest", "force": true]
            ) == 40900
        )
        #expect(await Stage.methods(stage.viewer).isEmpty, "all or nothing")
        #expect(await Stage.methods(viewer2, within: .milliseconds(10)).isEmpty)
        // Single changes hit it at request time too.
        _ = try await stage.host.call(
            "role-change-request",
            ["requested_for": stage.id("viewer"), "role": "guest", "force": true]
        )
        #expect(
            try await stage.host.errorCode(
                "role-change-request",
                ["requested_for": stage.id("moderator"), "role": "guest"]
            ) == 40900
        )
    }
}
