import Foundation
import RoomClient
import RoomWire
import Testing

/// The audit log (1.3, PROTOCOL.md section 32) over real sockets: every
/// moderation act that succeeded is one entry, over the WebSocket (the
/// peer as it was) and over REST (`{"type":"rest"}`); `audit-list` and the
/// two REST reads page with `next`; the log outlives `end-room`.
@Suite struct AuditLogTests {
    static func actions(_ entries: JSON?) -> [String] {
        entries?.arrayValue?.compactMap { $0["action"]?.stringValue } ?? []
    }

    @Test func everyActSucceededIsOneEntryReadableOverBothAndAfterTheEnd() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        let host = stage.host
        let sent = try await stage.guest.call("broadcast", ["info": ["message": "spam"]])
        let messageID = try #require(sent["message_id"])

        // Over the WebSocket, as the host.
        _ = try await host.call("message-pin", ["message_id": messageID])
        _ = try await host.call("message-delete", ["message_id": messageID])
        #expect(try await host.errorCode("message-delete", ["message_id": "nope"]) != nil, "a failed act: no entry")
        _ = try await host.call("chat-state", ["slow_mode_s": 5])
        _ = try await host.call("chat-ban", ["user_id": "v", "shadow": true])
        _ = try await host.call("chat-unban", ["user_id": "v"])
        _ = try await host.call("stage-block", ["user_id": "v", "duration_s": 60])
        _ = try await host.call("stage-unblock", ["user_id": "v"])
        _ = try await host.call(
            "role-change-request",
            ["requested_for": stage.id("guest"), "role": "viewer", "force": true]
        )
        _ = try await host.call("peer-ban", ["peer_id": stage.id("viewer"), "reason": "spam"])
        #expect(try await stage.viewer.closeCode() == 4001)
        _ = try await host.call("peer-unban", ["user_id": "v"])

