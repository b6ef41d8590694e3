import Foundation
import RoomClient
import RoomWire
import Testing

/// Test mode's faults (PROTOCOL.md section 25): each observable the way the
/// real fault would be. Timed faults end on the manual clock.
@Suite struct TestModeFaultTests {
    static func fault(_ daemon: Daemon, _ body: String, method: String = "POST") async throws -> (Int, JSON) {
        let answer = try await http(
            method,
            daemon,
            "/v2/test/faults",
            token: daemon.managementToken(),
            body: method == "POST" ? body : nil
        )
        return (answer.status, answer.body)
    }

    /// A host and a guest on a manual clock, the join pushes consumed.
    static func stage(settings: String? = nil) async throws -> (Daemon, RoomClient, RoomClient, String) {
        let daemon = try await TestModeTests.manual(settings: settings)
        let (host, _) = try await daemon.join("h", as: "host")
        let (guest, joined) = try await daemon.join("g", as: "guest")
        _ = try await host.next("on-peer-join")
        return (daemon, host, guest, try #require(joined["peer"]?["peer_id"]?.stringValue))
    }

    @Test func closeDropsWithoutACloseFrameAndTheGraceFollows() async throws {
        let (daemon, host, guest, guestID) = try await Self.stage()
        let (status, body) = try await Self.fault(daemon, #"{"peer_id":"\#(guestID)","action":"close"}"#)
        #expect(status == 200 && body == ["peers": [.string(guestID)]])
        #expect(try await guest.closeCode() == 1006, "no close frame: a lost network")
        #expect(await Stage.methods(host).isEmpty, "the grace holds the peer")
        try await TestModeTests.advance(daemon, by: 20_000)
        #expect(try await host.next("on-peer-leave")["reason"] == "websocket closed")
    }

    /// A peer dropped by the fault resumes within its grace and gets what was held meanwhile.
    @Test func aDroppedPeerResumesAndGetsWhatWasHeld() async throws {
        let (daemon, host, guest, guestID) = try await Self.stage()
        _ = try await Self.fault(daemon, #"{"peer_id":"\#(guestID)","action":"close"}"#)
        #expect(try await guest.closeCode() == 1006)
        _ = try await host.call("broadcast", ["info": ["message": "while you were away"]])
        try await TestModeTests.advance(daemon, by: 19_000)
        let back = try await daemon.client()
        let resumed = try await back.call(
            "join",
            ["token": .string(try daemon.token(user: "g", role: "guest")), "peer_id": .string(guestID)]
        )
        #expect(resumed["resumed"] == true)
        #expect(try await back.next("on-broadcast")["info"]?["message"] == "while you were away")
        #expect(await Stage.methods(host).isEmpty, "the others saw nothing")
    }

    @Test func aCloseWithACodeSendsThatCode() async throws {
        let (daemon, _, guest, _) = try await Self.stage()
        let (status, _) = try await Self.fault(daemon, #"{"user_id":"g","action":"close","code":4000}"#)
        #expect(status == 200)
        #expect(try await guest.closeCode() == 4000)
    }

    /// A stalled peer's queue grows as a peer's that stopped reading: past
    /// the outbound limit it is a 4008 slow consumer on the real path.
    @Test func aStallEndsOnTheClockOrInA4008() async throws {
        let (daemon, host, guest, guestID) = try await Self.stage(
            settings: #"{"limits":{"max_outbound_bytes":16384}}"#
        )
        _ = try await Self.fault(daemon, #"{"peer_id":"\#(guestID)","action":"stall","ms":5000}"#)
        _ = try await host.call("broadcast", ["info": ["message": "one"]])
        _ = try await host.call("broadcast", ["info": ["message": "two"]])
        #expect(await Stage.methods(guest, within: .milliseconds(300)).isEmpty, "nothing while stalled")
        try await TestModeTests.advance(daemon, by: 5000)
        #expect(try await guest.next("on-broadcast")["info"]?["message"] == "one")
        #expect(try await guest.next("on-broadcast")["info"]?["message"] == "two")

        _ = try await Self.fault(daemon, #"{"peer_id":"\#(guestID)","action":"stall","ms":60000}"#)
        let big = String(repeating: "x", count: 3000)
        for _ in 0..<8 { _ = try await host.call("broadcast", ["info": ["message": .string(big)]]) }
        #expect(try await guest.closeCode() == 4008, "the slow-consumer rule, as for a real stall")
        #expect(try await daemon.metric("roomd_slow_consumer_closes_total") == 1)
    }

    @Test func delayedPushesComeInOrderAndAnswersStillFlow() async throws {
        let (daemon, host, guest, guestID) = try await Self.stage()
        _ = try await Self.fault(daemon, #"{"peer_id":"\#(guestID)","action":"delay","ms":2000}"#)
        _ = try await host.call("broadcast", ["info": ["message": "late-1"]])
        _ = try await guest.call("ping")  // its own calls are answered meanwhile
        _ = try await host.call("broadcast", ["info": ["message": "late-2"]])
        #expect(await Stage.methods(guest, within: .milliseconds(300)).isEmpty)
        try await TestModeTests.advance(daemon, by: 1999)
        #expect(await Stage.methods(guest, within: .milliseconds(100)).isEmpty)
        try await TestModeTests.advance(daemon, by: 1)
        #expect(try await guest.next("on-broadcast")["info"]?["message"] == "late-1")
        #expect(try await guest.next("on-broadcast")["info"]?["message"] == "late-2")
    }

    @Test func heldPushesPastTheOutboundLimitAre4008() async throws {
        let (daemon, host, guest, guestID) = try await Self.stage(
            settings: #"{"limits":{"max_outbound_bytes":16384}}"#
        )
        _ = try await Self.fault(daemon, #"{"peer_id":"\#(guestID)","action":"delay","ms":60000}"#)
        let big = String(repeating: "x", count: 3000)
        for _ in 0..<8 { _ = try await host.call("broadcast", ["info": ["message": .string(big)]]) }
        #expect(try await guest.closeCode() == 4008, "held pushes count against the outbound limit")
    }

    @Test func droppedPushesAreCountedAndTheRestArrive() async throws {
        let (daemon, host, guest, guestID) = try await Self.stage()
        _ = try await Self.fault(daemon, #"{"peer_id":"\#(guestID)","action":"drop","count":2}"#)
        for text in ["a", "b", "c"] { _ = try await host.call("broadcast", ["info": ["message": .string(text)]]) }
        #expect(try await guest.next("on-broadcast")["info"]?["message"] == "c")
        #expect(try await daemon.metric("roomd_test_pushes_dropped_total") == 2)
    }

    @Test func deleteEndsEveryFaultAtOnce() async throws {
        let (daemon, host, guest, guestID) = try await Self.stage()
        _ = try await Self.fault(daemon, #"{"peer_id":"\#(guestID)","action":"stall","ms":600000}"#)
        _ = try await host.call("broadcast", ["info": ["message": "held"]])
        #expect(await Stage.methods(guest, within: .milliseconds(300)).isEmpty)
        let (status, body) = try await Self.fault(daemon, "", method: "DELETE")
        #expect(status == 200 && body == [:])
        #expect(try await guest.next("on-broadcast")["info"]?["message"] == "held")
    }

    /// Test mode II (section 33): the next `count` calls of a method by a
    /// peer answer a scripted error and change nothing; another peer's
    /// calls go through; `GET /v2/test/faults` lists what is left; the
    /// faults metric counts them; an unknown method or code is -32602.
    @Test func aMethodFaultAnswersTheScriptedErrorAndChangesNothing() async throws {
        let (daemon, host, guest, guestID) = try await Self.stage()
        let body =
            #"{"method":"broadcast","peer_id":"\#(guestID)","error":{"code":40302,"message":"chat closed"},"count":2}"#
        let (status, answer) = try await Self.fault(daemon, body)
        #expect(status == 200 && answer == ["method": "broadcast", "left": 2], "\(answer)")
        for _ in 0..<2 {
            let error = try await StageQueueServerTests.rpcError(guest, "broadcast", ["info": ["message": "x"]])
            #expect(error.0 == 40302 && error.1 == "chat closed")
        }
        let (_, listed) = try await Self.fault(daemon, "", method: "GET")
        #expect(listed == ["faults": []], "used up: \(listed)")
        _ = try await host.call("broadcast", ["info": ["message": "from the host"]])
        _ = try await guest.call("broadcast", ["info": ["message": "third time"]])
        let heard = try await host.next("on-broadcast")
        #expect(heard["info"]?["message"] == "third time", "the scripted calls broadcast nothing")

        _ = try await Self.fault(daemon, #"{"method":"role-change-request","error":{"code":40900}}"#)
        _ = try await Self.fault(daemon, #"{"peer_id":"\#(guestID)","action":"drop","count":3}"#)
        let (_, inForce) = try await Self.fault(daemon, "", method: "GET")
        #expect(
            inForce["faults"]
                == [
                    ["method": "role-change-request", "error": ["code": 40900], "left": 1],
                    ["peer_id": .string(guestID), "action": "drop", "left": 3],
                ],
            "\(inForce)"
        )
        let error = try await StageQueueServerTests.rpcError(
            host,
            "role-change-request",
            ["peer_id": .string(guestID), "role": "viewer"]
        )
        #expect(error == (40900, "role-change-request: a scripted error (test mode)", nil))
        let metrics = try await daemon.metricsText()
        #expect(metrics.contains(#"roomd_test_faults_total{action="error"} 3"#), "\(metrics)")

        let (unknown, why) = try await Self.fault(daemon, #"{"method":"nope","error":{"code":40900}}"#)
        #expect(unknown == 400 && why["message"]?.stringValue?.hasPrefix("method: ") == true, "\(why)")
        let (badCode, whyCode) = try await Self.fault(daemon, #"{"method":"broadcast","error":{"code":12345}}"#)
        #expect(badCode == 400 && whyCode["message"]?.stringValue?.hasPrefix("error.code: ") == true, "\(whyCode)")
        #expect(try await Self.fault(daemon, #"{"method":"broadcast"}"#).0 == 400, "error is required")
        _ = try await Self.fault(daemon, "", method: "DELETE")
        #expect(try await Self.fault(daemon, "", method: "GET").1 == ["faults": []])
    }

    /// Test mode II (section 33): push faults by name. One naming a peer
    /// drops or delays that peer's next such pushes (a delay holds the
    /// pushes behind it, in order, on the manual clock); one without a peer
    /// drops the next such push for every recipient. Pushes of other names
    /// pass; the faults metric counts them; bad faults name the field.
    @Test func aPushFaultDropsOrDelaysThatPushByName() async throws {
        let (daemon, host, guest, guestID) = try await Self.stage()
        let (viewer, _) = try await daemon.join("v", as: "viewer")
        _ = try await host.next("on-peer-join")
        _ = try await guest.next("on-peer-join")
        func say(_ text: String) async throws {
            _ = try await host.call("broadcast", ["info": ["message": .string(text)]])
        }
        func heard(_ client: RoomClient) async throws -> String? {
            try await client.next("on-broadcast")["info"]?["message"]?.stringValue
        }

        // To one peer: its next on-broadcast is lost; the viewer's is not.
        let (status, answer) = try await Self.fault(
            daemon,
            #"{"push":"on-broadcast","peer_id":"\#(guestID)","action":"drop"}"#
        )
        #expect(status == 200 && answer == ["push": "on-broadcast", "left": 1], "\(answer)")
        try await say("one")
        try await say("two")
        #expect(try await heard(guest) == "two")
        #expect(try await heard(viewer) == "one")
        #expect(try await heard(viewer) == "two")

        // To everyone: the next on-broadcast reaches nobody; other pushes pass.
        _ = try await Self.fault(daemon, #"{"push":"on-broadcast","action":"drop"}"#)
        try await say("lost")
        _ = try await host.call("peer-update", ["name": "Host"])
        #expect(try await guest.next("on-peer-update")["peer"]?["info"]?["name"] == "Host")
        try await say("after")
        #expect(try await heard(guest) == "after")
        #expect(try await heard(viewer) == "after")
        #expect(try await Self.fault(daemon, "", method: "GET").1 == ["faults": []], "both used up")

        // A delay holds that push and the ones behind it, in order.
        _ = try await Self.fault(
            daemon,
            #"{"push":"on-broadcast","peer_id":"\#(guestID)","action":"delay","ms":500}"#
        )
        let (_, listed) = try await Self.fault(daemon, "", method: "GET")
        #expect(
            listed["faults"]
                == [["push": "on-broadcast", "peer_id": .string(guestID), "action": "delay", "ms": 500, "left": 1]],
            "\(listed)"
        )
        try await say("late-1")
        _ = try await host.call("peer-update", ["name": "Host 2"])
        #expect(try await heard(viewer) == "late-1")
        #expect(await Stage.methods(guest, within: .milliseconds(300)).isEmpty, "held, the update behind it too")
        try await TestModeTests.advance(daemon, by: 500)
        #expect(try await heard(guest) == "late-1")
        #expect(try await guest.next("on-peer-update")["peer"]?["info"]?["name"] == "Host 2")

        let metrics = try await daemon.metricsText()
        #expect(metrics.contains(#"roomd_test_faults_total{action="drop"} 3"#), "\(metrics)")
        #expect(metrics.contains(#"roomd_test_faults_total{action="delay"} 2"#), "\(metrics)")

        let bad: [(String, String)] = [
            (#"{"push":"on-brodcast","action":"drop"}"#, "push: not a push roomd sends"),
            (#"{"push":"on-broadcast","action":"stall"}"#, "action: drop or delay for a push fault"),
            (#"{"push":"on-broadcast"}"#, "action: required"),
            (#"{"push":"on-broadcast","action":"delay","ms":0}"#, "ms: must be between 1 and 86400000"),
        ]
        for (body, message) in bad {
            let (got, why) = try await Self.fault(daemon, body)
            #expect(got == 400 && why["message"]?.stringValue?.hasPrefix(message) == true, "\(body): \(why)")
        }
    }

    @Test func badFaultsGetTheDocumentedAnswer() async throws {
        let (daemon, _, guest, guestID) = try await Self.stage()
        let cases: [(String, Int, String)] = [
            (#"{"peer_id":"nobody","action":"close"}"#, 404, "peer_id: no peer nobody"),
            (#"{"user_id":"nobody","action":"close"}"#, 404, "user_id: no peer of nobody"),
            (#"{"action":"close"}"#, 400, "peer_id or user_id: give one"),
            (#"{"peer_id":"\#(guestID)","user_id":"g","action":"close"}"#, 400, "peer_id or user_id: give one"),
            (#"{"peer_id":"\#(guestID)"}"#, 400, "action: required"),
            (#"{"peer_id":"\#(guestID)","action":"explode"}"#, 400, "action: close, stall, delay or drop"),
            (#"{"peer_id":"\#(guestID)","action":"close","code":2000}"#, 400, "code: 1000, 1001, 1006"),
            (#"{"peer_id":"\#(guestID)","action":"stall","ms":0}"#, 400, "ms: must be between 1 and 86400000"),
            (#"{"peer_id":"\#(guestID)","action":"drop","count":-1}"#, 400, "count: must be between 1"),
            (#"{"webhooks":{"fail_next":1}}"#, 409, "webhooks: none configured"),
            (#"{"webhooks":{"fail_next":1,"status":200}}"#, 400, "webhooks.status: must be between 400 and 599"),
            (#"{"hooks":{"fail_next":1}}"#, 409, "hooks: none configured"),
            (#"{"hooks":{"fail_next":1,"status":200}}"#, 400, "hooks.status: must be between 400 and 599"),
        ]
        for (body, status, message) in cases {
            let (got, answer) = try await Self.fault(daemon, body)
            #expect(got == status, "\(body): \(answer)")
            #expect(answer["message"]?.stringValue?.hasPrefix(message) == true, "\(body): \(answer)")
        }
        #expect(!guest.isClosed, "nothing happened to the guest")
        await guest.abort()
        try await daemon.waitForGraces()
        let (got, answer) = try await Self.fault(daemon, #"{"peer_id":"\#(guestID)","action":"close"}"#)
        #expect(got == 409 && answer["message"]?.stringValue?.contains("reconnect grace") == true, "\(answer)")
    }

    /// A webhook that fails is retried (in real time) and delivered once.
    @Test func failingWebhooksAreRetriedAsARealFailureWouldBe() async throws {
        let backend = try WebhookReceiver()
        let daemon = try await TestModeTests.manual(
            settings: #"{"webhooks":{"url":"\#(backend.url)","events":["peer.join.success"]}}"#
        )
        let (status, body) = try await Self.fault(daemon, #"{"webhooks":{"fail_next":1,"status":503}}"#)
        #expect(status == 200 && body == ["webhooks": ["fail_next": 1]])
        _ = try await daemon.join("h", as: "host")
        #expect(try await backend.deliveredTypes(count: 1) == ["peer.join.success"])
        #expect(backend.requests.count == 1, "the failed attempt never reached the receiver")
        #expect(try await daemon.metric(#"roomd_webhook_deliveries_total{result="retried"}"#) == 1)
        #expect(daemon.stderr.contains("HTTP 503 (test fault)"))
    }
}
