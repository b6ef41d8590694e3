import Foundation
import RoomClient
import RoomWire
import RoomdTesting
import Testing

/// Section 9: the REST API, and that its changes reach peers like a peer's own.
@Suite struct RestTests {
    @Test func getRoomAndPeers() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        _ = try await stage.guest.call("track-add", ["track_id": "g-mic", "type": "audio"])
        let (status, body) = try await http("GET", stage.daemon, "/v2/active-rooms/room-1", token: admin)
        #expect(status == 200)
        #expect(body["room"]?["room_id"] == "room-1")
        #expect(body["room"]?["peer_count"] == 4)
        #expect(body["room"]?["locked"] == false)
        #expect(body["peers"]?.arrayValue?.count == 4)
        let guest = body["peers"]?.arrayValue?.first { $0["role"] == "guest" }
        #expect(guest?["tracks"]?["g-mic"]?["type"] == "audio")
        let peers = try await http("GET", stage.daemon, "/v2/active-rooms/room-1/peers", token: admin)
        #expect(peers.status == 200)
        #expect(peers.body["peers"]?.arrayValue?.count == 4)
    }

    @Test func authErrors() async throws {
        let daemon = try await Daemon.start()
        let (peer, _) = try await daemon.join("a", as: "host")
        let none = try await http("GET", daemon, "/v2/active-rooms/room-1")
        #expect(none.status == 401)
        #expect(none.body["code"] == 40100)
        #expect(try await http("GET", daemon, "/v2/active-rooms/room-1", token: "nonsense").status == 401)
        let forged = Tokens.make(
            claims: #"{"type":"management","version":2,"exp":9999999999}"#,
            secret: Array("a-secret-that-is-not-the-daemons-own!".utf8)
        )
        #expect(try await http("GET", daemon, "/v2/active-rooms/room-1", token: forged).status == 401)
        let app = try daemon.token(user: "a", role: "host")
        let asApp = try await http("GET", daemon, "/v2/active-rooms/room-1", token: app)
        #expect(asApp.status == 403)
        #expect(asApp.body["code"] == 40300)
        withExtendedLifetime(peer) {}
    }

    @Test func notFoundAndBadInput() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        let room = try await http("GET", stage.daemon, "/v2/active-rooms/nowhere", token: admin)
        #expect(room.status == 404)
        #expect(room.body["code"] == 40001)
        let peer = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/peers/nobody",
            token: admin,
            body: #"{"name":"x"}"#
        )
        #expect(peer.status == 404)
        #expect(peer.body["code"] == 40400)
        let role = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/peers/\(stage.ids["viewer"]!)",
            token: admin,
            body: #"{"role":"king"}"#
        )
        #expect(role.status == 400)
        #expect(role.body["code"] == 40402)
        let bad = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/send-message",
            token: admin,
            body: "{not json"
        )
        #expect(bad.status == 400)
        #expect(bad.body["code"] == -32602)
        let missing = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/send-message",
            token: admin,
            body: "{}"
        )
        #expect(missing.status == 400)
        #expect(missing.body["message"]?.stringValue?.contains("message") == true)
        let huge = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/send-message",
            token: admin,
            body: #"{"message":"\#(String(repeating: "x", count: 5000))"}"#
        )
        #expect(huge.status == 413)
        #expect(huge.body["code"] == 41300)
        let oversizedBody = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/send-message",
            token: admin,
            body: #"{"message":"x","pad":"\#(String(repeating: "p", count: 70_000))"}"#
        )
        #expect(oversizedBody.status == 413)
        #expect(try await http("GET", stage.daemon, "/v2/active-rooms/room-1/nothing-here", token: admin).status == 404)
    }

    @Test func aRejectedUpdateChangesNothing() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        let name = String(repeating: "n", count: 300)
        let rejected = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/peers/\(stage.ids["viewer"]!)",
            token: admin,
            body: #"{"role":"guest","name":"\#(name)"}"#
        )
        #expect(rejected.status == 413)
        let peers = try await http("GET", stage.daemon, "/v2/active-rooms/room-1/peers", token: admin)
        #expect(peers.body["peers"]?.arrayValue?.first { $0["peer_id"] == stage.id("viewer") }?["role"] == "viewer")
        #expect(await Stage.methods(stage.viewer).isEmpty, "no role change was applied")
    }

    @Test func roleLimitIs409() async throws {
        let daemon = try await Daemon.start(template: Daemon.shippedTemplate { $0["guest"]?["maxPeerCount"] = 1 })
        let stage = try await Stage(daemon: daemon)
        let admin = try daemon.managementToken()
        let full = try await http(
            "POST",
            daemon,
            "/v2/active-rooms/room-1/peers/\(stage.ids["viewer"]!)",
            token: admin,
            body: #"{"role":"guest"}"#
        )
        #expect(full.status == 409)
        #expect(full.body["code"] == 40900)
    }

    @Test func restChangesReachPeersLikeAPeersOwn() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        // Move a viewer on stage.
        let moved = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/peers/\(stage.ids["viewer"]!)",
            token: admin,
            body: #"{"role":"guest","name":"Vera"}"#
        )
        #expect(moved.status == 200)
        #expect(moved.body["role"] == "guest", "the changed Peer itself")
        #expect(moved.body["info"]?["name"] == "Vera")
        #expect(try await stage.viewer.next("on-policy-change")["name"] == "guest")
        let update = try await stage.host.next("on-peer-update")
        #expect(update["changed"] == ["role"])
        #expect(try await stage.host.next("on-peer-update")["changed"] == ["name"])

        // Messages: to a role, to a peer, to everyone; sender is "server".
        _ = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/send-message",
            token: admin,
            body: #"{"role":"moderator","message":"mods only","type":"notice"}"#
        )
        let toMods = try await stage.moderator.next("on-broadcast")
        #expect(toMods["recipient"] == ["type": "roles", "roles": ["moderator"]])
        #expect(toMods["sender"] == ["peer_id": nil, "role": nil, "info": ["name": "server"]])
        #expect(toMods["info"] == ["message": "mods only", "type": "notice"])
        #expect(await Stage.methods(stage.guest).filter { $0 == "on-broadcast" }.isEmpty)
        _ = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/send-message",
            token: admin,
            body: #"{"peer_id":"\#(stage.ids["host"]!)","message":"psst"}"#
        )
        #expect(try await stage.host.next("on-broadcast")["recipient"]?["type"] == "peer")
        _ = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/send-message",
            token: admin,
            body: #"{"message":"all"}"#
        )
        for client in stage.all { #expect(try await client.next("on-broadcast")["recipient"] == ["type": "broadcast"]) }

        // Removal.
        let removed = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/remove-peers",
            token: admin,
            body: #"{"peer_id":"\#(stage.ids["moderator"]!)","reason":"done"}"#
        )
        #expect(removed.status == 200)
        #expect(try await stage.moderator.next("on-peer-leave-request")["requested_by"]?["info"]?["name"] == "server")
        #expect(try await stage.moderator.closeCode() == 4001)
        #expect(
            try await stage.host.next("on-peer-leave") == [
                "peer_id": stage.id("moderator"), "reason": "server removed peer",
            ]
        )
    }

    @Test func endRoomWithLockAndUnlock() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        #expect(
            try await http(
                "POST",
                stage.daemon,
                "/v2/active-rooms/room-1/end-room",
                token: admin,
                body: #"{"lock":true}"#
            ).status == 400,
            "reason is required"
        )
        let ended = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/end-room",
            token: admin,
            body: #"{"reason":"maintenance","lock":true}"#
        )
        #expect(ended.status == 200)
        for client in stage.all {
            #expect(try await client.next("on-peer-leave-request")["room_end"] == true)
            #expect(try await client.closeCode() == 4002)
        }
        let late = try await stage.daemon.client()
        let token = try stage.daemon.token(user: "late", role: "viewer")
        #expect(try await late.errorCode("join", ["token": .string(token)]) == 40003)
        #expect(try await http("GET", stage.daemon, "/v2/active-rooms/room-1", token: admin).status == 404)
        #expect(try await http("POST", stage.daemon, "/v2/active-rooms/room-1/unlock", token: admin).status == 200)
        #expect(try await http("POST", stage.daemon, "/v2/active-rooms/never-seen/unlock", token: admin).status == 200)
        _ = try await late.call("join", ["token": .string(token)])
    }

    @Test func rateLimitIs429() async throws {
        let daemon = try await Daemon.start(settings: #"{"limits":{"messages_per_second":1,"message_burst":2}}"#)
        let admin = try daemon.managementToken()
        var statuses: [Int] = []
        var limitedBody: JSON?
        for _ in 0..<10 {
            let reply = try await http("GET", daemon, "/v2/active-rooms/x", token: admin)
            statuses.append(reply.status)
            if reply.status == 429 { limitedBody = reply.body }
        }
        // The burst of 2 passes; at 1 request/s refill, ten quick requests must hit the limit.
        #expect(statuses.prefix(2) == [404, 404])
        #expect(statuses.contains(429))
        #expect(Set(statuses).isSubset(of: [404, 429]))
        #expect(limitedBody?["code"] == 42900)
    }
}