        // Over REST.
        let base = "/v2/active-rooms/room-1"
        for (path, body) in [
            ("ban", #"{"user_id":"x","reason":"r"}"#), ("unban", #"{"user_id":"x"}"#),
            ("stage/block", #"{"user_id":"y"}"#), ("stage/unblock", #"{"user_id":"y"}"#),
            ("peers/\(stage.ids["guest"]!)", #"{"role":"guest"}"#),
            ("peers/\(stage.ids["guest"]!)", #"{"name":"Gil"}"#),
        ] {
            let answer = try await http("POST", stage.daemon, "\(base)/\(path)", token: admin, body: body)
            #expect(answer.status == 200, "\(path): \(answer.body)")
        }

        let wsActions = [
            "message.pin", "message.delete", "chat.state", "chat.ban", "chat.unban", "stage.block", "stage.unblock",
            "role.force", "peer.ban", "peer.unban",
        ]
        let restActions = ["peer.ban", "peer.unban", "stage.block", "stage.unblock", "role.force"]
        let listed = try await stage.moderator.call("audit-list")
        let entries = try #require(listed["entries"]?.arrayValue)
        #expect(Self.actions(listed["entries"]) == wsActions + restActions, "\(listed)")
        #expect(listed["next"] == .null)
        #expect(entries.map { $0["seq"]?.intValue ?? 0 } == Array(1...entries.count))
        let chatBan = entries[3]
        #expect(chatBan["actor"]?["peer_id"] == stage.id("host"))
        #expect(chatBan["actor"]?["info"]?["user_id"] == "h")
        #expect(chatBan["target"] == ["user_id": "v"])
        #expect(chatBan["details"] == ["shadow": true])
        let ban = entries[8]
        #expect(ban["target"]?["peer_id"] == stage.id("viewer"))
        #expect(ban["target"]?["user_id"] == "v", "the banned peer's user")
        #expect(ban["details"] == ["reason": "spam"])
        #expect(entries[7]["target"]?["peer_id"] == stage.id("guest"))
        #expect(entries[10]["actor"] == ["type": "rest"])
        #expect(entries[10]["target"] == ["user_id": "x"])
        #expect(entries[14]["target"]?["peer_id"] == stage.id("guest"))

        // Paging: `next` is the seq to pass as `after`.
        let first = try await host.call("audit-list", ["limit": 4])
        #expect(first["entries"]?.arrayValue?.count == 4)
        #expect(first["next"] == 4)
        let second = try await host.call("audit-list", ["after": 4, "limit": 500])
        #expect(second["entries"]?.arrayValue?.first?["seq"] == 5)
        #expect(second["next"] == .null)
        #expect(try await host.errorCode("audit-list", ["limit": 501]) == -32602)
        #expect(try await stage.guest.errorCode("audit-list") == 40300, "guests neither moderate nor moderateChat")
        let rest = try await http("GET", stage.daemon, "\(base)/audit?after=2&limit=3", token: admin)
        #expect(rest.status == 200)
        #expect(rest.body["entries"]?.arrayValue?.map { $0["seq"]?.intValue ?? 0 } == [3, 4, 5])
        #expect(rest.body["next"] == 5)
        #expect(try await http("GET", stage.daemon, "\(base)/audit").status == 401, "a management token")
        #expect(try await http("GET", stage.daemon, "\(base)/audit?limit=0", token: admin).status == 400)

        // end-room with lock: two entries; the unlock after it joins the ended session's log.
        _ = try await host.call("end-room", ["reason": "show over", "lock": true])
        let unlocked = try await http("POST", stage.daemon, "\(base)/unlock", token: admin)
        #expect(unlocked.status == 200)
        #expect(try await http("GET", stage.daemon, "\(base)/audit", token: admin).status == 404, "no live session")
        let ended = try await http("GET", stage.daemon, "/v2/rooms/room-1/audit?after=15", token: admin)
        #expect(ended.status == 200, "\(ended.body)")
        #expect(Self.actions(ended.body["entries"]) == ["room.end", "room.lock", "room.unlock"])
        #expect(ended.body["entries"]?[0]?["details"] == ["reason": "show over", "lock": true])
        let session = try #require(ended.body["session_id"]?.stringValue)
        let bySession = try await http(
            "GET",
            stage.daemon,
            "/v2/rooms/room-1/audit?session_id=\(session)&limit=1",
            token: admin
        )
        #expect(bySession.body["entries"]?.arrayValue?.count == 1)
        #expect(bySession.body["next"] == 1)
        let unknown = try await http("GET", stage.daemon, "/v2/rooms/room-1/audit?session_id=nope", token: admin)
        #expect(unknown.status == 404)
    }

    @Test func restRemovalAndEndAreRecordedAsTheRestActor() async throws {
        let stage = try await Stage(room: "room-2")
        let admin = try stage.daemon.managementToken()
        let base = "/v2/active-rooms/room-2"
        let removed = try await http(
            "POST",
            stage.daemon,
            "\(base)/remove-peers",
            token: admin,
            body: #"{"peer_id":"\#(stage.ids["viewer"]!)","reason":"bye"}"#
        )
        #expect(removed.status == 200)
        let ended = try await http("POST", stage.daemon, "\(base)/end-room", token: admin, body: #"{"reason":"done"}"#)
        #expect(ended.status == 200)
        let log = try await http("GET", stage.daemon, "/v2/rooms/room-2/audit", token: admin)
        #expect(Self.actions(log.body["entries"]) == ["peer.remove", "room.end"], "\(log.body)")
        #expect(log.body["entries"]?[0]?["target"]?["user_id"] == "v")
        #expect(log.body["entries"]?[0]?["details"] == ["reason": "bye"])
        #expect(log.body["entries"]?[1]?["actor"] == ["type": "rest"])
    }
}

extension AuditLogTests {
    @Test func mutesARemovalAndAClearAreRecordedAndTheSwiftKitReadsThem() async throws {
        let stage = try await Stage(room: "room-3")
        _ = try await stage.guest.call("track-add", ["type": "audio", "track_id": "g-mic"])
        _ = try await stage.host.call(
            "track-update-request",
            ["requested_for": stage.id("guest"), "track_id": "g-mic", "mute": true]
        )
        _ = try await stage.host.call("change-track-mute-state-request", ["value": true, "roles": ["guest"]])
        _ = try await stage.host.call("chat-clear")
        _ = try await stage.host.call("peer-leave-request", ["requested_for": stage.id("moderator"), "reason": "bye"])

        let (entries, next) = try await stage.host.auditLog()
        #expect(entries.map(\.action) == ["track.mute", "track.mute", "chat.clear", "peer.remove"])
        #expect(next == nil)
        #expect(entries.map(\.seq) == [1, 2, 3, 4])
        #expect(entries[0].target == ["peer_id": stage.id("guest"), "track_id": "g-mic", "user_id": "g"])
        #expect(entries[1].target == ["roles": ["guest"]], "a bulk act is one entry naming the roles")
        #expect(entries[3].target == ["peer_id": stage.id("moderator"), "user_id": "m"])
        #expect(entries[3].details == ["reason": "bye"])
        guard case .peer(let actor) = entries[3].actor else {
            Issue.record("the host is the actor: \(entries[3].actor)")
            return
        }
        #expect(actor.peerID == stage.ids["host"] && actor.role == "host" && actor.userID == "h")
        let (page, more) = try await stage.host.auditLog(after: 1, limit: 2)
        #expect(page.map(\.seq) == [2, 3] && more == 3)
    }
}

/// Section 32 over 3 nodes: an act through an edge node is recorded at the
/// room's home, any node answers the REST read, and the log survives a
/// `kill -9` of the home with the room's saved state (seq goes on).
@Suite(.serialized) struct AuditLogClusterTests {
    typealias Cluster = ClusterRoutingTests.Cluster

    @Test func theLogSurvivesTheHomesKillAndAnyNodeAnswers() async throws {
        let cluster = try await Cluster()
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (moderator, _) = try await cluster.join("m", as: "moderator", on: 1)
        defer { _ = host }
        _ = try await moderator.call("chat-ban", ["user_id": "loud", "duration_s": 600])
        let admin = try cluster.nodes[2].managementToken()
        let blocked = try await http(
            "POST",
            cluster.nodes[2],
            "/v2/active-rooms/room-1/stage/block",
            token: admin,
            body: #"{"user_id":"y"}"#
        )
        #expect(blocked.status == 200)
        for node in cluster.nodes {
            let read = try await http("GET", node, "/v2/active-rooms/room-1/audit", token: admin)
            #expect(AuditLogTests.actions(read.body["entries"]) == ["chat.ban", "stage.block"], "\(read.body)")
        }
        try await cluster.waitUntilSaved(containing: #""stage.block""#)
        _ = await cluster.nodes[0].stop(signal: SIGKILL)
        let again = try await ChatModerationClusterTests.again(moderator, "m", as: "moderator", on: 1, cluster)
        let listed = try await ClusterRoutingTests.eventually(again, "audit-list", [:], within: 15)
        #expect(AuditLogTests.actions(listed["entries"]) == ["chat.ban", "stage.block"], "\(listed)")
        _ = try await again.call("chat-unban", ["user_id": "loud"])
        let after = try await again.call("audit-list", ["after": 2])
        #expect(after["entries"]?[0]?["seq"] == 3, "seq goes on within the session")
        #expect(after["entries"]?[0]?["action"] == "chat.unban")
        let read = try await http("GET", cluster.nodes[2], "/v2/rooms/room-1/audit", token: admin)
        #expect(read.body["entries"]?.arrayValue?.count == 3, "\(read.body)")
    }
}
