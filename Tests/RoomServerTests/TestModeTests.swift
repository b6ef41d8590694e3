import Foundation
import RoomClient
import RoomModel
import RoomTokens
import RoomWire
import Testing

@testable import RoomServer

/// Test mode (PROTOCOL.md section 25): the routes exist only with
/// `--test-mode`, behind a management token; the manual clock moves every
/// timer that follows it, in time order, before the answer; `--seed` makes
/// ids repeat. One daemon each (the clock is a node's: see the cluster note
/// in docs/PROTOCOL.md).
@Suite struct TestModeTests {
    /// The clocks start on a whole second near the real time: tokens minted
    /// by the harness in real time are valid (their `exp` is a day ahead).
    static let start = Int64(Date().timeIntervalSince1970) * 1000

    /// The flags of a manual clock starting at `start`.
    static let manualClock = ["--test-mode", "--clock", "manual", "--clock-start", "\(start)"]

    /// A daemon on the manual clock over every node of a cluster run (the
    /// project's timing tests: `advanceAll` moves every node's clock alike).
    static func manualEverywhere(settings: String? = nil) async throws -> Daemon {
        try await Daemon.start(settings: settings, arguments: manualClock)
    }

    /// Moves the clock of every node of `daemon` (one, or a cluster run's three) by `millis`.
    static func advanceAll(_ daemon: Daemon, by millis: Int) async throws {
        for node in daemon.nodes.isEmpty ? [daemon] : daemon.nodes { try await advance(node, by: millis) }
    }

    static func manual(settings: String? = nil, seed: Int? = nil) async throws -> Daemon {
        try await Daemon.start(
            settings: settings,
            arguments: manualClock + (seed.map { ["--seed", "\($0)"] } ?? []),
            singleProcess: true
        )
    }

    /// Moves the daemon's clock; returns its `now`.
    @discardableResult
    static func advance(_ daemon: Daemon, by millis: Int) async throws -> Int64 {
        let answer = try await http(
            "POST",
            daemon,
            "/v2/test/clock",
            token: daemon.managementToken(),
            body: #"{"advance_ms":\#(millis)}"#
        )
        #expect(answer.status == 200, "\(answer.body)")
        return Int64(try #require(answer.body["now"]?.intValue))
    }

    @Test func withoutTestModeNoTestRouteExists() async throws {
        let daemon = try await Daemon.start(singleProcess: true)
        let admin = try daemon.managementToken()
        for path in ["/v2/test/clock", "/v2/test/faults", "/v2/test/journal?room_id=r", "/v2/test/", "/v2/test/x"] {
            for method in ["GET", "POST", "DELETE"] {
                let answer = try await http(method, daemon, path, token: admin, body: method == "POST" ? "{}" : nil)
                #expect(answer.status == 404, "\(method) \(path): \(answer.status)")
                // A harness that forgot the flag is told so (issue 38: it used to read only "no route").
                #expect(
                    answer.body["message"]?.stringValue?.contains("not started with --test-mode") == true,
                    "\(method) \(path): \(answer.body)"
                )
            }
        }
        #expect(try await http("GET", daemon, "/healthz").body["test_mode"] == nil)
    }

