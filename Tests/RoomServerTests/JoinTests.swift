import Foundation
import RoomClient
import RoomWire
import Testing

@Suite struct JoinTests {
    @Test func joinReturnsPeerRoomPolicyAndTheOthers() async throws {
        let daemon = try await Daemon.start()
        let (host, hostJoin) = try await daemon.join("ada", as: "host", name: "Ada")
        #expect(hostJoin["resumed"] == false)
        #expect(hostJoin["peers"] == .array([]))
        #expect(hostJoin["peer"]?["role"] == "host")
        #expect(hostJoin["peer"]?["info"]?["name"] == "Ada")
        #expect(hostJoin["peer"]?["info"]?["user_id"] == "ada")
        #expect(hostJoin["peer"]?["info"]?["type"] == "regular")
        #expect(hostJoin["peer"]?["info"]?["data"] == "")
        #expect(hostJoin["peer"]?["groups"] == .array([]))
        #expect(hostJoin["peer"]?["joined_at"]?.intValue != nil)
        #expect(hostJoin["room"]?["room_id"] == "room-1")
        #expect(hostJoin["room"]?["peer_count"] == 1)
        #expect(hostJoin["room"]?["locked"] == false)
        #expect(hostJoin["room"]?["session_id"]?.stringValue?.isEmpty == false)
        #expect(hostJoin["policy"]?["name"] == "host")
        let known = hostJoin["policy"]?["known_roles"]
        #expect(known?["guest"]?["name"] == "guest")
        #expect(known?["guest"]?["publishParams"]?["allowed"] == ["audio", "video"])
        #expect(known?["viewer"]?["subscribeParams"]?["subscribeToRoles"] == ["host", "guest"])
        #expect(known?["host"]?["permissions"]?["endRoom"] == true)
        #expect(known?["moderator"]?["permissions"]?["endRoom"] == false)

        // The name defaults to the token's name claim, else the user id.
        let (viewer, viewerJoin) = try await daemon.join("bob", as: "viewer")
        #expect(viewerJoin["peer"]?["info"]?["name"] == "bob")
        #expect(viewerJoin["room"]?["peer_count"] == 2, "peer_count includes the caller")
        #expect(viewerJoin["room"]?["session_id"] == hostJoin["room"]?["session_id"])
        #expect(viewerJoin["peers"]?.arrayValue?.count == 1)
        #expect(viewerJoin["peers"]?[0]?["peer_id"] == hostJoin["peer"]?["peer_id"])
        #expect(viewerJoin["policy"]?["name"] == "viewer")

        let pushed = try await host.next("on-peer-join")
        #expect(pushed["peer"]?["peer_id"] == viewerJoin["peer"]?["peer_id"])
        #expect(pushed["peer"]?["role"] == "viewer")
        #expect(await viewer.expectSilence(for: .milliseconds(200)).isEmpty, "a joiner is not told of itself")

        let (claimNamed, _) = try await daemon.join("cy", as: "guest", name: "Cyrus")
        let named = try await host.next("on-peer-join")
        #expect(named["peer"]?["info"]?["name"] == "Cyrus")
        _ = claimNamed
    }

    @Test func secondJoinOnAConnectionIs5001AndMethodsBeforeJoinAre40005() async throws {
        let daemon = try await Daemon.start()
        let client = try await daemon.client()
        for method in ["leave", "peer-update", "broadcast"] {
            #expect(try await client.errorCode(method, ["info": ["message": "x"]]) == 40005, "\(method)")
        }
        let token = try daemon.token(user: "a", role: "host")
        _ = try await client.call("join", ["token": .string(token)])
        #expect(try await client.errorCode("join", ["token": .string(token)]) == 5001)
    }

    @Test func roomAndResumeParamsAreChecked() async throws {
        let daemon = try await Daemon.start()
        let client = try await daemon.client()
        let token = try daemon.token(room: "room-1", user: "a", role: "host")
        #expect(try await client.errorCode("join", ["token": .string(token), "room_id": "room-2"]) == 40002)
        #expect(try await client.errorCode("join", ["token": .string(token), "peer_id": "nope"]) == 41001)
        #expect(try await client.errorCode("join", ["token": 5]) == -32602)
        #expect(try await client.errorCode("join", [:]) == -32602)
        // A param given as null counts as absent.
        let joined = try await client.call("join", ["token": .string(token), "room_id": .null, "name": .null])
        #expect(joined["peer"]?["info"]?["name"] == "a")
    }

    @Test func roleLimitsAndRoomLimitsApplyAtJoin() async throws {
        let template = """
            {"roles":{
              "host":{"maxPeerCount":1,"publishParams":{"allowed":["audio"]},"subscribeParams":{"subscribeToRoles":["host"]}},
              "ghost":{"maxPeerCount":-1},
              "viewer":{}},
             "settings":{"room":{"max_peers":3}}}
            """
        let daemon = try await Daemon.start(template: template)
        let (h1, _) = try await daemon.join("h1", as: "host")
        let other = try await daemon.client()
        #expect(
            try await other.errorCode("join", ["token": .string(try daemon.token(user: "h2", role: "host"))]) == 40900
        )
        #expect(
            try await other.errorCode("join", ["token": .string(try daemon.token(user: "g", role: "ghost"))]) == 40108
        )
        #expect(
            try await other.errorCode("join", ["token": .string(try daemon.token(user: "x", role: "nosuch"))]) == 40108
        )
        let (v1, _) = try await daemon.join("v1", as: "viewer")
        let (v2, _) = try await daemon.join("v2", as: "viewer")
        #expect(
            try await other.errorCode("join", ["token": .string(try daemon.token(user: "v3", role: "viewer"))]) == 40901
        )
        withExtendedLifetime([h1, v1, v2]) {}
    }

    @Test func withAutoCreateOffOnlyPredefinedRoomsCanBeJoined() async throws {
        let daemon = try await Daemon.start(settings: #"{"room":{"auto_create":false,"predefined":["studio"]}}"#)
        let client = try await daemon.client()
        let elsewhere = try daemon.token(room: "elsewhere", user: "a", role: "host")
        #expect(try await client.errorCode("join", ["token": .string(elsewhere)]) == 40001)
        let studio = try daemon.token(room: "studio", user: "a", role: "host")
        _ = try await client.call("join", ["token": .string(studio)])
    }

    @Test func roomIsDestroyedWithItsLastPeerAndANewSessionStarts() async throws {
        let daemon = try await Daemon.start()
        let (first, firstJoin) = try await daemon.join("a", as: "host")
        _ = try await first.call("leave")
        #expect(try await first.closeCode() == 1000)
        let (_, secondJoin) = try await daemon.join("a", as: "host")
        #expect(secondJoin["room"]?["session_id"] != firstJoin["room"]?["session_id"])
        #expect(secondJoin["room"]?["peer_count"] == 1)
    }
}
