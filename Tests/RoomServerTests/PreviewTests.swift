import Foundation
import RoomClient
import RoomServer
import RoomTokens
import RoomWire
import Testing

/// `preview` (section 13): the checks of `join`, nothing joined, nothing pushed.
@Suite struct PreviewTests {
    @Test func previewOfAnEmptyRoomIsNullAndPreviewThenJoinWorks() async throws {
        let daemon = try await Daemon.start()
        let client = try await daemon.client()
        let token = try daemon.token(user: "v", role: "viewer")
        let first = try await client.call("preview", ["token": .string(token)])
        #expect(first["room"] == .null)
        #expect(first["peer_count"] == 0)
        #expect(first["policy"]?["name"] == "viewer")
        #expect(first["policy"]?["known_roles"]?["host"]?["name"] == "host")
        // Any number of previews, then a join on the same connection.
        _ = try await client.call("preview", ["token": .string(token)])
        let joined = try await client.call("join", ["token": .string(token)])
        #expect(joined["room"]?["peer_count"] == 1, "a preview did not create a peer")
        #expect(try await client.errorCode("preview", ["token": .string(token)]) == 5001)
    }

    @Test func previewShowsTheLiveSessionAndPushesNothing() async throws {
        let daemon = try await Daemon.start()
        let (host, hostJoin) = try await daemon.join("h", as: "host")
        let (guest, _) = try await daemon.join("g", as: "guest")
        _ = try await host.next("on-peer-join")
        let watcher = try await daemon.client()
        let result = try await watcher.call("preview", ["token": .string(try daemon.token(user: "w", role: "viewer"))])
        #expect(result["peer_count"] == 2)
        #expect(result["room"]?["room_id"] == "room-1")
        #expect(result["room"]?["session_id"] == hostJoin["room"]?["session_id"])
        #expect(result["room"]?["peer_count"] == 2)
        #expect(result["room"]?["locked"] == false)
        #expect(result["policy"]?["name"] == "viewer")
        for client in [host, guest] {
            #expect(await client.expectSilence(for: .milliseconds(200)).isEmpty, "a preview pushes nothing")
        }
        // The previewing connection is not a peer: peer calls are 40005.
        #expect(try await watcher.errorCode("broadcast", ["info": ["message": "x"]]) == 40005)
        let room = try await http("GET", daemon, "/v2/active-rooms/room-1", token: try daemon.managementToken())
        #expect(room.body["peers"]?.arrayValue?.count == 2)
    }

    @Test func previewFailsExactlyAsJoinWould() async throws {
        let daemon = try await Daemon.start(settings: #"{"room":{"auto_create":false,"predefined":["studio"]}}"#)
        let client = try await daemon.client()
        let cases: [(String, Int)] = [
            ("not-a-jwt", 2004),
            (try daemon.token(room: "nowhere", user: "a", role: "host"), 40001),
            (try daemon.token(room: "studio", user: "a", role: "nobody"), 40108),
            (
                try TokenMinter(secret: Array("another-secret-another-secret-xx".utf8)).appToken(
                    room: "studio",
                    user: "a",
                    role: "host"
                ), 40109
            ),
        ]
        for (token, code) in cases {
            #expect(try await client.errorCode("preview", ["token": .string(token)]) == code, "\(code)")
        }
        #expect(try await client.errorCode("preview", [:]) == -32602)
        let studio = try daemon.token(room: "studio", user: "a", role: "host")
        #expect(try await client.errorCode("preview", ["token": .string(studio), "room_id": "other"]) == 40002)
        #expect(
            try await client.call("preview", ["token": .string(studio)])["room"] == .null,
            "a predefined room with no session previews as null"
        )

        // A locked room: 40003.
        let (host, _) = try await daemon.join("h", as: "host", room: "studio")
        _ = try await host.call("end-room", ["reason": "done", "lock": true])
        #expect(try await client.errorCode("preview", ["token": .string(studio)]) == 40003)
    }

    @Test func previewChecksTheRoleLimitAndRoomSize() async throws {
        let template = try Daemon.shippedTemplate { roles in roles["guest"]?["maxPeerCount"] = 1 }
        let daemon = try await Daemon.start(template: Daemon.mergeSettings(template, #"{"room":{"max_peers":2}}"#))
        _ = try await daemon.join("g1", as: "guest")
        let client = try await daemon.client()
        #expect(
            try await client.errorCode("preview", ["token": .string(try daemon.token(user: "g2", role: "guest"))])
                == 40900
        )
        _ = try await daemon.join("h", as: "host")
        #expect(
            try await client.errorCode("preview", ["token": .string(try daemon.token(user: "v", role: "viewer"))])
                == 40901
        )
    }

    @Test func aPreviewDoesNotCountAsJoining() async throws {
        // 10 s: time enough to connect and preview on a loaded machine, with the
        // whole suite starting its daemons at once (5 s was not, under CI-like load).
        let daemon = try await Daemon.start(settings: #"{"limits":{"join_timeout_s":10}}"#)
        let token = try daemon.token(user: "v", role: "viewer")
        let client = try await daemon.client()
        _ = try await client.call("preview", ["token": .string(token)])
        #expect(try await client.closeCode(timeout: .seconds(20)) == 1008, "join_timeout_s still applies")
    }
}
