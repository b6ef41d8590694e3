import Foundation
import RoomClient
import RoomWire
import Testing

/// Section 17: webhooks against a real HTTP receiver started by the test
/// (scripts/webhook-receiver.py), which checks each signature with the
/// README's own `verify`.
@Suite struct WebhookTests {
    @Test func everyEventInOrderSignedWithTheDocumentedCheck() async throws {
        let receiver = try WebhookReceiver()
        let daemon = try await Daemon.start(webhooksTo: receiver.url)
        let (host, hostJoin) = try await daemon.join("h", as: "host", room: "show", name: "Hana")
        let (guest, guestJoin) = try await daemon.join("g", as: "guest", room: "show", name: "Gus")
        let hostID = try #require(hostJoin["peer"]?["peer_id"]?.stringValue)
        let guestID = try #require(guestJoin["peer"]?["peer_id"]?.stringValue)
        let session = try #require(hostJoin["room"]?["session_id"]?.stringValue)
        _ = try await host.call(
            "role-change-request",
            ["requested_for": .string(guestID), "role": "viewer", "force": true]
        )
        _ = try await host.call("hls-start")
        _ = try await host.call("hls-stop")
        _ = try await guest.call("leave")
        let (viewer, viewerJoin) = try await daemon.join("v", as: "viewer", room: "show")
        let viewerID = try #require(viewerJoin["peer"]?["peer_id"]?.stringValue)
        _ = try await host.call("hls-start")
        _ = try await host.call("end-room", ["reason": "show over"])
        let expected = [
            "session.open.success", "peer.join.success", "peer.join.success", "role.change.success",
            "hls.started.success", "stream.live", "hls.stopped.success", "stream.ended", "peer.leave.success",
            "peer.join.success", "hls.started.success", "stream.live", "hls.stopped.success", "stream.ended",
            "peer.leave.success", "peer.leave.success", "session.close.success", "room.end.success",
        ]
        #expect(try await receiver.deliveredTypes(count: expected.count) == expected)
        let requests = receiver.requests
        #expect(requests.count == expected.count, "one request per event with a receiver that answers 200")
        for request in requests {
            #expect(request["verified"] == true, "README's verify accepts \(request["event"]?["type"] ?? .null)")
            #expect(request["tampered_verified"] == false, "…and rejects a changed body")
            #expect(request["wrong_secret_verified"] == false, "…and another secret")
            #expect(request["content_type"] == "application/json")
            #expect(request["path"] == "/hooks")
            let event = request["event"]!
            #expect(event["version"] == "2.0")
            #expect(event["data"]?["room_id"] == "show")
            #expect(event["data"]?["session_id"]?.stringValue == session)
            let sent = Int64(request["timestamp_header"]?.stringValue ?? "") ?? 0
            #expect(
                abs(sent - Int64(request["received_ms"]!.intValue!)) < 5000,
                "X-Roomd-Timestamp is the send time in ms"
            )
            #expect(event["timestamp"]!.intValue! <= Int(sent))
        }
        #expect(Set(requests.compactMap { $0["event"]?["id"]?.stringValue }).count == expected.count, "unique ids")
        let events = receiver.delivered
        #expect(
            events[1]["data"] == [
                "room_id": "show", "session_id": .string(session), "peer_id": .string(hostID),
                "user_id": "h", "role": "host", "name": "Hana",
            ]
        )
        #expect(events[3]["data"]?["peer_id"]?.stringValue == guestID)
        #expect(events[3]["data"]?["role"] == "viewer")
        #expect(events[3]["data"]?["old_role"] == "guest")
        #expect(events[4]["data"]?["peer_id"]?.stringValue == hostID, "who started the stream")
        #expect(events[4]["data"]?["urls"] == [.string("/hls/show/\(session)/index.m3u8")])
        #expect(events[5]["data"]?["state"] == "live" && events[5]["data"]?["peer_id"]?.stringValue == hostID)
        #expect(events[6]["data"]?["reason"] == "stopped")
        #expect(events[7]["data"]?["state"] == "ended")
        #expect(events[8]["data"]?["peer_id"]?.stringValue == guestID)
        #expect(events[8]["data"]?["reason"] == "client request", "on-peer-leave's reason")
        #expect(events[12]["data"]?["reason"] == "room ended", "the room's end stops the stream")
        #expect(events[13]["data"]?["state"] == "ended" && events[13]["data"]?["peer_id"] == nil, "the room's end")
        #expect(
            Set([events[14], events[15]].compactMap { $0["data"]?["peer_id"]?.stringValue }) == [hostID, viewerID]
        )
        #expect(events[14]["data"]?["reason"] == "room ended")
        #expect(events[17]["data"]?["reason"] == "show over")
        #expect(events[17]["data"]?["peer_id"]?.stringValue == hostID)
        #expect(events[17]["data"]?["lock"] == false)
        // The receiver logs before it answers: the count follows the answer.
        var delivered = 0.0
        for _ in 0..<250 where delivered < Double(expected.count) {
            delivered = try await daemon.metric(#"roomd_webhook_deliveries_total{result="delivered"}"#) ?? 0
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(delivered == Double(expected.count))
        withExtendedLifetime(viewer) {}
    }

    @Test func restChangesAreReportedAsTheServer() async throws {
        let receiver = try WebhookReceiver()
        let daemon = try await Daemon.start(
            settings:
                #"{"webhooks":{"url":"\#(receiver.url)","events":["hls.started.success","role.change.success","room.end.success"]}}"#
        )
        let admin = try daemon.managementToken()
        let (viewer, joined) = try await daemon.join("v", as: "viewer", room: "show")
        let viewerID = try #require(joined["peer"]?["peer_id"]?.stringValue)
        _ = try await http("POST", daemon, "/v2/active-rooms/show/hls/start", token: admin)
        _ = try await http(
            "POST",
            daemon,
            "/v2/active-rooms/show/peers/\(viewerID)",
            token: admin,
            body: #"{"role":"guest"}"#
        )
        _ = try await http(
            "POST",
            daemon,
            "/v2/active-rooms/show/end-room",
            token: admin,
            body: #"{"reason":"bye","lock":true}"#
        )
        #expect(
            try await receiver.deliveredTypes(count: 3) == [
                "hls.started.success", "role.change.success", "room.end.success",
            ]
        )
        let events = receiver.delivered
        let server: JSON = ["peer_id": nil, "user_id": nil, "role": nil, "name": "server"]
        for key in ["peer_id", "user_id", "role", "name"] {
            #expect(events[0]["data"]?[key] == server[key], "hls.started by the server: \(key)")
            #expect(events[2]["data"]?[key] == server[key], "room.end by the server: \(key)")
        }
        #expect(events[1]["data"]?["peer_id"]?.stringValue == viewerID)
        #expect(events[1]["data"]?["old_role"] == "viewer" && events[1]["data"]?["role"] == "guest")
        #expect(events[2]["data"]?["lock"] == true && events[2]["data"]?["reason"] == "bye")
        withExtendedLifetime(viewer) {}
    }

    @Test func onlyTheConfiguredEventsAndTheWebhookSecret() async throws {
        let secret = Array("a-separate-webhook-secret-of-32-bytes".utf8)
        let receiver = try WebhookReceiver(secret: secret)
        let daemon = try await Daemon.start(
            settings: #"{"webhooks":{"url":"\#(receiver.url)","events":["peer.leave.success"]}}"#,
            environment: ["ROOMD_WEBHOOK_SECRET": String(decoding: secret, as: UTF8.self)]
        )
        let (a, _) = try await daemon.join("a", as: "host")
        let (b, _) = try await daemon.join("b", as: "guest")
        _ = try await b.call("leave")
        let types = try await receiver.deliveredTypes(count: 1)
        try await Task.sleep(for: .milliseconds(300))
        #expect(types == ["peer.leave.success"])
        #expect(receiver.requests.count == 1)
        #expect(receiver.requests.first?["verified"] == true, "signed with ROOMD_WEBHOOK_SECRET")
        withExtendedLifetime(a) {}
    }

    @Test func aFailingReceiverGetsRetriesWithTheSameIDAndOrderIsKept() async throws {
        let receiver = try WebhookReceiver(mode: .failFirst)
        let daemon = try await Daemon.start(webhooksTo: receiver.url)
        let (host, _) = try await daemon.join("h", as: "host", room: "r1")  // session.open, peer.join
        let (other, _) = try await daemon.join("o", as: "host", room: "r2")  // another room: not held back by r1
        let requests = try await receiver.wait(timeout: .seconds(15)) { $0.filter { $0["status"] == 200 }.count >= 4 }
        let r1 = requests.filter { $0["event"]?["data"]?["room_id"] == "r1" }
        #expect(
            r1.map { "\($0["event"]!["type"]!.stringValue!):\($0["status"]!.intValue!)" } == [
                "session.open.success:500", "session.open.success:200", "peer.join.success:500",
                "peer.join.success:200",
            ],
            "a failing event holds back the later events of its room"
        )
        #expect(r1[0]["event"]?["id"] == r1[1]["event"]?["id"], "the same id on every attempt")
        #expect(r1[0]["event"] == r1[1]["event"], "the same body on every attempt")
        #expect(r1[2]["event"]?["id"] == r1[3]["event"]?["id"])
        let gap = r1[1]["received_ms"]!.intValue! - r1[0]["received_ms"]!.intValue!
        #expect(gap >= 850, "first retry after 1 s ± 10 %, not at once: got \(gap) ms")
        #expect(try await daemon.metric(#"roomd_webhook_deliveries_total{result="retried"}"#) ?? 0 >= 4)
        #expect(try await daemon.metric(#"roomd_webhook_deliveries_total{result="delivered"}"#) ?? 0 >= 4)
        withExtendedLifetime((host, other)) {}
    }

    @Test func aHangingReceiverDelaysNoPeer() async throws {
        let receiver = try WebhookReceiver(mode: .holdFirst)
        let daemon = try await Daemon.start(webhooksTo: receiver.url, extra: #""timeout_ms":60000"#)
        let (host, _) = try await daemon.join("h", as: "host")
        try await receiver.wait { !$0.isEmpty }  // the receiver holds the first request (room-1's session.open)
        var worst = Duration.zero
        var clients: [RoomClient] = [host]
        for index in 0..<10 {
            let started = ContinuousClock.now
            _ = try await host.call("ping")
            worst = max(worst, ContinuousClock.now - started)
            let joined = ContinuousClock.now
            clients.append(try await daemon.join("v\(index)", as: "viewer").client)  // more events queue up
            worst = max(worst, ContinuousClock.now - joined)
        }
        // The receiver holds its request until the test releases it (timeout_ms is 60 s): a
        // service thread that waited for it would answer nothing until then. Every call
        // returned; how fast depends on the machine's load (a join, connect included, took
        // 7 s once while CI started every suite at once), so the bound is well under 60 s.
        #expect(worst < .seconds(20), "a ping or join took \(worst) while the receiver hung")
        #expect(receiver.requests.count == 1, "one room: its later events wait behind the held one")
        // Another room's events are not held back by room-1's.
        let (elsewhere, _) = try await daemon.join("e", as: "host", room: "elsewhere")
        let other = try await receiver.wait { $0.count >= 3 }
        #expect(
            other.dropFirst().compactMap { $0["event"]?["type"]?.stringValue } == [
                "session.open.success", "peer.join.success",
            ]
        )
        #expect(other.dropFirst().allSatisfy { $0["event"]?["data"]?["room_id"] == "elsewhere" })
        // Released, room-1's events follow in order.
        receiver.release()
        let types = try await receiver.wait(timeout: .seconds(15)) { $0.count >= 14 }
            .filter { $0["event"]?["data"]?["room_id"] == "room-1" }.compactMap { $0["event"]?["type"]?.stringValue }
        #expect(types == ["session.open.success"] + Array(repeating: "peer.join.success", count: 11))
        withExtendedLifetime((clients, elsewhere)) {}
    }

    @Test func aReceiverThatIsDownIsRetriedThenCountedAsFailed() async throws {
        let port = try freeLoopbackPort()  // nobody listens there
        let daemon = try await Daemon.start(
            settings:
                #"{"webhooks":{"url":"http://127.0.0.1:\#(port)/hooks","max_attempts":3,"timeout_ms":500,"events":["session.open.success"]}}"#
        )
        let (host, _) = try await daemon.join("h", as: "host")
        let started = ContinuousClock.now
        var failed = 0.0
        while failed < 1, ContinuousClock.now - started < .seconds(20) {
            try await Task.sleep(for: .milliseconds(100))
            failed = try await daemon.metric(#"roomd_webhook_deliveries_total{result="failed"}"#) ?? 0
        }
        #expect(failed == 1)
        #expect(
            try await daemon.metric(#"roomd_webhook_deliveries_total{result="retried"}"#) == 2,
            "3 attempts: 2 retries"
        )
        #expect(try await daemon.metric(#"roomd_webhook_deliveries_total{result="delivered"}"#) == 0)
        // The backoff roomd chose, from its log: 1 s then 2 s, each ± 10 %.
        let delays = daemon.stderr.split(separator: "\n").filter { $0.contains("webhook attempt failed, retrying") }
            .compactMap { line in line.firstMatch(of: /retry_in_ms=(\d+)/).flatMap { Int($0.1) } }
        #expect(delays.count == 2)
        #expect(delays.first.map { (900...1100).contains($0) } == true, "first backoff \(delays)")
        #expect(delays.last.map { (1800...2200).contains($0) } == true, "second backoff \(delays)")
        #expect(daemon.stderr.contains("webhook failed, giving up"))
        withExtendedLifetime(host) {}
    }

    @Test func aFullQueueDropsTheOldestAndCountsIt() async throws {
        let receiver = try WebhookReceiver(mode: .holdFirst)
        let daemon = try await Daemon.start(webhooksTo: receiver.url, extra: #""timeout_ms":60000,"queue_limit":2"#)
        let (host, _) = try await daemon.join("h", as: "host")  // session.open goes out and is held; peer.join waits
        try await receiver.wait { !$0.isEmpty }
        var clients = [host]
        for index in 0..<3 { clients.append(try await daemon.join("v\(index)", as: "viewer").client) }
        // Waiting: peer.join(h), v0, v1, v2 into a queue of 2 → the two oldest are dropped.
        #expect(try await daemon.metric("roomd_webhook_dropped_total") == 2)
        receiver.release()
        let requests = try await receiver.wait(timeout: .seconds(30)) { $0.count >= 3 }
        let users = requests.map { $0["event"]?["data"]?["user_id"]?.stringValue ?? $0["event"]!["type"]!.stringValue! }
        #expect(users == ["session.open.success", "v1", "v2"], "the newest events survive")
        withExtendedLifetime(clients) {}
    }

    @Test func sigtermKeepsDeliveringForUpToTwoSeconds() async throws {
        let receiver = try WebhookReceiver(delayMillis: 100)
        let daemon = try await Daemon.start(webhooksTo: receiver.url)
        var clients: [RoomClient] = []
        for index in 0..<3 { clients.append(try await daemon.join("u\(index)", as: "viewer").client) }
        // 4 events, 100 ms each, queued behind each other (one room): about 0.4 s of delivery left.
        let (status, seconds) = await daemon.stop(timeout: 30)
        #expect(status == 0)
        #expect(receiver.delivered.count == 4, "everything queued went out before the exit")
        #expect(seconds < 20, "not the 60 s a webhook may take")

        let hanging = try WebhookReceiver(mode: .hang)
        let stuck = try await Daemon.start(webhooksTo: hanging.url, extra: #""timeout_ms":60000"#)
        let (peer, _) = try await stuck.join("h", as: "host")
        try await hanging.wait { !$0.isEmpty }
        let stopped = await stuck.stop(signal: SIGTERM, timeout: 40)
        #expect(stopped.status == 0)
        // Connections close (≤ 1.5 s), then at most 2 s for webhooks — not the 60 s timeout.
        #expect(
            stopped.seconds < 20,
            "at most 2 s for webhooks after the connections closed, took \(stopped.seconds) s"
        )
        withExtendedLifetime((clients, peer)) {}
    }

    /// Issue 20, item 4: answers of 200 whose body then drips forever, on 8
    /// connections (the HTTP client's default per host), used to stop every
    /// webhook of every room: 0 delivered. `timeout_ms` bounds the whole attempt,
    /// body included, and every room in flight has a connection of its own.
    @Test func answersThatDripTheirBodyForeverOnEightConnectionsStopNoDelivery() async throws {
        let receiver = try WebhookReceiver(mode: .dripFirst, dripCount: 8)
        let daemon = try await Daemon.start(webhooksTo: receiver.url, extra: #""timeout_ms":15000"#)
        var clients: [RoomClient] = []
        for index in 0..<12 {
            clients.append(try await daemon.join("h\(index)", as: "host", room: "r\(index)").client)
        }
        // 24 events: session.open and peer.join of 12 rooms. The first 8 requests (8 rooms'
        // session.open) are answered 200 and a body that never ends; those rooms' peer.join
        // wait behind them. The 4 other rooms go out while the 8 answers still drip.
        let undripped = try await receiver.wait(timeout: .seconds(30)) {
            $0.filter { $0["drip"] == false }.count >= 8
        }
        #expect(undripped.filter { $0["drip"] == true }.count == 8)
        #expect(undripped.filter { $0["drip"] == false }.count == 8, "the 4 other rooms' 8 events")
        #expect(receiver.closedDrips.isEmpty, "…delivered while the 8 answers still dripped (timeout_ms is 15 s)")
        // At each attempt's deadline roomd stops reading and closes the connection; the
        // status decided: the event is delivered, and its room's next event follows.
        let requests = try await receiver.wait(timeout: .seconds(40)) { $0.count >= 24 }
        #expect(requests.count == 24, "each event once: a 2xx ends it, however its body goes on")
        for room in 0..<12 {
            let types = requests.filter { $0["event"]?["data"]?["room_id"] == .string("r\(room)") }
                .compactMap { $0["event"]?["type"]?.stringValue }
            #expect(types == ["session.open.success", "peer.join.success"], "room r\(room), in order")
        }
        let closed = try await receiver.closedDrips(count: 8)
        #expect(closed.count == 8, "roomd closed every dripping connection")
        for drip in closed {
            let held = drip["closed_ms"]!.intValue! - drip["received_ms"]!.intValue!
            #expect(held < 25_000, "a dripping answer held its connection \(held) ms (timeout_ms 15000)")
        }
        var delivered = 0.0
        for _ in 0..<250 where delivered < 24 {
            delivered = try await daemon.metric(#"roomd_webhook_deliveries_total{result="delivered"}"#) ?? 0
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(delivered == 24)
        #expect(try await daemon.metric(#"roomd_webhook_deliveries_total{result="failed"}"#) == 0)
        withExtendedLifetime(clients) {}
    }

    /// roomd reads at most 4 KiB of an answer's body (it needs only the status): an
    /// answer that sends 16 KiB of its body and then next to nothing ends the attempt
    /// at once, not at `timeout_ms` (it used to read 64 KiB, and wait as long as it took).
    @Test func anAnswersBodyIsReadUpTo4KiBThenItsConnectionIsClosed() async throws {
        let receiver = try WebhookReceiver(mode: .dripFirst, dripCount: 1, dripPrefix: 16384)
        let daemon = try await Daemon.start(webhooksTo: receiver.url, extra: #""timeout_ms":60000"#)
        let (host, _) = try await daemon.join("h", as: "host")
        let requests = try await receiver.wait(timeout: .seconds(20)) { $0.count >= 2 }
        #expect(
            requests.compactMap { $0["event"]?["type"]?.stringValue } == ["session.open.success", "peer.join.success"],
            "the room's next event followed well before timeout_ms (60 s)"
        )
        #expect(requests.first?["drip"] == true)
        #expect(try await receiver.closedDrips(count: 1).count == 1, "roomd closed the connection")
        #expect(try await daemon.metric(#"roomd_webhook_deliveries_total{result="retried"}"#) == 0, "a 2xx: delivered")
        withExtendedLifetime(host) {}
    }
}

/// A loopback port that was free a moment ago (bound, then closed).
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard bound == 0 else { throw DaemonError(description: "bind failed") }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}
