import Foundation
import RoomClient
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

    static func manual(settings: String? = nil, seed: Int? = nil) throws -> Daemon {
        try Daemon.start(
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
        let daemon = try Daemon.start(singleProcess: true)
        let admin = try daemon.managementToken()
        for path in ["/v2/test/clock", "/v2/test/faults", "/v2/test/journal?room_id=r", "/v2/test/", "/v2/test/x"] {
            for method in ["GET", "POST", "DELETE"] {
                let answer = try await http(method, daemon, path, token: admin, body: method == "POST" ? "{}" : nil)
                #expect(answer.status == 404, "\(method) \(path): \(answer.status)")
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
        let daemon = try Self.manual()
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
        let system = try Daemon.start(arguments: ["--test-mode"], singleProcess: true)
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
        let daemon = try Self.manual()
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
        let left = try await host.next("on-peer-leave", timeout: .seconds(2))
        #expect(left["peer_id"] == viewerJoin["peer"]?["peer_id"] && left["reason"] == "websocket closed")

        try await Self.advance(daemon, by: 39_999)  // 59.999 s after the request
        #expect(await Stage.methods(host).isEmpty)
        try await Self.advance(daemon, by: 1)
        let expired = try await host.next("on-role-change-rejected", timeout: .seconds(2))
        #expect(expired["reason"] == "expired")
    }

    @Test func aTimedPollStopsAndACueEndsOnTheManualClock() async throws {
        let daemon = try Self.manual()
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
        let stopped = try await viewer.next("on-poll-stop", timeout: .seconds(2))
        #expect(stopped["polls"]?[0]?["poll_id"]?.stringValue == poll)
        let admin = try daemon.managementToken()
        #expect(
            try await http("GET", daemon, "/v2/active-rooms/room-1/hls", token: admin).body["cues"]?.arrayValue?.count
                == 1
        )
        try await Self.advance(daemon, by: 15_000)
        #expect(try await http("GET", daemon, "/v2/active-rooms/room-1/hls", token: admin).body["cues"] == [])
    }

    /// The coalesced pushes wait for the clock: nothing in real time, one
    /// push as the clock passes the interval.
    @Test func theTicksRunOnlyAsTheClockPassesThem() async throws {
        let daemon = try Self.manual()
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
            methods.insert(try #require(try await viewer.nextMessage(timeout: .seconds(2))["method"]?.stringValue))
        }
        #expect(methods == ["on-reactions", "on-questions", "active-speakers"])
        try await Self.advance(daemon, by: 5000)
        let quiet = try await viewer.next("active-speakers", timeout: .seconds(2))
        #expect(quiet["speaker-list"] == [], "the speaker went quiet: one more list, empty")
        try await Self.advance(daemon, by: 5000)
        #expect(await Stage.methods(viewer).isEmpty, "nothing changed: no more pushes")
    }

    /// Ten years in one call: each timer runs once, in the order of its time,
    /// not once per millisecond or per tick period.
    @Test func aJumpOfYearsRunsEachDeadlineInTimeOrder() async throws {
        let daemon = try Self.manual()
        let (host, _) = try await daemon.join("h", as: "host")
        let (first, firstJoin) = try await daemon.join("a", as: "viewer")
        let (second, secondJoin) = try await daemon.join("b", as: "viewer")
        _ = try await host.next("on-peer-join")
        _ = try await host.next("on-peer-join")
        await second.abort()
        try await Task.sleep(for: .milliseconds(200))
        try await Self.advance(daemon, by: 5_000)
        await first.abort()
        try await Task.sleep(for: .milliseconds(200))
        let began = ContinuousClock.now
        let now = try await Self.advance(daemon, by: 10 * 365 * 86_400_000)
        #expect(ContinuousClock.now - began < .seconds(5))
        #expect(now == Self.start + 5_000 + 10 * 365 * 86_400_000)
        let leaves = [try await host.next("on-peer-leave"), try await host.next("on-peer-leave")]
        #expect(leaves.map { $0["peer_id"] } == [secondJoin["peer"]?["peer_id"], firstJoin["peer"]?["peer_id"]])
    }

    @Test func theJoinDeadlineFollowsTheManualClock() async throws {
        let daemon = try Self.manual(settings: #"{"limits":{"join_timeout_s":10}}"#)
        // Blocking reads on threads of their own, never the test pool's.
        nonisolated(unsafe) let socket = try RawSocket(port: daemon.port, readTimeoutSeconds: 3)
        try await Task.sleep(for: .milliseconds(300))
        try await Self.advance(daemon, by: 9_999)
        try await Self.advance(daemon, by: 1)
        #expect(try await onThread { socket.readCloseCode() } == 1008)
        nonisolated(unsafe) let late = try RawSocket(port: daemon.port, readTimeoutSeconds: 1)
        #expect(try await onThread { late.readFrame() == nil }, "no close without an advance")
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
            let daemon = try Self.manual(seed: seed)
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
