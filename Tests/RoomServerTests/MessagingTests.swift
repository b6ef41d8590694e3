import Foundation
import RoomClient
import RoomWire
import Testing

/// broadcast / direct / group (section 5), peer-update and leave.
@Suite struct MessagingTests {
    struct Room {
        let daemon: Daemon
        let host: RoomClient, guest: RoomClient, viewer: RoomClient, viewer2: RoomClient
        let ids: [String: String]

        init(settings: String? = nil) async throws {
            daemon = try await Daemon.start(settings: settings)
            var ids: [String: String] = [:]
            let h = try await daemon.join("h", as: "host")
            let g = try await daemon.join("g", as: "guest")
            let v = try await daemon.join("v", as: "viewer")
            let v2 = try await daemon.join("v2", as: "viewer")
            (host, guest, viewer, viewer2) = (h.client, g.client, v.client, v2.client)
            for (name, result) in [("h", h.result), ("g", g.result), ("v", v.result), ("v2", v2.result)] {
                ids[name] = result["peer"]?["peer_id"]?.stringValue
            }
            self.ids = ids
            // Let the join pushes arrive, then forget them.
            try await Task.sleep(for: .milliseconds(150))
            for client in [host, guest, viewer, viewer2] { _ = client.drain() }
        }
    }

    @Test func broadcastReachesEveryoneButTheSender() async throws {
        let room = try await Room()
        let result = try await room.guest.call("broadcast", ["info": ["message": "hello"]])
        #expect(result["message_id"]?.stringValue?.isEmpty == false)
        for client in [room.host, room.viewer, room.viewer2] {
            let pushed = try await client.next("on-broadcast")
            #expect(pushed["message_id"] == result["message_id"])
            #expect(pushed["timestamp"] == result["timestamp"])
            #expect(pushed["info"] == ["message": "hello", "type": "chat"])
            #expect(pushed["recipient"] == ["type": "broadcast"])
            #expect(pushed["sender"]?["peer_id"]?.stringValue == room.ids["g"])
            #expect(pushed["sender"]?["role"] == "guest")
            #expect(pushed["sender"]?["info"] == ["name": "g", "user_id": "g"])
        }
        #expect(await room.guest.expectSilence(for: .milliseconds(200)).isEmpty, "the sender never receives")
    }

    @Test func directReachesOnlyItsPeer() async throws {
        let room = try await Room()
        let target = try #require(room.ids["v"])
        _ = try await room.host.call(
            "broadcast",
            ["info": ["message": "psst", "type": "whisper"], "peer_id": .string(target)]
        )
        let pushed = try await room.viewer.next("on-broadcast")
        #expect(pushed["recipient"] == ["type": "peer", "peer_id": .string(target)])
        #expect(pushed["info"]?["type"] == "whisper")
        for client in [room.host, room.guest, room.viewer2] {
            #expect(await client.expectSilence(for: .milliseconds(150)).isEmpty)
        }
        #expect(try await room.host.errorCode("broadcast", ["info": ["message": "x"], "peer_id": "nobody"]) == 40400)
    }

    @Test func groupReachesTheListedRolesOnly() async throws {
        let room = try await Room()
        _ = try await room.viewer.call("broadcast", ["info": ["message": "viewers!"], "roles": ["viewer", "guest"]])
        let toGuest = try await room.guest.next("on-broadcast")
        #expect(toGuest["recipient"] == ["type": "roles", "roles": ["viewer", "guest"]])
        _ = try await room.viewer2.next("on-broadcast")
        #expect(await room.host.expectSilence(for: .milliseconds(150)).isEmpty)
        #expect(await room.viewer.expectSilence(for: .milliseconds(50)).isEmpty, "never the sender")

        #expect(try await room.host.errorCode("broadcast", ["info": ["message": "x"], "roles": []]) == -32602)
        #expect(try await room.host.errorCode("broadcast", ["info": ["message": "x"], "roles": ["hots"]]) == 40402)
        #expect(
            try await room.host.errorCode("broadcast", ["info": ["message": "x"], "roles": ["guest"], "peer_id": "p"])
                == -32602
        )
        #expect(try await room.host.errorCode("broadcast", ["info": ["message": 5]]) == -32602)
        #expect(try await room.host.errorCode("broadcast", [:]) == -32602)
        // null counts as absent: this is a plain broadcast.
        _ = try await room.host.call("broadcast", ["info": ["message": "all"], "roles": .null, "peer_id": .null])
        _ = try await room.viewer.next("on-broadcast")
    }

    @Test func chatOverMaxChatBytesIs41300() async throws {
        let room = try await Room()
        let limit = 4096
        _ = try await room.host.call("broadcast", ["info": ["message": .string(String(repeating: "a", count: limit))]])
        let failure = try await room.host.failure(
            "broadcast",
            ["info": ["message": .string(String(repeating: "a", count: limit + 1))]]
        )
        #expect(failure.code == 41300)
        #expect(failure.message.contains("info.message"))
    }

    @Test func viewAndPollsOnlyMayNotBroadcastOrUpdate() async throws {
        let daemon = try await Daemon.start()
        let (restricted, _) = try await daemon.join("r", as: "viewer", restrictions: "view_and_polls_only")
        #expect(try await restricted.errorCode("broadcast", ["info": ["message": "x"]]) == 40300)
        #expect(try await restricted.errorCode("peer-update", ["name": "x"]) == 40300)
    }

    @Test func peerUpdateReachesEveryPeerIncludingTheCaller() async throws {
        let room = try await Room()
        let result = try await room.guest.call("peer-update", ["name": "Gia", "data": "{\"x\":1}"])
        #expect(result["peer"]?["info"]?["name"] == "Gia")
        for client in [room.host, room.guest, room.viewer, room.viewer2] {
            let pushed = try await client.next("on-peer-update")
            #expect(pushed["changed"] == ["name", "data"])
            #expect(pushed["peer"]?["info"]?["data"] == "{\"x\":1}")
        }
        _ = try await room.guest.call("peer-update", ["name": "Gia"])
        #expect(await room.host.expectSilence(for: .milliseconds(150)).isEmpty, "nothing changed, nothing sent")
        #expect(
            try await room.guest.errorCode("peer-update", ["name": .string(String(repeating: "n", count: 257))])
                == 41300
        )
    }

    @Test func leaveAndDropAreAnnouncedWithTheirReasons() async throws {
        // Without a reconnect grace a dropped peer leaves at once (the grace has its own tests).
        let room = try await Room(settings: #"{"room":{"reconnect_grace_s":0}}"#)
        _ = try await room.viewer.call("leave", ["reason": "bye"])
        #expect(try await room.viewer.closeCode() == 1000)
        let left = try await room.host.next("on-peer-leave")
        #expect(left == ["peer_id": .string(room.ids["v"]!), "reason": "client request"])

        await room.viewer2.abort()
        let dropped = try await room.host.next("on-peer-leave")
        #expect(dropped == ["peer_id": .string(room.ids["v2"]!), "reason": "websocket closed"])
        let (_, rejoined) = try await room.daemon.join("v3", as: "viewer")
        #expect(rejoined["room"]?["peer_count"] == 3)
    }
}
