import Foundation
import RoomClient
import RoomWire
import Testing

/// Section 9, 1.1 additions: the room list with paging, one peer, and
/// `send-message`'s `{message_id, timestamp}`.
@Suite struct RestAdditionsTests {
    @Test func listsLiveRoomsSortedAndPaged() async throws {
        let daemon = try await Daemon.start()
        let admin = try daemon.managementToken()
        var clients: [RoomClient] = []
        for room in ["r-c", "r-a", "r-b", "r-d", "r-e"] {
            clients.append(try await daemon.join("u-\(room)", as: "host", room: room).client)
        }
        _ = try await daemon.join("u-2", as: "viewer", room: "r-b")
        let all = try await http("GET", daemon, "/v2/active-rooms", token: admin)
        #expect(all.status == 200)
        #expect(
            all.body["rooms"]?.arrayValue?.compactMap { $0["room_id"]?.stringValue } == [
                "r-a", "r-b", "r-c", "r-d", "r-e",
            ]
        )
        #expect(all.body["last"] == .null, "default limit 20 holds them all")
        let b = all.body["rooms"]?.arrayValue?[1]
        #expect(b?["peer_count"] == 2)
        #expect(b?["locked"] == false)
        #expect(b?["session_id"]?.stringValue?.isEmpty == false)
        #expect(b?["started_at"]?.intValue != nil)

        // Paging: follow `last` until null; every room once, in order.
        var seen: [String] = []
        var start: String?
        var pages = 0
        repeat {
            let query = "?limit=2" + (start.map { "&start=\($0)" } ?? "")
            let page = try await http("GET", daemon, "/v2/active-rooms\(query)", token: admin)
            #expect(page.status == 200)
            let ids = page.body["rooms"]?.arrayValue?.compactMap { $0["room_id"]?.stringValue } ?? []
            #expect(ids.count <= 2)
            seen += ids
            start = page.body["last"]?.stringValue
            pages += 1
        } while start != nil && pages < 10
        #expect(seen == ["r-a", "r-b", "r-c", "r-d", "r-e"])
        #expect(pages == 3)
        let exact = try await http("GET", daemon, "/v2/active-rooms?limit=5", token: admin)
        #expect(exact.body["last"] == .null, "no more rooms after a full page: last is null")
        let after = try await http("GET", daemon, "/v2/active-rooms?start=r-c", token: admin)
        #expect(after.body["rooms"]?.arrayValue?.compactMap { $0["room_id"]?.stringValue } == ["r-d", "r-e"])
        let none = try await http("GET", daemon, "/v2/active-rooms?start=zzz", token: admin)
        #expect(none.body == ["rooms": [], "last": nil])
        withExtendedLifetime(clients) {}
    }

    @Test func listRejectsBadLimitsAndNeedsAToken() async throws {
        let daemon = try await Daemon.start()
        let admin = try daemon.managementToken()
        for limit in ["0", "101", "-1", "abc", ""] {
            let reply = try await http("GET", daemon, "/v2/active-rooms?limit=\(limit)", token: admin)
            #expect(reply.status == 400, "limit=\(limit)")
            #expect(reply.body["code"] == -32602)
            #expect(reply.body["message"]?.stringValue?.contains("limit") == true)
        }
        #expect(try await http("GET", daemon, "/v2/active-rooms?limit=100", token: admin).status == 200)
        #expect(try await http("GET", daemon, "/v2/active-rooms?limit=1", token: admin).status == 200)
        let anonymous = try await http("GET", daemon, "/v2/active-rooms")
        #expect(anonymous.status == 401)
        #expect(anonymous.body["code"] == 40100)
        let app = try await http("GET", daemon, "/v2/active-rooms", token: try daemon.token(user: "a", role: "host"))
        #expect(app.status == 403)
        let post = try await http("POST", daemon, "/v2/active-rooms", token: admin, body: "{}")
        #expect(post.status == 404)
        #expect(post.body["code"] == 404)
        #expect(post.body["message"]?.stringValue != nil)
    }

    @Test func getsOnePeer() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        _ = try await stage.guest.call("track-add", ["track_id": "g-mic", "type": "audio"])
        let guestID = stage.ids["guest"]!
        let peer = try await http("GET", stage.daemon, "/v2/active-rooms/room-1/peers/\(guestID)", token: admin)
        #expect(peer.status == 200)
        #expect(peer.body["peer_id"]?.stringValue == guestID)
        #expect(peer.body["role"] == "guest")
        #expect(peer.body["info"]?["user_id"] == "g")
        #expect(peer.body["tracks"]?["g-mic"]?["type"] == "audio")
        let unknown = try await http("GET", stage.daemon, "/v2/active-rooms/room-1/peers/nobody", token: admin)
        #expect(unknown.status == 404)
        #expect(unknown.body["code"] == 40400)
        let noRoom = try await http("GET", stage.daemon, "/v2/active-rooms/nowhere/peers/\(guestID)", token: admin)
        #expect(noRoom.status == 404)
        #expect(noRoom.body["code"] == 40001)
    }

    @Test func sendMessageAnswersWithTheIdAndTimeOfItsPushes() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        let sent = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/send-message",
            token: admin,
            body: #"{"message":"hello"}"#
        )
        #expect(sent.status == 200)
        let id = try #require(sent.body["message_id"]?.stringValue)
        let timestamp = try #require(sent.body["timestamp"]?.intValue)
        for client in stage.all {
            let push = try await client.next("on-broadcast")
            #expect(push["message_id"]?.stringValue == id)
            #expect(push["timestamp"]?.intValue == timestamp)
        }
        let again = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/send-message",
            token: admin,
            body: #"{"role":"guest","message":"hi"}"#
        )
        #expect(again.body["message_id"]?.stringValue != id, "each message its own id")
        #expect(try await stage.guest.next("on-broadcast")["message_id"] == again.body["message_id"])
    }

    @Test func unknownRoutesAre404WithCodeAndMessage() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        for (method, path) in [
            ("GET", "/v2/active-rooms/room-1/hls/nothing"), ("POST", "/v2/active-rooms/room-1/hls"),
            ("GET", "/v2/active-rooms/room-1/peers/a/b"), ("GET", "/v2/nope"),
            ("POST", "/v2/active-rooms/room-1/peers"), ("GET", "/v2/active-rooms/room-1/hls/start"),
        ] {
            let reply = try await http(method, stage.daemon, path, token: admin, body: method == "POST" ? "{}" : nil)
            #expect(reply.status == 404, "\(method) \(path)")
            #expect(reply.body["code"] == 404)
            #expect(reply.body["message"]?.stringValue?.isEmpty == false)
        }
    }
}
