import Dispatch
import Foundation
import RoomClient
import RoomWire
import RoomdTesting
import Synchronization
import Testing

/// Synchronous hooks (1.3, PROTOCOL.md section 30), over real sockets: the
/// app's backend (RoomdTesting's `HookServer`, which verifies every
/// request's signature) decides on `join`, `broadcast`, `question-add` and
/// `stage-request` before roomd acts; a failed hook follows `on_error`; a
/// peer's later calls wait for its hooked one, nobody else's do. In a
/// cluster run the hook runs on the room's home (docs/ARCHITECTURE.md).
@Suite struct HookTests {
    /// A daemon whose `settings.hooks` points at `hook` (`extra`: more members of `hooks`).
    static func daemon(
        _ hook: HookServer,
        _ extra: String = "",
        settings: String? = nil,
        arguments: [String] = []
    ) async throws -> Daemon {
        let member = #""hooks":{"url":"\#(hook.url)"\#(extra.isEmpty ? "" : "," + extra)}"#
        let others = settings.map { String($0.dropFirst().dropLast()) } ?? ""
        let daemon = try await Daemon.start(
            settings: "{" + member + (others.isEmpty ? "" : "," + others) + "}",
            arguments: arguments
        )
        hook.secret = daemon.secret
        return daemon
    }

    /// Three nodes whose `settings.hooks` point at `hook` for `event`, `timeout_ms` 5000.
    static func cluster(_ hook: HookServer, event: String) async throws -> ClusterRoutingTests.Cluster {
        let cluster = try await ClusterRoutingTests.Cluster(
            settings: #"{"hooks":{"url":"\#(hook.url)","events":["\#(event)"],"timeout_ms":5000}}"#
        )
        hook.secret = cluster.nodes[0].secret
        return cluster
    }

