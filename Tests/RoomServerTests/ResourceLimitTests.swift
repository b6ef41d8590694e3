import Foundation
import RoomClient
import RoomWire
import Testing

/// Unauthenticated sockets and the open-file limit (PROTOCOL.md section 1, 1.1).
@Suite struct ResourceLimitTests {
    /// CPU time (user + system) the process used, in clock ticks.
    static func cpuTicks(_ pid: Int32) -> Int {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }

    @Test func aSocketThatNeverJoinsIsClosedWith1008() async throws {
        // 5 s: room for a loaded machine (the whole suite runs in parallel) to connect and join in time.
        let daemon = try Daemon.start(settings: #"{"limits":{"join_timeout_s":5}}"#)
        let (joined, _) = try await daemon.join("h", as: "host")
        let idle = try RawSocket(port: daemon.port, readTimeoutSeconds: 12)
        try idle.sendText(#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)  // ping does not count as joining
        let started = Date()
        #expect(idle.readCloseCode() == 1008)
        let waited = Date().timeIntervalSince(started)
        #expect(waited > 3 && waited < 11, "closed at the deadline, after \(waited) s")
        #expect(try await joined.call("ping")["server_time"] != nil, "a joined connection stays")
    }

    @Test func atTheOpenFileLimitNewConnectionsAreRefusedWithoutSpinning() async throws {
        // 128 open files: a budget of 64 sockets (64 kept in reserve).
        let daemon = try Daemon.start(limits: ["-n 128"])
        let (host, _) = try await daemon.join("h", as: "host")
        let pid = daemon.process.processIdentifier
        var flood: [Int32] = []
        for _ in 0..<150 { flood.append(try connectTCP(port: daemon.port)) }
        try await Task.sleep(for: .milliseconds(300))
        let before = Self.cpuTicks(pid)
        try await Task.sleep(for: .seconds(1))
        let used = Self.cpuTicks(pid) - before
        #expect(used < 30, "no spin at the limit: \(used) ticks in 1 s")
        #expect(try await host.call("ping")["server_time"] != nil, "existing peers are still served")
        for fd in flood { close(fd) }
        try await Task.sleep(for: .milliseconds(300))
        #expect(try healthStatusLine(port: daemon.port) == "HTTP/1.1 200 OK", "it recovers once files free up")
        let (_, metrics) = try await http("GET", daemon, "/metrics")
        let refused = metrics.stringValue?.split(separator: "\n")
            .first { $0.hasPrefix("roomd_accept_errors_total") }.flatMap { Double($0.split(separator: " ").last!) } ?? 0
        #expect(refused > 0)
        let warnings = daemon.stderr.components(separatedBy: "open-file limit reached").count - 1
        #expect(warnings >= 1 && warnings <= 3, "logged at most once a second: \(warnings)")
    }
}
