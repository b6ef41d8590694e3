import Foundation
import RoomClient
import RoomdTesting
import Testing

/// The RoomdTesting library as a harness uses it.
@Suite struct RoomdTestingTests {
    @Test func startsOnAFreePortServesTokensItMintsAndStopsCleanly() async throws {
        let roomd = try RoomdProcess.start(binary: Daemon.binary, template: Daemon.patientTemplate())
        let other = try RoomdProcess.start(binary: Daemon.binary, template: Daemon.patientTemplate())
        #expect(roomd.port != other.port && roomd.directory != other.directory, "parallel harnesses do not collide")
        let client = try await RoomClient.connect(to: roomd.url, defaultTimeout: Daemon.waitTimeout)
        let joined = try await client.join(token: try roomd.tokens.appToken(room: "show", user: "host-1", role: "host"))
        #expect(joined.peer.role == "host")
        let value: JSON = ["a": 1]  // JSON comes with `import RoomClient`
        #expect(value["a"] == 1)
        #expect(roomd.stop() == 0)
        #expect(!roomd.isRunning)
        #expect(!FileManager.default.fileExists(atPath: roomd.directory.path), "its temporary files are gone")
        #expect(other.stop() == 0)
    }

    /// Test mode through the kit: the manual clock and faults (PROTOCOL.md section 25).
    @Test func aManualClockAndFaultsDriveTheRulesWithoutSleeping() async throws {
        let roomd = try RoomdProcess.start(
            binary: Daemon.binary,
            template: Daemon.patientTemplate(),
            testMode: TestModeOptions(seed: 3)
        )
        defer { _ = roomd.stop() }
        let start = try await roomd.clockMillis()
        func join(_ user: String, _ role: String) async throws -> (RoomClient, String) {
            let client = try await RoomClient.connect(to: roomd.url, defaultTimeout: Daemon.waitTimeout)
            let joined = try await client.join(token: try roomd.tokens.appToken(room: "show", user: user, role: role))
            return (client, joined.peer.peerID)
        }
        let (host, _) = try await join("host-1", "host")
        let (guest, guestID) = try await join("guest-1", "guest")
        _ = try await host.next("on-peer-join")
        #expect(try await roomd.inject(.drop(count: 1), into: .peer(guestID)) == [guestID])
        try await host.broadcast("lost")
        try await host.broadcast("kept")
        #expect(try await guest.next("on-broadcast")["info"]?["message"] == "kept")
        #expect(try await roomd.inject(.close(), into: .user("guest-1")) == [guestID])
        #expect(try await guest.closeCode() == 1006)
        #expect(try await roomd.advance(by: .seconds(20)) == start + 20_000)
        #expect(try await host.next("on-peer-leave")["peer_id"]?.stringValue == guestID)
        try await roomd.clearFaults()
        await #expect(throws: RoomdProcessError.self) { try await roomd.setClock(toMillis: start) }
        let journal = try await roomd.journal(room: "show")
        #expect(journal.first?["kind"] == "call" && journal.first?["method"] == "join")
        #expect(journal.contains { $0["kind"] == "push" && $0["params"]?["info"]?["message"] == "kept" })
        #expect(
            journal.contains { $0["kind"] == "push" && $0["params"]?["info"]?["message"] == "lost" },
            "the journal has what roomd pushed; the drop fault discarded it at the connection"
        )
    }

    /// Test mode II through the kit (section 33): a scripted error on the
    /// next call of a method, listed while in force, and the call changes
    /// nothing.
    @Test func aScriptedErrorAnswersTheNextCallAndChangesNothing() async throws {
        let roomd = try RoomdProcess.start(
            binary: Daemon.binary,
            template: Daemon.patientTemplate(),
            testMode: TestModeOptions()
        )
        defer { _ = roomd.stop() }
        let host = try await RoomClient.connect(to: roomd.url, defaultTimeout: Daemon.waitTimeout)
        _ = try await host.join(token: try roomd.tokens.appToken(room: "show", user: "host-1", role: "host"))
        let viewer = try await RoomClient.connect(to: roomd.url, defaultTimeout: Daemon.waitTimeout)
        let joined = try await viewer.join(token: try roomd.tokens.appToken(room: "show", user: "v-1", role: "viewer"))
        try await roomd.failNext("stage-request", code: 40907, message: "the queue is full", peerID: joined.peer.peerID)
        #expect(try await roomd.faults().first?["left"] == 1)
        do {
            _ = try await viewer.askToJoinStage(note: "hello")
            Issue.record("the scripted error did not answer")
        } catch RoomClientError.rpc(let code, let message, _) {
            #expect(code == 40907 && message == "the queue is full")
        }
        #expect(try await host.stageQueue().total == 0, "the scripted call changed nothing")
        #expect(try await roomd.faults().isEmpty)
        #expect(try await viewer.askToJoinStage(note: "hello").status == .waiting)
    }

    /// Push faults and the synthetic audience through the kit (section 33):
    /// the host misses the dropped push, the crowd's taps and stage requests
    /// reach it, and a misspelled push name throws at once.
    @Test func pushFaultsAndASyntheticAudienceThroughTheKit() async throws {
        let roomd = try RoomdProcess.start(
            binary: Daemon.binary,
            template: Daemon.patientTemplate(),
            testMode: TestModeOptions(seed: 3)
        )
        defer { _ = roomd.stop() }
        let host = try await RoomClient.connect(to: roomd.url, defaultTimeout: Daemon.waitTimeout)
        _ = try await host.join(token: try roomd.tokens.appToken(room: "show", user: "host-1", role: "host"))
        await #expect(throws: RoomClientError.self) { try await roomd.dropNext("on-peer-joined") }

        try await roomd.dropNext("on-peer-join")
        let added = try await roomd.addAudience(room: "show", count: 300)
        #expect(added.count == 300 && added.peerIDs.count == 300)
        _ = try await host.ping()  // every push of those joins came before its answer, on the same socket
        let joins = host.drain().filter { $0["method"] == "on-peer-join" }
        #expect(joins.count == 299, "the first join's push was dropped")

        let taps = try await roomd.audienceAct(
            room: "show",
            "react",
            count: 200,
            params: ["target": "stream", "type": "fire"]
        )
        #expect(taps.done == 200 && taps.errors.isEmpty)
        try await roomd.advance(by: .seconds(1))
        let counts = try await host.next("on-reactions")["counts"]?.arrayValue ?? []
        #expect(counts.contains { $0["type"] == "fire" && $0["total"] == 200 }, "\(counts)")
        let asked = try await roomd.audienceAct(room: "show", "stage-request", count: 12, params: ["note": "me!"])
        #expect(asked.done == 12)
        #expect(try await host.stageQueue().total == 12)
        let refused = try await roomd.audienceAct(
            room: "show",
            "question-vote",
            count: 2,
            params: ["question_id": "nope"]
        )
        #expect(refused.done == 0 && refused.errors.count == 1 && refused.messages.values.allSatisfy { !$0.isEmpty })
        #expect(try await roomd.removeAudience(room: "show") == 300)
    }

    @Test func aGivenSecretHostEnvironmentAndLimitsAndAStopThatReports() async throws {
        // roomd drops one trailing newline of a secret file: this secret keeps its own.
        let secret = Array("a-harness-secret-of-at-least-32-bytes\n".utf8)
        let roomd = try RoomdProcess.start(
            binary: Daemon.binary,
            template: Daemon.patientTemplate(),
            secret: secret,
            host: "0.0.0.0",
            arguments: ["--log-level", "debug"],
            environment: ["ROOMD_ACCESS_KEY": "app-7"],
            limits: [.openFiles(256), .stackKiB(4096)]
        )
        #expect(roomd.listeningURL == "ws://0.0.0.0:\(roomd.port)/ws")
        #expect(roomd.url == "ws://127.0.0.1:\(roomd.port)/ws", "a wildcard address is reached on loopback")
        #expect(roomd.secret == secret)
        #expect(ResourceLimitTests.softOpenFileLimit(roomd.pid) == 256, "the limit is the daemon's (same pid)")
        let limits = try String(contentsOfFile: "/proc/\(roomd.pid)/limits", encoding: .utf8).split(separator: "\n")
        #expect(
            limits.contains {
                $0.hasPrefix("Max stack size") && $0.split(separator: " ").dropFirst(3).first == "4194304"
            }
        )
        let client = try await RoomClient.connect(to: roomd.url, defaultTimeout: Daemon.waitTimeout)
        let without = try roomd.tokens.appToken(room: "r", user: "u", role: "host")
        #expect(
            try await client.errorCode("join", ["token": .string(without)]) == 40101,
            "the environment's access key counts"
        )
        let joined = try await client.join(
            token: try roomd.tokens.appToken(room: "r", user: "u", role: "host", accessKey: "app-7")
        )
        #expect(joined.peer.role == "host")

        let exit = roomd.stop(signal: SIGINT)
        #expect(exit.status == 0 && !exit.timedOut && exit.seconds < 5, "\(exit)")
        #expect(try await client.closeCode() == 1001)
        #expect(roomd.stop(signal: SIGKILL) == exit, "a second stop reports the first")
        #expect(!FileManager.default.fileExists(atPath: roomd.directory.path))
        #expect(roomd.stderr.contains("shutdown complete"), "the log outlives the directory")
    }

    @Test func aDaemonThatOutlivesTheTimeoutIsKilled() throws {
        let roomd = try RoomdProcess.start(binary: Daemon.binary, template: Daemon.patientTemplate())
        kill(roomd.pid, SIGSTOP)  // deaf to SIGTERM
        let exit = roomd.stop(signal: SIGTERM, timeout: 0.3)
        #expect(exit.timedOut && exit.status == SIGKILL && exit.seconds >= 0.3, "\(exit)")
        #expect(!roomd.isRunning)
    }

    @Test func aFailedStartSaysWhyWithTheDaemonsStderr() throws {
        let error = try #require(throws: RoomdProcessError.self) {
            try RoomdProcess.start(binary: Daemon.binary, template: .json(#"{"roles":{"host":{"priority":9}}}"#))
        }
        #expect(error.description.contains("roles.host.priority: must be between 1 and 5, got 9"))
        let missing = try #require(throws: RoomdProcessError.self) {
            try RoomdProcess.locateBinary("/nonexistent/roomd")
        }
        #expect(missing.description.contains("swift build --product roomd"))
    }

    @Test func theDaemonGoesWhenItsHarnessDies() async throws {
        // What RoomdProcess relies on when the test process is killed: roomd
        // started with --exit-with-stdin shuts down once its stdin closes.
        let stdin = try ChildPipe()
        let direct = try ChildProcess.spawn(
            Daemon.binary,
            ["--config", Daemon.shippedConfig, "--port", "0", "--exit-with-stdin"],
            stdin: .descriptor(stdin.read.fileDescriptor),
            stdout: .null,
            stderr: .null
        )
        try stdin.read.close()
        try await Task.sleep(for: .milliseconds(300))
        #expect(direct.isRunning)
        try stdin.write.close()  // the harness is gone
        let deadline = Date().addingTimeInterval(5)
        while direct.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(direct.exitStatus == 0)
    }
}