    @Test func aJoinAsksTheHookWithTheTokensClaimsAndGoesOnWhenAllowed() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let daemon = try await Self.daemon(hook)
        let (_, joined) = try await daemon.join("ada", as: "guest", name: "Ada")
        #expect(joined["peer"]?["info"]?["name"] == "Ada")
        let asked = try await hook.next("join")  // verified with the daemon's secret
        #expect(asked["version"] == "2.0" && asked["id"]?.stringValue?.isEmpty == false)
        let data = try #require(asked["data"])
        #expect(data["room_id"] == "room-1" && data["user_id"] == "ada" && data["role"] == "guest")
        #expect(data["name"] == "Ada" && data["resume"] == false)
        #expect(data["claims"]?["user_id"] == "ada" && data["claims"]?["exp"] != nil, "every claim of the token")
    }

    @Test func aDeniedJoinIs40305WithTheReasonCutAtACharacterBoundary() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let daemon = try await Self.daemon(hook)
        let reason = String(repeating: "é", count: 200)  // 400 bytes
        hook.answer(.deny(reason))
        let client = try await daemon.client()
        let token = try daemon.token(user: "eve", role: "guest")
        let failure = try await client.failure("join", ["token": .string(token)])
        #expect(failure.code == 40305)
        #expect(failure.message == String(repeating: "é", count: 128), "256 bytes kept, no half character")
        // Not joined: the same connection may try again, and the hook lets it in now.
        let joined = try await client.call("join", ["token": .string(token)])
        #expect(joined["peer"]?["info"]?["user_id"] == "eve")
    }

    @Test func aJoinRewriteGivesTheNameRoleAndAttributes() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let daemon = try await Self.daemon(hook)
        hook.answer(.rewrite(["name": "Ada L.", "role": "guest", "attributes": ["tier": "gold"]]))
        let (_, joined) = try await daemon.join("ada", as: "viewer")
        #expect(joined["peer"]?["info"]?["name"] == "Ada L.")
        #expect(joined["peer"]?["role"] == "guest")
        #expect(joined["peer"]?["attributes"]?["tier"] == "gold")
        // A role the template lacks is a failed hook: on_error "allow" goes on with the token's.
        hook.answer(.rewrite(["role": "emperor"]))
        let (_, second) = try await daemon.join("bob", as: "viewer")
        #expect(second["peer"]?["role"] == "viewer")
    }

    @Test func aBroadcastHookSeesEveryRecipientFormAndMayRewriteOrDeny() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let daemon = try await Self.daemon(hook, #""events":["message"]"#)
        let stage = try await Stage(daemon: daemon)
        #expect(try hook.requests().isEmpty, "join is not among the events")

        _ = try await stage.host.call("broadcast", ["info": ["message": "hello"]])
        let toAll = try await hook.next("message")
        #expect(toAll["data"]?["recipient"] == ["type": "broadcast"])
        #expect(toAll["data"]?["info"] == ["message": "hello", "type": "chat"], "type filled in")
        #expect(toAll["data"]?["peer"]?["peer_id"] == stage.id("host"))
        #expect(toAll["data"]?["session_id"]?.stringValue?.isEmpty == false)
        #expect(try await stage.guest.next("on-broadcast")["info"]?["message"] == "hello")

        _ = try await stage.host.call("broadcast", ["info": ["message": "psst"], "peer_id": stage.id("guest")])
        #expect(try await hook.next("message")["data"]?["recipient"] == ["type": "peer", "peer_id": stage.id("guest")])
        _ = try await stage.guest.next("on-broadcast")
        _ = try await stage.host.call("broadcast", ["info": ["message": "mods"], "roles": ["moderator"]])
        #expect(try await hook.next("message")["data"]?["recipient"] == ["type": "roles", "roles": ["moderator"]])
        _ = try await stage.moderator.next("on-broadcast")

        hook.answer(.rewrite(["info": ["message": "h***o", "type": "chat"]]))
        _ = try await stage.host.call("broadcast", ["info": ["message": "heck"]])
        #expect(try await stage.guest.next("on-broadcast")["info"]?["message"] == "h***o")

        hook.answer(.deny("spam"))
        let denied = try await stage.host.failure("broadcast", ["info": ["message": "buy now"]])
        #expect(denied.code == 40305 && denied.message == "spam")
        // The denial is the audit log's `hook.deny` (section 32), the hook as the actor.
        let audit = try await stage.moderator.call("audit-list")
        let entry = audit["entries"]?.arrayValue?.last
        #expect(entry?["action"] == "hook.deny" && entry?["actor"] == ["type": "hook"], "\(audit)")
        #expect(entry?["target"] == ["peer_id": stage.id("host"), "user_id": "h"])
        #expect(entry?["details"] == ["type": "message", "reason": "spam"])
        // Over the limits of a sent message: a failed hook (on_error allow: sent as written).
        hook.answer(.rewrite(["info": ["message": .string(String(repeating: "x", count: 5000))]]))
        _ = try await stage.host.call("broadcast", ["info": ["message": "after"]])
        #expect(try await stage.guest.next("on-broadcast")["info"]?["message"] == "after", "not the denied one")
    }

    @Test func aShadowFromTheHookReachesOnlyTheSenderAndTheModerators() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        // Holding every first message would hold it; the hook's shadow wins over holding.
        let daemon = try await Self.daemon(
            hook,
            #""events":["message"]"#,
            settings: #"{"chat":{"hold":{"first_message":true}}}"#
        )
        let stage = try await Stage(daemon: daemon)
        hook.answer(.shadow)
        let sent = try await stage.viewer.call("broadcast", ["info": ["message": "troll"]])
        #expect(sent["held"] == nil, "not held: shadowed")
        for moderator in [stage.host, stage.moderator] {
            #expect(try await moderator.next("on-broadcast")["shadowed"] == true)
        }
        try await stage.settle()
        #expect(await Stage.methods(stage.guest).isEmpty, "nobody else hears it")
    }

    @Test func questionAndStageRequestHooksRewriteTheTextAndTheNote() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let daemon = try await Self.daemon(hook, #""events":["question","stage-request"]"#)
        let stage = try await Stage(daemon: daemon)
        hook.answer(.rewrite(["text": "What is the plan?"]))
        let question = try await stage.viewer.call("question-add", ["text": "wat plan??"])
        #expect(question["text"] == "What is the plan?")
        let asked = try await hook.next("question")
        #expect(asked["data"]?["text"] == "wat plan??" && asked["data"]?["peer"]?["peer_id"] == stage.id("viewer"))

        hook.answer(.rewrite(["note": "from Lyon"]))
        let request = try await stage.viewer.call("stage-request", ["note": "lyon!!"])
        #expect(request["request"]?["note"] == "from Lyon")
        #expect(try await hook.next("stage-request")["data"]?["note"] == "lyon!!")
        hook.answer(.deny("not now"))
        #expect(try await stage.viewer.failure("stage-request", ["note": "me"]).code == 40305, "decided first")
        #expect(try await hook.next("stage-request")["data"]?["note"] == "me")
        _ = try await stage.viewer.call("stage-request")
        #expect(try await hook.next("stage-request")["data"]?["note"] == "", "no note: \"\", as the request's")
    }

    @Test func restCallsNeverGoThroughTheHook() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let daemon = try await Self.daemon(hook, #""events":["message"],"on_error":"deny""#)
        let stage = try await Stage(daemon: daemon)
        hook.defaultAnswer = .deny("nothing gets through")
        #expect(try await stage.host.failure("broadcast", ["info": ["message": "x"]]).code == 40305)
        let rest = try await http(
            "POST",
            daemon,
            "/v2/active-rooms/room-1/send-message",
            token: daemon.managementToken(),
            body: #"{"message":"notice"}"#
        )
        #expect(rest.status == 200)
        #expect(try await stage.guest.next("on-broadcast")["info"]?["message"] == "notice")
        #expect(try hook.requests().count == 1, "only the peer's broadcast was asked")
    }

    @Test func aFailedHookGoesOnUnderOnErrorAllow() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let daemon = try await Self.daemon(hook, #""events":["message"],"timeout_ms":200"#)
        let stage = try await Stage(daemon: daemon)
        for answer: HookServer.Answer in [.status(500), .body(Array("not json".utf8)), .silence] {
            hook.answer(answer)
            _ = try await stage.host.call("broadcast", ["info": ["message": "on"]])
            #expect(try await stage.guest.next("on-broadcast")["info"]?["message"] == "on", "\(answer)")
        }
    }

    /// Hook calls go out on a kept-alive connection: one after another, they
    /// all use the first.
    @Test func hookCallsReuseOneKeptAliveConnection() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let daemon = try await Self.daemon(hook, #""events":["message"]"#)
        let stage = try await Stage(daemon: daemon)
        for index in 0..<5 {
            _ = try await stage.host.call("broadcast", ["info": ["message": .string("m\(index)")]])
            #expect(try await stage.guest.next("on-broadcast")["info"]?["message"] == .string("m\(index)"))
        }
        #expect(try hook.requests().count == 5)
        #expect(hook.connections == 1, "one connection for five calls")
    }

    /// A connection idle for 4 s is closed by roomd, before the common servers'
    /// keep-alive timeouts (Node's 5 s) would close it under a request: the
    /// next call opens a new one.
    @Test func aConnectionIdleFor4SecondsIsClosedAndTheNextCallOpensAnother() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let daemon = try await Self.daemon(hook, #""events":["message"]"#)
        let stage = try await Stage(daemon: daemon)
        _ = try await stage.host.call("broadcast", ["info": ["message": "before"]])
        #expect(hook.connections == 1)
        try await Task.sleep(for: .seconds(6))  // 4 s idle, and the once-a-second sweep
        _ = try await stage.host.call("broadcast", ["info": ["message": "after"]])
        #expect(try await stage.guest.next("on-broadcast")["info"]?["message"] == "before")
        #expect(try await stage.guest.next("on-broadcast")["info"]?["message"] == "after")
        #expect(hook.connections == 2, "the idle one was closed")
    }

    /// A hook nobody listens on fails each call at once (a refused
    /// connection, not a timeout), and `on_error` decides.
    @Test func aHookNobodyListensOnFailsEachCall() async throws {
        let hook = try HookServer()
        hook.close()  // its port is now refused
        let daemon = try await Self.daemon(hook, #""events":["message"],"timeout_ms":5000,"on_error":"deny""#)
        let stage = try await Stage(daemon: daemon)
        let started = ContinuousClock.now
        for _ in 0..<3 {
            #expect(try await stage.host.errorCode("broadcast", ["info": ["message": "x"]]) == 5004)
        }
        // Three timeouts would take 15 s.
        #expect(ContinuousClock.now - started < .seconds(12), "refused, not timed out")
    }

    @Test func aFailedHookIs5004UnderOnErrorDeny() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let daemon = try await Self.daemon(hook, #""events":["message"],"timeout_ms":200,"on_error":"deny""#)
        let stage = try await Stage(daemon: daemon)
        let oversize =
            Array(#"{"allow":true,"pad":""#.utf8) + [UInt8](repeating: 0x61, count: 10 << 20) + Array(#""}"#.utf8)
        let answers: [HookServer.Answer] = [
            .status(500), .body(Array("garbage".utf8)), .body(Array(#"{"allow":"yes"}"#.utf8)), .body(oversize),
            .silence,
        ]
        for answer in answers {
            hook.answer(answer)
            #expect(try await stage.host.errorCode("broadcast", ["info": ["message": "x"]]) == 5004)
        }
        try await stage.settle()
        #expect(await Stage.methods(stage.guest).isEmpty, "nothing was sent")
        _ = try await stage.host.call("broadcast", ["info": ["message": "fine"]])  // the hook allows again
        #expect(try await stage.guest.next("on-broadcast")["info"]?["message"] == "fine")
    }

    /// A peer's calls after a hooked one are answered after it, in order; another
    /// peer's are not held up meanwhile.
    @Test func aPeersLaterCallsWaitForItsHookedCallAndNobodyElses() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let daemon = try await Self.daemon(hook, #""events":["message"],"timeout_ms":5000"#)
        let stage = try await Stage(daemon: daemon)
        let release = DispatchSemaphore(value: 0)
        defer { release.signal() }  // a failed expectation leaves no server thread waiting
        hook.decide { event in
            if event["data"]?["info"]?["message"] == "slow" { release.wait() }
            return .allow
        }
        stage.host.send(
            text: #"{"jsonrpc":"2.0","id":"first","method":"broadcast","params":{"info":{"message":"slow"}}}"#
        )
        stage.host.send(text: #"{"jsonrpc":"2.0","id":"second","method":"ping"}"#)
        _ = try await hook.next("message")  // the hook has it
        // The guest is not held up: its own calls are answered while the host's wait.
        _ = try await stage.guest.call("ping")
        _ = try await stage.guest.call("broadcast", ["info": ["message": "quick"]])
        #expect(try await stage.host.next("on-broadcast")["info"]?["message"] == "quick")
        release.signal()
        var answered: [String] = []
        while answered.count < 2 {
            let message = try await stage.host.nextMessage()
            if let id = message["id"]?.stringValue { answered.append(id) }
        }
        #expect(answered == ["first", "second"])
        #expect(try await stage.guest.next("on-broadcast")["info"]?["message"] == "slow")
    }

    /// A resume goes through the hook (`resume: true`); a denied one leaves the peer in its grace.
    @Test func aResumeGoesThroughTheHookAndADeniedOneKeepsTheGrace() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let member = #""hooks":{"url":"\#(hook.url)","events":["join"]}"#
        let daemon = try await TestModeTests.manualEverywhere(
            settings: "{" + member + #","room":{"reconnect_grace_s":5}}"#
        )
        hook.secret = daemon.secret
        let (host, _) = try await daemon.join("h", as: "host")
        let (guest, guestJoin) = try await daemon.join("g", as: "guest")
        let guestID = try #require(guestJoin["peer"]?["peer_id"])
        _ = try await host.next("on-peer-join")
        await guest.abort()
        _ = try await hook.next("join")
        _ = try await hook.next("join")

        hook.answer(.deny("suspended"))
        let again = try await daemon.client()
        let token = try daemon.token(user: "g", role: "guest")
        let denied = try await again.failure("join", ["token": .string(token), "peer_id": guestID])
        #expect(denied.code == 40305 && denied.message == "suspended")
        #expect(try await hook.next("join")["data"]?["resume"] == true)
        #expect(
            await host.expectSilence(for: .milliseconds(200)).allSatisfy { $0["method"] != "on-peer-leave" },
            "still in its grace"
        )
        let resumed = try await again.call("join", ["token": .string(token), "peer_id": guestID])
        #expect(resumed["resumed"] == true)
    }

    @Test func theHooksFaultOfTestModeFailsTheNextCalls() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let daemon = try await Self.daemon(
            hook,
            #""events":["message"],"on_error":"deny""#,
            arguments: TestModeTests.manualClock
        )
        let stage = try await Stage(daemon: daemon)
        for node in daemon.nodes.isEmpty ? [daemon] : daemon.nodes {
            let (status, body) = try await TestModeFaultTests.fault(node, #"{"hooks":{"fail_next":2,"status":500}}"#)
            #expect(status == 200 && body == ["hooks": ["fail_next": 2]])
        }
        let listed = try await http("GET", daemon, "/v2/test/faults", token: daemon.managementToken())
        #expect(
            listed.body["faults"]?.arrayValue?.contains(["hooks": ["status": 500, "left": 2]]) == true,
            "\(listed.body)"
        )
        #expect(try await stage.host.errorCode("broadcast", ["info": ["message": "a"]]) == 5004)
        #expect(try await stage.host.errorCode("broadcast", ["info": ["message": "b"]]) == 5004)
        _ = try await stage.host.call("broadcast", ["info": ["message": "c"]])
        #expect(
            try hook.requests().map { $0["data"]?["info"]?["message"] } == ["c"],
            "the faults never reached the hook"
        )
    }

    @Test func metricsCountEachOutcome() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let daemon = try await Self.daemon(hook, #""events":["join"],"timeout_ms":200"#)
        hook.answer(.allow, .deny("no"), .status(503))
        _ = try await daemon.join("a", as: "guest")
        _ = try? await daemon.join("b", as: "guest")
        _ = try await daemon.join("c", as: "guest")
        #expect(try await daemon.metric(#"roomd_hook_requests_total{type="join",outcome="allow"}"#) == 1)
        #expect(try await daemon.metric(#"roomd_hook_requests_total{type="join",outcome="deny"}"#) == 1)
        #expect(try await daemon.metric(#"roomd_hook_requests_total{type="join",outcome="failed"}"#) == 1)
        #expect(try await daemon.metric(#"roomd_hook_seconds_count"#) == 3)
        let text = try await daemon.metricsText()
        #expect(text.contains("# HELP roomd_hook_requests_total") && text.contains("# HELP roomd_hook_seconds"))
        if daemon.nodes.isEmpty {  // a cluster run logs on the room's home
            #expect(daemon.stderr.contains("hook denied") && daemon.stderr.contains("hook failed"))
        }
    }

    /// Three nodes: the room's home dies while a call's hook runs there. The call is
    /// answered once (5003, as any call in flight at a home's death, section 18), and
    /// the room goes on at the new home, whose hook decides the next calls.
    @Test func aCallWhoseHomeDiesWhileItsHookRunsIsAnsweredOnce() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let cluster = try await Self.cluster(hook, event: "message")
        defer { cluster.nats.remove() }
        let release = DispatchSemaphore(value: 0)
        defer { release.signal() }
        hook.decide { event in
            if event["data"]?["info"]?["message"] == "at the kill" { release.wait() }
            return .allow
        }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (guest, _) = try await cluster.join("g", as: "guest", on: 1)
        defer { _ = host }
        try await cluster.waitUntilSaved(containing: #""user_id":"g""#)
        guest.send(
            text: #"{"jsonrpc":"2.0","id":"x","method":"broadcast","params":{"info":{"message":"at the kill"}}}"#
        )
        _ = try await hook.next("message")  // its hook runs on n1
        _ = await cluster.nodes[0].stop(signal: SIGKILL)
        var answer: JSON?
        while answer == nil {
            let message = try await guest.nextMessage(timeout: .seconds(25))
            if message["id"] == "x" { answer = message }
        }
        #expect(answer?["error"]?["code"] == 5003, "\(answer ?? .null)")
        let after = try await ClusterRoutingTests.eventually(guest, "broadcast", ["info": ["message": "after"]])
        #expect(after["message_id"] != nil)
        #expect(try hook.requests().last?["data"]?["info"]?["message"] == "after", "the new home asked its hook")
        #expect(!guest.drain().contains { $0["id"] == "x" }, "answered once")
    }

    /// Three nodes: a room's first join waits for its hook longer than the once-a-second
    /// release of rooms nobody is in; the home keeps the room's lease meanwhile, and the
    /// join is answered with the hook's verdict (not 5003, the room lost).
    @Test func aRoomsFirstJoinWaitingForItsHookKeepsTheRoomsLease() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let cluster = try await Self.cluster(hook, event: "join")
        defer { cluster.nats.remove() }
        let held = HookBoundsTests.Held()
        defer { held.open() }
        hook.decide { _ in
            held.hold()
            return .allow
        }
        async let joined = cluster.join("first", as: "host", on: 0, room: "fresh")
        try await held.wait(for: 1)
        try await Task.sleep(for: .milliseconds(2500))  // two releases at least; nothing may happen
        held.open()
        #expect(try await joined.1.isEmpty == false, "joined with the hook's verdict")
    }

    /// Three nodes: the room's home drains (SIGTERM) while two calls wait for their hook
    /// there — a client of another node's and one of its own. Neither runs there: both
    /// go to the new home, whose hook is asked again, and each is answered once, with
    /// its result.
    @Test func callsWaitingForTheirHookWhenTheHomeDrainsAreAnsweredByTheNewHome() async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let cluster = try await Self.cluster(hook, event: "message")
        defer { cluster.nats.remove() }
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }
        hook.decide { event in
            if event["data"]?["info"]?["message"]?.stringValue?.hasPrefix("held") == true {
                gate.wait()
                gate.signal()  // once open, open for every waiter
            }
            return .allow
        }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (guest, _) = try await cluster.join("g", as: "guest", on: 1)
        let (viewer, _) = try await cluster.join("v", as: "viewer", on: 2)
        async let fromGuest = guest.call("broadcast", ["info": ["message": "held 1"]])
        async let fromHost = host.call("broadcast", ["info": ["message": "held 2"]])
        func held(_ count: Int) async throws {
            let deadline = ContinuousClock.now + Daemon.waitTimeout
            while try hook.requests().filter({ $0["data"]?["info"]?["message"]?.stringValue?.hasPrefix("held") == true }
            )
            .count < count {
                guard ContinuousClock.now < deadline else {
                    gate.signal()
                    throw DaemonError(description: "the hook was not asked \(count) times")
                }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        try await held(2)  // both wait on n1
        kill(cluster.nodes[0].process.processIdentifier, SIGTERM)
        try await held(4)  // asked again at the new home
        gate.signal()
        #expect(try await fromGuest["message_id"] != nil)
        #expect(try await fromHost["message_id"] != nil)
        var heard: Set<String> = []
        while heard.count < 2 {
            heard.insert(try await viewer.next("on-broadcast")["info"]?["message"]?.stringValue ?? "")
        }
        #expect(heard == ["held 1", "held 2"])
        #expect(await ClusterDrainTests.exitStatus(of: cluster.nodes[0]) == 0)
    }
}