    /// Test mode is for loopback harnesses only, and its flags need it.
    @Test(arguments: [
        (["--test-mode", "--host", "0.0.0.0"], "--test-mode: only on a loopback --host"),
        (["--clock", "manual"], "--clock manual: needs --test-mode"),
        (["--seed", "7"], "--seed: needs --test-mode"),
        (["--test-mode", "--clock-start", "5"], "--clock-start: needs --clock manual"),
        (["--test-mode", "--clock", "manual", "--clock-start=-5"], "--clock-start: must be ≥ 0"),
        (["--test-mode", "--clock", "sundial"], "--clock"),
        (["--test-mode", "--seed=-1"], "--seed"),
    ])
    func testModeFlagsAreCheckedAtStart(arguments: [String], message: String) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomd-test-mode-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let secret = dir.appendingPathComponent("secret")
        try Data(repeating: 0x61, count: 40).write(to: secret)
        let run = try runCommand(
            Daemon.binary,
            ["--config", Daemon.shippedConfig, "--port", "0", "--secret-file", secret.path] + arguments,
            environment: ["PATH": "/usr/bin:/bin"]
        )
        #expect(run.status == 64, "\(arguments): \(run.status) \(run.err)")
        #expect(run.err.contains(message), "\(arguments): \(run.err)")
    }

    @Test func testRoutesNeedAManagementTokenAndCheckTheirBody() async throws {
        let daemon = try await Self.manual()
        #expect(try await http("GET", daemon, "/healthz").body["test_mode"] == true)
        let bare = try await http("POST", daemon, "/v2/test/clock", body: #"{"advance_ms":1}"#)
        #expect(bare.status == 401 && bare.body["code"] == 40100)
        let app = try daemon.token(user: "u", role: "host")
        #expect(try await http("POST", daemon, "/v2/test/clock", token: app, body: #"{"advance_ms":1}"#).status == 403)
        let admin = try daemon.managementToken()
        #expect(try await http("GET", daemon, "/v2/test/clock", token: admin).body["now"]?.intValue == Int(Self.start))
        let cases: [(String, String)] = [
            (#"{"set_ms":1}"#, "set_ms: the clock does not go back"),
            (#"{"advance_ms":-1}"#, "advance_ms: must be between 0"),
            (#"{"advance_ms":1e30}"#, "advance_ms: expected an integer"),
            (#"{"advance_ms":"60"}"#, "advance_ms: expected an integer"),
            (#"{"advance_ms":1,"set_ms":1800000000001}"#, "advance_ms, set_ms: give one, not both"),
            (#"{}"#, "advance_ms or set_ms: required"),
            (#"{"advance_ms":99999999999999999}"#, "advance_ms: must be between 0 and 3162240000000"),
            (#"[1]"#, "body: expected an object"),
            (#"{"advance_ms":"#, "body: invalid JSON"),
        ]
        for (body, message) in cases {
            let answer = try await http("POST", daemon, "/v2/test/clock", token: admin, body: body)
            #expect(answer.status == 400, "\(body)")
            #expect(answer.body["code"] == -32602, "\(body)")
            #expect(answer.body["message"]?.stringValue?.hasPrefix(message) == true, "\(body): \(answer.body)")
        }
        #expect(try await Self.advance(daemon, by: 0) == Self.start, "nothing moved it")

        // Test mode on the system clock: the clock route says how to get a manual one.
        let system = try await Daemon.start(arguments: ["--test-mode"], singleProcess: true)
        let refused = try await http(
            "POST",
            system,
            "/v2/test/clock",
            token: system.managementToken(),
            body: #"{"advance_ms":1}"#
        )
        #expect(refused.status == 409 && refused.body["message"]?.stringValue?.contains("--clock manual") == true)
        #expect(try await http("GET", system, "/healthz").body["test_mode"] == true)
    }

    @Test func theGraceAndARoleChangeRequestEndOnTheManualClock() async throws {
        let daemon = try await Self.manual()
        let (host, hostJoin) = try await daemon.join("h", as: "host")
        #expect(hostJoin["room"]?["started_at"]?.intValue == Int(Self.start), "the session starts on the manual clock")
        #expect(hostJoin["peer"]?["joined_at"]?.intValue == Int(Self.start))
        let (viewer, viewerJoin) = try await daemon.join("v", as: "viewer")
        let (carol, carolJoin) = try await daemon.join("c", as: "viewer")
        _ = try await host.next("on-peer-join")
        _ = try await host.next("on-peer-join")

        // Timestamps are the manual clock's.
        let sent = try await host.call("broadcast", ["info": ["message": "now"]])
        #expect(sent["timestamp"]?.intValue == Int(Self.start))

        await viewer.abort()
        let carolID = try #require(carolJoin["peer"]?["peer_id"])
        _ = try await host.call("role-change-request", ["requested_for": carolID, "role": "guest"])
        _ = try await carol.next("on-role-change-request")
        try await Task.sleep(for: .milliseconds(300))
        #expect(await Stage.methods(host).isEmpty, "real time does not end a grace")

        try await Self.advance(daemon, by: 19_999)
        #expect(await Stage.methods(host).isEmpty, "19.999 s: the grace goes on")
        try await Self.advance(daemon, by: 1)
        let left = try await host.next("on-peer-leave")
        #expect(left["peer_id"] == viewerJoin["peer"]?["peer_id"] && left["reason"] == "websocket closed")

        try await Self.advance(daemon, by: 39_999)  // 59.999 s after the request
        #expect(await Stage.methods(host).isEmpty)
        try await Self.advance(daemon, by: 1)
        let expired = try await host.next("on-role-change-rejected")
        #expect(expired["reason"] == "expired")
    }

    @Test func aTimedPollStopsAndACueEndsOnTheManualClock() async throws {
        let daemon = try await Self.manual()
        let (host, _) = try await daemon.join("h", as: "host")
        let (viewer, _) = try await daemon.join("v", as: "viewer")
        _ = try await host.next("on-peer-join")
        let poll = try await PollTests.makePoll(host, ["title": "Quick", "type": "poll", "duration": 30])
        _ = try await viewer.next("on-poll-start")
        _ = try await host.call("hls-start")
        let cue = try await host.call("hls-timed-metadata", ["metadata_objs": [["payload": "x", "duration": 45]]])
        #expect(cue["cues"]?[0]?["start_date"]?.intValue == Int(Self.start))
        try await Self.advance(daemon, by: 29_999)
        #expect(await Stage.methods(viewer).allSatisfy { $0 != "on-poll-stop" })
        try await Self.advance(daemon, by: 1)
        let stopped = try await viewer.next("on-poll-stop")
        #expect(stopped["polls"]?[0]?["poll_id"]?.stringValue == poll)
        let admin = try daemon.managementToken()
        #expect(
            try await http("GET", daemon, "/v2/active-rooms/room-1/hls", token: admin).body["cues"]?.arrayValue?.count
                == 1
        )
        try await Self.advance(daemon, by: 15_000)
        #expect(try await http("GET", daemon, "/v2/active-rooms/room-1/hls", token: admin).body["cues"] == [])
    }

    /// An app token's `exp` is read on the manual clock: a harness tests
    /// expiry by advancing; the management token keeps real time.
    @Test func tokensExpireOnTheManualClock() async throws {
        let daemon = try await Self.manual()
        // Minted at the manual clock's time (`start` may be long past in real time).
        let token = try TokenMinter(secret: Daemon.defaultSecret).appToken(
            room: "room-1",
            user: "u",
            role: "viewer",
            ttl: 60,
            now: Date(timeIntervalSince1970: Double(Self.start) / 1000)
        )
        let early = try await daemon.client()
        #expect(try await early.errorCode("join", ["token": .string(token)]) == nil)
        try await Self.advance(daemon, by: 61_000)
        let late = try await daemon.client()
        #expect(try await late.errorCode("join", ["token": .string(token)]) == 40109, "expired on the manual clock")
        try await Self.advance(daemon, by: 2 * 86_400_000)
        #expect(try await Self.advance(daemon, by: 1) > Self.start, "the management token still works")
    }

    /// The coalesced pushes wait for the clock: nothing in real time, one
    /// push as the clock passes the interval.
    @Test func theTicksRunOnlyAsTheClockPassesThem() async throws {
        let daemon = try await Self.manual()
        let (host, _) = try await daemon.join("h", as: "host")
        let (viewer, _) = try await daemon.join("v", as: "viewer")
        _ = try await host.next("on-peer-join")
        _ = try await viewer.call("react", ["target": "stream", "type": "fire", "count": 3])
        _ = try await viewer.call("question-add", ["text": "Are we live?"])
        _ = try await host.call("track-add", ["track_id": "mic", "type": "audio"])
        _ = try await host.call("audio-level", ["levels": [["track_id": "mic", "level": 80]]])
        try await Task.sleep(for: .milliseconds(1500))
        #expect(
            await Stage.methods(viewer).filter { $0 != "on-track-add" }.isEmpty,
            "1.5 s of real time: no tick ran"
        )
        try await Self.advance(daemon, by: 1000)
        var methods = Set<String>()
        for _ in 0..<3 {
            methods.insert(try #require(try await viewer.nextMessage()["method"]?.stringValue))
        }
        #expect(methods == ["on-reactions", "on-questions", "active-speakers"])
        try await Self.advance(daemon, by: 5000)
        let quiet = try await viewer.next("active-speakers")
        #expect(quiet["speaker-list"] == [], "the speaker went quiet: one more list, empty")
        try await Self.advance(daemon, by: 5000)
        #expect(await Stage.methods(viewer).isEmpty, "nothing changed: no more pushes")
    }

    /// Ten years in one call: each timer runs once, in the order of its time,
    /// not once per millisecond or per tick period.
    @Test func aJumpOfYearsRunsEachDeadlineInTimeOrder() async throws {
        let daemon = try await Self.manual()
        let (host, _) = try await daemon.join("h", as: "host")
        let (first, firstJoin) = try await daemon.join("a", as: "viewer")
        let (second, secondJoin) = try await daemon.join("b", as: "viewer")
        _ = try await host.next("on-peer-join")
        _ = try await host.next("on-peer-join")
        await second.abort()
        try await daemon.waitForGraces()
        try await Self.advance(daemon, by: 5_000)
        await first.abort()
        try await daemon.waitForGraces(2)
        let began = ContinuousClock.now
        let now = try await Self.advance(daemon, by: 10 * 365 * 86_400_000)
        #expect(ContinuousClock.now - began < .seconds(5))
        #expect(now == Self.start + 5_000 + 10 * 365 * 86_400_000)
        let leaves = [try await host.next("on-peer-leave"), try await host.next("on-peer-leave")]
        #expect(leaves.map { $0["peer_id"] } == [secondJoin["peer"]?["peer_id"], firstJoin["peer"]?["peer_id"]])
    }

    @Test func theJoinDeadlineFollowsTheManualClock() async throws {
        let daemon = try await Self.manual(settings: #"{"limits":{"join_timeout_s":10}}"#)
        // Blocking reads on threads of their own, never the test pool's.
        let socket = try RawSocket(port: daemon.port, readTimeoutSeconds: 3)
        try await Task.sleep(for: .milliseconds(300))
        try await Self.advance(daemon, by: 9_999)
        try await Self.advance(daemon, by: 1)
        #expect(await socket.readCloseCode() == 1008)
        let late = try RawSocket(port: daemon.port, readTimeoutSeconds: 1)
        #expect(await late.readFrame() == nil, "no close without an advance")
    }

    /// The journal: every call (its token redacted), answer, push and
    /// webhook of a room session, in order, timed on the manual clock.
    @Test func theJournalHoldsTheSessionInOrderWithoutTokens() async throws {
        let backend = try WebhookReceiver()
        let daemon = try await Self.manual(
            settings: #"{"webhooks":{"url":"\#(backend.url)","events":["peer.join.success"]}}"#
        )
        let admin = try daemon.managementToken()
        let hostToken = try daemon.token(user: "h", role: "host")
        let host = try await daemon.client()
        let hostID = try #require(try await host.call("join", ["token": .string(hostToken)])["peer"]?["peer_id"])
        let (guest, guestJoin) = try await daemon.join("g", as: "guest")
        let guestID = try #require(guestJoin["peer"]?["peer_id"])
        try await Self.advance(daemon, by: 1500)
        _ = try await host.call("broadcast", ["info": ["message": "hello"]])
        #expect(try await guest.errorCode("track-update", ["track_id": "none", "mute": true]) == 40401)
        _ = try await guest.next("on-broadcast")

        let answer = try await httpText("GET", daemon, "/v2/test/journal?room_id=room-1", token: admin)
        #expect(answer.status == 200)
        #expect(!answer.text.contains(hostToken), "no token in the journal")
        let lines = answer.text.split(separator: "\n").map { try? JSON.parse(Array($0.utf8)) }
        let kinds = lines.map { line -> String in
            let kind = line?["kind"]?.stringValue ?? "?"
            let what = line?["method"]?.stringValue ?? line?["type"]?.stringValue ?? ""
            return what.isEmpty ? kind : kind + " " + what
        }
        #expect(
            kinds.filter { !$0.hasPrefix("webhook") } == [
                "call join", "answer", "call join", "push on-peer-join", "answer",
                "call broadcast", "push on-broadcast", "answer", "call track-update", "answer",
            ],
            "\(kinds)"
        )
        #expect(kinds.filter { $0.hasPrefix("webhook") } == ["webhook peer.join.success", "webhook peer.join.success"])
        let rpc = lines.filter { $0?["kind"] != "webhook" }
        #expect(rpc[0]?["params"]?["token"] == "<redacted>" && rpc[0]?["peer_id"] == .null)
        #expect(rpc[1]?["peer_id"] == hostID && rpc[1]?["result"]?["peer"]?["peer_id"] == hostID)
        let push = try #require(lines.first { $0?["method"] == "on-broadcast" } ?? nil)
        #expect(push["to"] == [guestID] && push["params"]?["info"]?["message"] == "hello")
        #expect(push["t"]?.intValue == Int(Self.start) + 1500, "timed on the manual clock")
        #expect(lines.last??["error"]?["code"] == 40401)

        let missing = try await http("GET", daemon, "/v2/test/journal", token: admin)
        #expect(missing.status == 400 && missing.body["message"]?.stringValue?.hasPrefix("room_id: required") == true)
        #expect(try await http("GET", daemon, "/v2/test/journal?room_id=nowhere", token: admin).status == 404)
    }

    /// `roomd replay`: a journal played back against a daemon with the same
    /// seed and clock matches push for push; another seed, or a journal
    /// changed by hand, is exit 1 with the first difference.
    @Test func aJournalReplaysOnTheSameSeedAndNamesWhatDiffers() async throws {
        func script(_ daemon: Daemon) async throws {
            let (host, _) = try await daemon.join("h", as: "host", room: "show")
            let (guest, _) = try await daemon.join("g", as: "guest", room: "show")
            let (viewer, viewerJoin) = try await daemon.join("v", as: "viewer", room: "show")
            _ = try await host.call("broadcast", ["info": ["message": "hi"]])
            _ = try await host.call(
                "role-change-request",
                ["requested_for": viewerJoin["peer"]!["peer_id"]!, "role": "guest"]
            )
            _ = try await guest.call("track-add", ["track_id": "mic", "type": "audio"])
            try await Self.advance(daemon, by: 60_000)  // the request expires
            for client in [host, guest, viewer] { _ = try await client.call("ping") }
        }
        let original = try await Self.manual(seed: 11)
        try await script(original)
        let journal = try await httpText(
            "GET",
            original,
            "/v2/test/journal?room_id=show",
            token: original.managementToken()
        ).text
        #expect(journal.contains("on-role-change-rejected"))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomd-replay-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("journal.jsonl")
        let secret = dir.appendingPathComponent("secret")
        try journal.write(to: file, atomically: true, encoding: .utf8)
        try Data(Daemon.defaultSecret).write(to: secret)
        func replay(_ path: URL, against daemon: Daemon) async throws -> (status: Int32, out: String, err: String) {
            let (binary, url, secretPath) = (Daemon.binary, daemon.url, secret.path)
            return try await onThread {
                try runCommand(
                    binary,
                    ["replay", path.path, "--against", url, "--secret-file", secretPath],
                    timeout: 30
                )
            }
        }
        let same = try await replay(file, against: try Self.manual(seed: 11))
        #expect(same.status == 0 && same.out.contains("every push matched"), "\(same)")

        let other = try await replay(file, against: try Self.manual(seed: 12))
        #expect(other.status == 1 && other.out.contains("join answered peer"), "\(other)")

        let edited = dir.appendingPathComponent("edited.jsonl")
        // Only the push is changed (the broadcast call still says "hi").
        let lines = journal.split(separator: "\n").map { line in
            line.contains(#""kind":"push""#) && line.contains("on-broadcast")
                ? line.replacingOccurrences(of: #""message":"hi""#, with: #""message":"bye""#) : String(line)
        }
        try (lines.joined(separator: "\n") + "\n").write(to: edited, atomically: true, encoding: .utf8)
        let changed = try await replay(edited, against: try Self.manual(seed: 11))
        #expect(changed.status == 1, "\(changed)")
        #expect(changed.out.contains("expected \"on-broadcast\"") && changed.out.contains("bye"), "\(changed.out)")
    }

    /// The journal's bounds: lines and bytes per session, and sessions kept.
    @Test func theJournalIsBounded() {
        let journal = TestJournal(clock: SystemClock(), maxLines: 3, maxBytes: 1 << 20, maxRooms: 2)
        for n in 0..<5 { journal.webhook(type: "t\(n)", room: RoomRef(roomID: "a", sessionID: "s1")) }
        let text = String(decoding: journal.lines(of: "a") ?? [], as: UTF8.self)
        #expect(text.split(separator: "\n").count == 4)
        #expect(text.hasSuffix(#"{"kind":"truncated","lines_dropped":2}"# + "\n"))
        journal.webhook(type: "new", room: RoomRef(roomID: "a", sessionID: "s2"))
        #expect(journal.lines(of: "a").map { String(decoding: $0, as: UTF8.self) }?.contains("\"new\"") == true)
        #expect(
            journal.lines(of: "a").map { String(decoding: $0, as: UTF8.self).split(separator: "\n").count } == 1,
            "a new session starts anew"
        )
        journal.webhook(type: "b", room: RoomRef(roomID: "b", sessionID: "s"))
        journal.webhook(type: "c", room: RoomRef(roomID: "c", sessionID: "s"))
        #expect(journal.lines(of: "a") == nil, "the session written longest ago went first")
        #expect(journal.lines(of: "b") != nil && journal.lines(of: "c") != nil)
        let small = TestJournal(clock: SystemClock(), maxLines: 100, maxBytes: 100, maxRooms: 2)
        for _ in 0..<10 { small.webhook(type: "x", room: RoomRef(roomID: "r", sessionID: "s")) }
        #expect((small.lines(of: "r")?.count ?? 0) <= 100 + 64)
    }

    /// Every timer kind is placed on one clock or the other; a new kind must be placed.
    @Test func everyTimerKindIsOnTheManualClockButKeepalive() {
        for deadline in Schedule.Deadline.allCases { #expect(Schedule.followsManualClock(deadline), "\(deadline)") }
        for tick in Schedule.Tick.allCases {
            #expect(Schedule.followsManualClock(tick) == (tick != .keepalive), "\(tick)")
        }
    }

    @Test func theSameSeedGivesTheSameIDs() async throws {
        func run(seed: Int) async throws -> [JSON?] {
            let daemon = try await Self.manual(seed: seed)
            let (host, joined) = try await daemon.join("h", as: "host")
            let (_, other) = try await daemon.join("v", as: "viewer")
            let sent = try await host.call("broadcast", ["info": ["message": "hi"]])
            let poll = try await host.call("poll-info-set", ["title": "t", "type": "poll"])
            return [
                joined["peer"]?["peer_id"], joined["room"]?["session_id"], other["peer"]?["peer_id"],
                sent["message_id"], poll["poll_id"],
            ]
        }
        let one = try await run(seed: 42)
        #expect(one.allSatisfy { $0?.stringValue?.count == 32 })
        #expect(try await run(seed: 42) == one)
        #expect(try await run(seed: 43) != one)
    }
}
