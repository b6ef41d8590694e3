import Foundation
import RoomClient
import RoomWire
import Testing

/// Signals (PROTOCOL.md section 1, 1.1): SIGHUP reloads the template,
/// SIGUSR1/SIGUSR2 are ignored, SIGTERM still drains.
@Suite struct SignalTests {
    static func waitFor(_ text: String, in daemon: Daemon, timeout: Double = 10) async throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if daemon.stderr.contains(text) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test func sigusr1AndSigusr2AreIgnored() async throws {
        let daemon = try await Daemon.start(singleProcess: true)  // a signal to one process
        let (host, _) = try await daemon.join("h", as: "host")
        kill(daemon.process.processIdentifier, SIGUSR1)
        kill(daemon.process.processIdentifier, SIGUSR2)
        try await Task.sleep(for: .milliseconds(200))
        #expect(daemon.process.isRunning)
        #expect(try await host.call("ping")["server_time"] != nil)
        let stopped = await daemon.stop()
        #expect(stopped.status == 0)
        #expect(try await host.closeCode() == 1001)
    }

    @Test func sighupReloadsAValidTemplateForJoinsAndRoleChanges() async throws {
        let daemon = try await Daemon.start(singleProcess: true)  // a signal to one process
        let (guest, guestJoin) = try await daemon.join("g", as: "guest")
        let (host, _) = try await daemon.join("h", as: "host")
        let config = daemon.directory.appendingPathComponent("roles.json")
        // The guest role vanishes, a panelist role appears.
        let edited = try Daemon.shippedTemplate { roles in
            roles["panelist"] = roles["guest"]
            roles.removeValue(forKey: "guest")
            for name in roles.keys {
                var role = roles[name]!
                if var subscribe = role["subscribeParams"] as? [String: Any],
                    let list = subscribe["subscribeToRoles"] as? [String]
                {
                    subscribe["subscribeToRoles"] = list.map { $0 == "guest" ? "panelist" : $0 }
                    role["subscribeParams"] = subscribe
                }
                roles[name] = role
            }
        }
        try edited.write(to: config, atomically: true, encoding: .utf8)
        kill(daemon.process.processIdentifier, SIGHUP)
        #expect(try await Self.waitFor("template reloaded", in: daemon))
        #expect(daemon.process.isRunning)

        let (_, panelist) = try await daemon.join("p", as: "panelist")
        #expect(panelist["peer"]?["role"] == "panelist")
        let late = try await daemon.client()
        let guestToken = try daemon.token(user: "g2", role: "guest")
        #expect(try await late.errorCode("join", ["token": .string(guestToken)]) == 40108)
        // The guest keeps its vanished role and keeps working.
        #expect(try await guest.call("ping")["server_time"] != nil)
        let guestID = try #require(guestJoin["peer"]?["peer_id"])
        #expect(
            try await host.call("role-change-request", ["requested_for": guestID, "role": "panelist", "force": true])
                == [:]
        )
        #expect(try await guest.next("on-policy-change")["name"] == "panelist")
    }

    /// The threads of process `pid` named `name` (Linux: /proc/PID/task/*/comm).
    static func threads(named name: String, of pid: Int32) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.filter { task in
            let comm = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)
            return comm?.trimmingCharacters(in: .newlines) == name
        }.count
    }

    /// A template path that blocks when read (a FIFO nobody writes; a hung
    /// network file system alike) used to block the signal thread in the
    /// reload, so SIGTERM was never handled (issue 20). The reload reads on
    /// a thread of its own, one at a time, later SIGHUPs coalesced.
    @Test func aReloadBlockedOnAFIFOLeavesSigtermHandledPromptly() async throws {
        let daemon = try await Daemon.start(singleProcess: true)  // a signal to one process
        let (host, _) = try await daemon.join("h", as: "host")
        let config = daemon.directory.appendingPathComponent("roles.json")
        try FileManager.default.removeItem(at: config)
        #expect(mkfifo(config.path, 0o600) == 0)
        let pid = daemon.process.processIdentifier
        for _ in 0..<3 {
            kill(pid, SIGHUP)
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try await Self.waitFor("one more follows it", in: daemon))
        // Still serving; one reload thread waits on the FIFO, not one per SIGHUP.
        #expect(try await host.call("ping")["server_time"] != nil)
        #expect(Self.threads(named: "roomd-reload", of: pid) == 1)
        let stopped = await daemon.stop(timeout: 5)
        #expect(stopped.status == 0, "SIGTERM handled (-1: it hung and was killed)")
        #expect(try await host.closeCode() == 1001)
    }

    @Test func sighupWithAnInvalidTemplateKeepsTheOldOneAndLogsThePath() async throws {
        let daemon = try await Daemon.start(singleProcess: true)  // a signal to one process
        let config = daemon.directory.appendingPathComponent("roles.json")
        try #"{"roles":{"guest":{"priority":9}}}"#.write(to: config, atomically: true, encoding: .utf8)
        kill(daemon.process.processIdentifier, SIGHUP)
        #expect(try await Self.waitFor("roles.guest.priority: must be between 1 and 5, got 9", in: daemon))
        #expect(daemon.process.isRunning)
        let (_, joined) = try await daemon.join("h", as: "host")
        #expect(joined["peer"]?["role"] == "host")
    }
}
