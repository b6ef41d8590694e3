import Foundation
import RoomClient
import RoomWire
import Testing

/// Unauthenticated sockets and the open-file limit (PROTOCOL.md section 1, 1.1).
@Suite struct ResourceLimitTests {
    /// CPU time (user + system) the process used, in clock ticks.
    static func cpuTicks(_ pid: Int32) -> Int {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return 0 }
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

    /// The join deadline has a timer of its own (the Schedule's `.joinDeadline`,
    /// armed for the socket that has waited longest), not the once-a-second
    /// keepalive sweep, which closed a socket up to a second late. Four
    /// sockets opened a quarter second apart: with the sweep, one of them was
    /// always closed at least 2.75 s after its upgrade. The sockets are opened
    /// and watched on a thread of their own, so that a busy test pool cannot
    /// delay the measurement.
    @Test func theJoinDeadlineClosesEachSocketOnTime() async throws {
        let daemon = try Daemon.start(settings: #"{"limits":{"join_timeout_s":2}}"#)
        let port = daemon.port
        let waited = try await onThread { () throws -> [(code: Int?, seconds: Double)] in
            var sockets: [RawSocket] = []
            var opened: [Date] = []
            for _ in 0..<4 {
                sockets.append(try RawSocket(port: port, readTimeoutSeconds: 6))
                opened.append(Date())  // the 101 is in
                usleep(250_000)
            }
            return zip(RawSocket.closes(of: sockets, timeout: 6), opened).map { close, opened in
                (close.code, close.at.map { $0.timeIntervalSince(opened) } ?? -1)
            }
        }
        for (index, close) in waited.enumerated() {
            #expect(close.code == 1008, "socket \(index): \(String(describing: close.code))")
            #expect(
                close.seconds >= 1.9 && close.seconds <= 2.6,
                "socket \(index) closed \(close.seconds) s after its upgrade"
            )
        }
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
        let refused =
            metrics.stringValue?.split(separator: "\n")
            .first { $0.hasPrefix("roomd_accept_errors_total") }.flatMap { Double($0.split(separator: " ").last!) } ?? 0
        #expect(refused > 0)
        let warnings = daemon.stderr.components(separatedBy: "open-file limit reached").count - 1
        #expect(warnings >= 1 && warnings <= 3, "logged at most once a second: \(warnings)")
    }

    /// The soft open-file limit of `pid` (from /proc, as prlimit would show it).
    static func softOpenFileLimit(_ pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") })
        else { return nil }
        return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).first.flatMap { Int($0) }
    }

    static func setSoftOpenFileLimit(_ pid: Int32, _ limit: Int) throws {
        let prlimit = Process()
        prlimit.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        prlimit.arguments = ["--pid", "\(pid)", "--nofile=\(limit):"]
        try prlimit.run()
        prlimit.waitUntilExit()
        guard prlimit.terminationStatus == 0 else { throw DaemonError(description: "prlimit failed") }
    }

    /// The socket budget is fixed at start from the open-file limit, so running
    /// out of files below it (other files of the process, or an operator
    /// lowering the limit with prlimit, as here) makes accept() fail with
    /// EMFILE. roomd must not spin on the ready listener: it stops watching it
    /// until its once-a-second sweep, keeps serving its peers, and takes the
    /// waiting connections once files are free again.
    @Test func outOfFilesBelowTheBudgetPausesAcceptingWithoutSpinningAndResumes() async throws {
        let daemon = try Daemon.start(singleProcess: true)
        let (host, _) = try await daemon.join("h", as: "host")
        let pid = daemon.process.processIdentifier
        let original = try #require(Self.softOpenFileLimit(pid))
        let open = Set(try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").compactMap { Int($0) })
        let lowestFree = (0...).first { !open.contains($0) }!
        let outOfFiles = Date()
        try Self.setSoftOpenFileLimit(pid, lowestFree)  // no new descriptor fits
        let waiting = try connectTCP(port: daemon.port)  // the kernel completes it; it waits to be accepted
        defer { close(waiting) }
        let request = Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        #expect(
            request.withUnsafeBytes { send(waiting, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == request.count
        )

        try await Task.sleep(for: .milliseconds(300))
        let before = Self.cpuTicks(pid)
        try await Task.sleep(for: .seconds(1))
        let used = Self.cpuTicks(pid) - before
        #expect(used < 30, "no spin on the ready listener: \(used) ticks in 1 s")
        var poller = pollfd(fd: waiting, events: Int16(POLLIN), revents: 0)
        #expect(poll(&poller, 1, 0) == 0, "not accepted while out of files")
        #expect(try await host.call("ping")["server_time"] != nil, "existing peers are still served")

        try Self.setSoftOpenFileLimit(pid, original)
        let seconds = Int(Date().timeIntervalSince(outOfFiles).rounded(.up))
        poller.revents = 0
        #expect(poll(&poller, 1, 3000) == 1, "accepted within the next sweep once files are free")
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(waiting, &buffer, buffer.count, 0)
        #expect(String(decoding: buffer[..<max(0, count)], as: UTF8.self).hasPrefix("HTTP/1.1 200 OK"))
        let warnings = daemon.stderr.components(separatedBy: "out of open files").count - 1
        #expect(
            warnings >= 1 && warnings <= seconds + 2,
            "once per pause, a pause a second: \(warnings) in \(seconds) s"
        )
    }
}