@Suite struct MetricsTests {
    @Test func metricsShowTheNamedSeries() async throws {
        let stage = try await Stage()
        _ = try? await stage.viewer.call("nope")
        _ = try await stage.host.call("broadcast", ["info": ["message": "hi"]])
        #expect(try await http("GET", stage.daemon, "/metrics").status == 200)
        let text = try await stage.daemon.metricsText()
        for line in [
            "roomd_connections 4", "roomd_peers 4", "roomd_rooms 1", #"roomd_calls_total{method="join"} 4"#,
            #"roomd_calls_total{method="broadcast"} 1"#, #"roomd_errors_total{code="-32601"} 1"#,
            "roomd_join_duration_seconds_count 4",
        ] {
            #expect(text.contains(line), "missing \(line)")
        }
        for series in ["roomd_pushes_total", "roomd_bytes_out_total", "roomd_slow_consumer_closes_total"] {
            #expect(text.contains("\n\(series) "), "missing \(series)")
        }
        #expect(!text.contains(stage.ids["host"]!), "no per-peer labels")
        #expect(!text.contains("room-1"), "no per-room labels")
    }

    /// Every family has a `# HELP` line (Prometheus's own checker,
    /// `promtool check metrics`, fails without one) before its `# TYPE`;
    /// and when promtool is installed (Debian's `prometheus` package), it
    /// finds nothing to say.
    @Test func everyFamilyHasItsHelpAndPromtoolIsContent() async throws {
        let stage = try await Stage()
        _ = try await stage.host.call("broadcast", ["info": ["message": "hi"]])
        let text = try await stage.daemon.metricsText()
        let lines = text.split(separator: "\n").map(String.init)
        let types = lines.filter { $0.hasPrefix("# TYPE ") }.map { $0.split(separator: " ")[2] }
        let helps = Set(lines.filter { $0.hasPrefix("# HELP ") }.map { $0.split(separator: " ")[2] })
        #expect(types.count >= 26, "\(types)")
        for family in types { #expect(helps.contains(family), "no # HELP for \(family)") }
        for path in ["/usr/bin/promtool", "/usr/local/bin/promtool"] where FileManager.default.fileExists(atPath: path)
        {
            let checked = try runTool(path, ["check", "metrics"], input: Data(text.utf8))
            let said = String(decoding: checked.stdout + checked.stderr, as: UTF8.self)
            #expect(checked.status == 0 && said.isEmpty, "promtool check metrics: \(said)")
            break
        }
    }
}

@Suite struct RestEndpointErrorTests {
    static let endpoints: [(method: String, path: String, body: String?)] = [
        ("GET", "/v2/active-rooms/room-1", nil),
        ("GET", "/v2/active-rooms/room-1/peers", nil),
        ("POST", "/v2/active-rooms/room-1/peers/PEER", #"{"name":"x"}"#),
        ("POST", "/v2/active-rooms/room-1/remove-peers", #"{"peer_id":"PEER","reason":"r"}"#),
        ("POST", "/v2/active-rooms/room-1/send-message", #"{"message":"m"}"#),
        ("POST", "/v2/active-rooms/room-1/end-room", #"{"reason":"r"}"#),
        ("POST", "/v2/active-rooms/room-1/unlock", nil),
    ]

    @Test func everyEndpointAnswers401And403AndItsUnknownRoom() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        let app = try stage.daemon.token(user: "x", role: "host")
        let peer = stage.ids["viewer"]!
        for endpoint in Self.endpoints {
            let path = endpoint.path.replacingOccurrences(of: "PEER", with: peer)
            let body = endpoint.body?.replacingOccurrences(of: "PEER", with: peer)
            let label = "\(endpoint.method) \(path)"
            let none = try await http(endpoint.method, stage.daemon, path, body: body)
            #expect(none.status == 401 && none.body["code"] == 40100, "\(label)")
            let asApp = try await http(endpoint.method, stage.daemon, path, token: app, body: body)
            #expect(asApp.status == 403 && asApp.body["code"] == 40300, "\(label)")
            let elsewhere = try await http(
                endpoint.method,
                stage.daemon,
                path.replacingOccurrences(of: "room-1", with: "room-9"),
                token: admin,
                body: body
            )
            if endpoint.path.hasSuffix("/unlock") {
                #expect(elsewhere.status == 200, "unlock of a room that is not locked is fine")
            } else {
                #expect(elsewhere.status == 404 && elsewhere.body["code"] == 40001, "\(label)")
            }
        }
    }

    @Test func removePeersErrors() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        let path = "/v2/active-rooms/room-1/remove-peers"
        let unknownPeer = try await http(
            "POST",
            stage.daemon,
            path,
            token: admin,
            body: #"{"peer_id":"nobody","reason":"r"}"#
        )
        #expect(unknownPeer.status == 404 && unknownPeer.body["code"] == 40400)
        let unknownRole = try await http(
            "POST",
            stage.daemon,
            path,
            token: admin,
            body: #"{"role":"king","reason":"r"}"#
        )
        #expect(unknownRole.status == 400 && unknownRole.body["code"] == 40402)
        #expect(
            try await http("POST", stage.daemon, path, token: admin, body: #"{"peer_id":"x"}"#).status == 400,
            "reason is required"
        )
        #expect(
            try await http("POST", stage.daemon, path, token: admin, body: #"{"reason":"r"}"#).status == 400,
            "peer_id or role"
        )
        let byRole = try await http(
            "POST",
            stage.daemon,
            path,
            token: admin,
            body: #"{"role":"viewer","reason":"bye"}"#
        )
        #expect(byRole.status == 200)
        #expect(try await stage.viewer.closeCode() == 4001)
        let unknownTarget = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/send-message",
            token: admin,
            body: #"{"peer_id":"nobody","message":"m"}"#
        )
        #expect(unknownTarget.status == 404 && unknownTarget.body["code"] == 40400)
    }
}
