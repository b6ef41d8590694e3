import Foundation
import RoomClient
import RoomWire
import RoomdTesting
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

    /// The value of one series of `GET /metrics` (over a raw socket: it must
    /// answer during a flood too); nil without an answer or the series.
    static func metric(_ series: String, port: Int) throws -> Double? {
        let (response, _) = try rawExchange(
            port: port,
            Array("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
        )
        guard response.hasPrefix("HTTP/1.1 200") else { return nil }
        return response.split(separator: "\n").first { $0.hasPrefix(series + " ") }
            .flatMap { Double($0.split(separator: " ").last!) }
    }

    /// On test mode's manual clock (no 10 s of waiting, and no loaded
    /// machine can make the join itself miss the deadline); the deadline's
    /// accuracy in real time is `theJoinDeadlineClosesEachSocketOnTime`'s.
    @Test func aSocketThatNeverJoinsIsClosedWith1008() async throws {
        let daemon = try await TestModeTests.manual(settings: #"{"limits":{"join_timeout_s":10}}"#)
        let (joined, _) = try await daemon.join("h", as: "host")
        let idle = try RawSocket(port: daemon.port, readTimeoutSeconds: 5)
        try idle.sendText(#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)  // ping does not count as joining
        #expect(await idle.readFrame()?.opcode == 1, "the ping's answer")
        try await TestModeTests.advance(daemon, by: 9_999)
        try await TestModeTests.advance(daemon, by: 1)
        #expect(await idle.readCloseCode() == 1008)
        #expect(try await joined.call("ping")["server_time"] != nil, "a joined connection stays")
    }

    /// The join deadline has a timer of its own (the Schedule's `.joinDeadline`,
    /// armed for the socket that has waited longest), not the once-a-second
    /// keepalive sweep, which closed a socket up to a second late. Four
    /// sockets opened a quarter second apart on the manual clock (which the
    /// join deadline follows, PROTOCOL.md section 25): each is closed when the
    /// clock reaches its own deadline, not a millisecond before, and the
    /// others stay. (Measured in real time this raced the machine's load.)
    @Test func theJoinDeadlineClosesEachSocketOnTime() async throws {
        let daemon = try await TestModeTests.manual(settings: #"{"limits":{"join_timeout_s":2}}"#)
        var sockets: [RawSocket] = []
        for index in 0..<4 {
            if index > 0 { try await TestModeTests.advance(daemon, by: 250) }
            sockets.append(try RawSocket(port: daemon.port))
        }
        // The 101 is in, so roomd counts from each upgrade; the clock is 750 ms past the first.
        for index in 0..<4 {
            try await TestModeTests.advance(daemon, by: index == 0 ? 1249 : 249)
            let early = await RawSocket.closes(of: Array(sockets[index...]), timeout: 0.2)
            #expect(early.allSatisfy { $0.at == nil }, "socket \(index): nothing 1 ms before its deadline")
            try await TestModeTests.advance(daemon, by: 1)
            let closes = await RawSocket.closes(of: [sockets[index]], timeout: 30)
            #expect(closes[0].code == 1008, "socket \(index): \(String(describing: closes[0].code))")
            if index < 3 {
                let others = await RawSocket.closes(of: Array(sockets[(index + 1)...]), timeout: 0.2)
                #expect(others.allSatisfy { $0.at == nil }, "the sockets opened after \(index) stay")
            }
        }
    }

    /// Issue 20: one address cycling unjoined sockets (each reopened as soon as
    /// roomd closed it) held every socket roomd could open. Under `ulimit -n
    /// 256` 0 of 60 legitimate joins succeeded in 30 s in the issue's probe
    /// (2 here, each in a moment the join deadline freed a socket), and
    /// /healthz and /metrics could not connect. Once the budget is short (3/4
    /// of it held), an address holding `max_unjoined_per_address` (64 by
    /// default, loopback too) unjoined connections makes room for its newcomers
    /// from its own longest idle: it holds no more, and the others get in.
    /// (Issue 34: until then its newcomers were refused at accept, whatever
    /// the budget; now they replace its own idle ones, counted the same.)
    @Test func oneAddressCyclingUnjoinedSocketsLocksNobodyOut() async throws {
        // 256 open files: a budget of 192 sockets (64 kept in reserve). On the
        // manual clock: the join deadline frees no socket (only the cap lets
        // joins in), and a loaded machine cannot make a join miss it.
        let daemon = try await Daemon.start(
            settings: #"{"limits":{"join_timeout_s":10}}"#,
            arguments: TestModeTests.manualClock,
            limits: ["-n 256"]
        )
        let (early, _) = try await daemon.join("early", as: "host")
        let flood = SocketFlood(port: daemon.port, from: "127.0.0.2", sockets: 200)
        defer { flood.stop() }
        #expect(try await flood.waitUntilLive(64, timeout: 10), "the flood holds its share")
        try await Task.sleep(for: .milliseconds(500))

        // Every legitimate join gets in. A loaded machine (many tests at once on
        // 2 cores, the flood spinning) makes each slow, so each has a minute:
        // what is asserted is that none is locked out, not how fast they are.
        var peers: [RoomClient] = []
        for n in 0..<20 { peers.append(try await daemon.join("u\(n)", as: "viewer", timeout: .seconds(60)).client) }
        #expect(try await healthStatusLine(port: daemon.port) == "HTTP/1.1 200 OK", "/healthz answers")
        let refused = try Self.metric(#"roomd_unjoined_dropped_total{reason="per_address"}"#, port: daemon.port)
        #expect((refused ?? 0) > 0, "refusals are counted in /metrics: \(String(describing: refused))")
        #expect(try await early.call("ping")["server_time"] != nil, "a peer joined before the flood is served")
        let logged = daemon.stderr.contains("unjoined connections of one address at the limit")
        #expect(logged, "the refusals are logged")
    }

    /// Many unjoined connections reaching the socket budget (one address here,
    /// its cap raised; the same as many addresses): each newcomer makes room by
    /// closing the oldest unjoined connection of the address that holds the
    /// most, so legitimate joins and /healthz still get in, and no joined peer
    /// is ever closed for a newcomer.
    @Test func atTheBudgetTheOldestUnjoinedMakeRoomAndJoinedPeersStay() async throws {
        let daemon = try await Daemon.start(  // the manual clock: as above
            settings: #"{"limits":{"join_timeout_s":10,"max_unjoined_per_address":100000}}"#,
            arguments: TestModeTests.manualClock,
            limits: ["-n 256"]
        )
        var early: [RoomClient] = []
        for n in 0..<20 { early.append(try await daemon.join("e\(n)", as: "viewer").client) }
        let flood = SocketFlood(port: daemon.port, from: "127.0.0.2", sockets: 250)
        defer { flood.stop() }
        #expect(try await flood.waitUntilLive(150, timeout: 10), "the flood fills the budget")
        try await Task.sleep(for: .milliseconds(500))

        // Every join at the budget gets in (each has a minute on a loaded machine; see above).
        var later: [RoomClient] = []
        for n in 0..<20 { later.append(try await daemon.join("l\(n)", as: "viewer", timeout: .seconds(60)).client) }
        #expect(try await healthStatusLine(port: daemon.port) == "HTTP/1.1 200 OK", "/healthz answers")
        let closed = try Self.metric(#"roomd_unjoined_dropped_total{reason="budget"}"#, port: daemon.port)
        #expect((closed ?? 0) > 0, "closings are counted in /metrics: \(String(describing: closed))")
        for (n, peer) in (early + later).enumerated() {
            #expect(try await peer.call("ping")["server_time"] != nil, "joined peer \(n) is still served")
        }
        #expect(flood.closedByDaemon.load(ordering: .relaxed) > 0)
    }

    /// On lws' own poll() loop (`ROOMD_EVENT_LOOP=poll`) lws accepts, and
    /// roomd admits in LWS_CALLBACK_FILTER_NETWORK_CONNECTION: the same cap,
    /// once the budget is short (issue 34: `ulimit -n 128`, a budget of 64,
    /// short from 48; the flood wants 60).
    @Test func thePerAddressCapHoldsOnLwsOwnPollLoopToo() async throws {
        let daemon = try await Daemon.start(
            settings: #"{"limits":{"max_unjoined_per_address":8}}"#,
            environment: ["ROOMD_EVENT_LOOP": "poll"],
            limits: ["-n 128"],
            singleProcess: true
        )
        let flood = SocketFlood(port: daemon.port, from: "127.0.0.2", sockets: 60)
        defer { flood.stop() }
        try await Task.sleep(for: .seconds(1))
        let (peer, _) = try await daemon.join("p", as: "viewer")
        #expect(try await peer.call("ping")["server_time"] != nil)
        let refused = try Self.metric(#"roomd_unjoined_dropped_total{reason="per_address"}"#, port: daemon.port)
        #expect((refused ?? 0) > 0, "refused beyond 8: \(String(describing: refused))")
        #expect(flood.closedByDaemon.load(ordering: .relaxed) > 0)
    }

    /// Issue 34: an attacker behind the same address as its victims (one
    /// NAT) held the address's 64 unjoined connections, and 0 of 60 joins
    /// from that address got in. With the budget far from short the cap does
    /// not apply: the 200 idle sockets are held, and every join gets in.
    @Test func idleSocketsBehindOneNATDoNotLockOutItsOtherClients() async throws {
        let daemon = try await Daemon.start(
            settings: #"{"limits":{"join_timeout_s":300}}"#,
            arguments: TestModeTests.manualClock
        )
        let flood = SocketFlood(port: daemon.port, from: "127.0.0.1", sockets: 200)
        defer { flood.stop() }
        #expect(
            try await flood.waitUntilLive(200, timeout: 10),
            "the idle sockets are held: \(flood.live.load(ordering: .relaxed))"
        )
        var peers: [RoomClient] = []
        for n in 0..<60 { peers.append(try await daemon.join("n\(n)", as: "viewer", timeout: .seconds(60)).client) }
        #expect(peers.count == 60)
        for (n, peer) in peers.enumerated() {
            #expect(try await peer.call("ping")["server_time"] != nil, "joined peer \(n) is served")
        }
    }

    /// Issue 34, the budget short (`ulimit -n 512`: a budget of 448, short
    /// from 336) and the attacker on the joiners' address wanting 346 idle
    /// sockets, reopening the closed ones every 2 s: each newcomer of the
    /// address, the attacker's or a joiner's, closes the address's
    /// longest-idle unjoined connection (the oldest last progress), never a
    /// joiner that is getting on with its join: 40 of 40 joins get in, and
    /// stay. The address's idle sockets turn over in ≥ 8 s here (≈ 290 held,
    /// ≤ 50 reopened a round), so a joiner that a loaded machine holds up for
    /// a second or two is still not the idlest; with 170 sockets reopened
    /// every 300 ms they turned over in ~1 s and a CI run lost a joiner. (An
    /// attacker reconnecting in a tight loop turns its address's slots over
    /// faster; PROTOCOL.md section 1 says what that leaves.)
    @Test func whenTheBudgetIsShortAnAddressMakesRoomFromItsOwnIdle() async throws {
        let daemon = try await Daemon.start(
            settings: #"{"limits":{"join_timeout_s":10}}"#,
            arguments: TestModeTests.manualClock,
            limits: ["-n 512"]
        )
        let flood = SocketFlood(port: daemon.port, from: "127.0.0.1", sockets: 346, paceMilliseconds: 2000)
        defer { flood.stop() }
        #expect(try await flood.waitUntilLive(326, timeout: 10), "the flood makes the budget short")
        var peers: [RoomClient] = []
        for n in 0..<40 { peers.append(try await daemon.join("n\(n)", as: "viewer", timeout: .seconds(60)).client) }
        #expect(try await healthStatusLine(port: daemon.port) == "HTTP/1.1 200 OK", "/healthz answers")
        let closed = try Self.metric(#"roomd_unjoined_dropped_total{reason="per_address"}"#, port: daemon.port)
        #expect((closed ?? 0) > 0, "the address's own idle sockets made room: \(String(describing: closed))")
        for (n, peer) in peers.enumerated() {
            #expect(try await peer.call("ping")["server_time"] != nil, "joined peer \(n) is still served")
        }
        let noticed = Date().addingTimeInterval(10)  // the attacker looks once a round
        while flood.closedByDaemon.load(ordering: .relaxed) == 0, Date() < noticed {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(flood.closedByDaemon.load(ordering: .relaxed) > 0)
    }

    /// Issue 34: a CDN or reverse proxy is one address. `wrk -c128` with
    /// keep-alive against a cached span got 316,488 read errors in 10 s: past
    /// 64 the connections were closed at accept. 200 kept connections from
    /// one address now get every body, twice each (the second on the kept
    /// connection).
    @Test func aProxyHoldsHundredsOfKeptFeedConnectionsFromOneAddress() async throws {
        let daemon = try await TestModeTests.manual(settings: #"{"feed":{"public":true}}"#)
        let (host, _) = try await daemon.join("h", as: "host")
        try await TestModeTests.advance(daemon, by: 2000)
        let start = TestModeTests.start / 1000
        let request = "GET /v2/rooms/room-1/feed?from=\(start)&to=\(start + 2) HTTP/1.1\r\nHost: cdn\r\n\r\n"
        let connections = try (0..<200).map { _ in try RawHTTPConnection(port: daemon.port) }
        for round in 0..<2 {
            for connection in connections { connection.send(request) }
            var bodies = 0
            for connection in connections {
                if let answer = await connection.answer(timeout: 10), answer.head.hasPrefix("http/1.1 200"),
                    answer.body.contains(#""room_id":"room-1""#)
                {
                    bodies += 1
                }
            }
            #expect(bodies == 200, "round \(round): \(bodies) of 200 kept connections got the body")
        }
        withExtendedLifetime(host) {}
    }

    @Test func atTheOpenFileLimitNewConnectionsAreRefusedWithoutSpinning() async throws {
        // 128 open files: a budget of 64 sockets (64 kept in reserve).
        let daemon = try await Daemon.start(limits: ["-n 128"])
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
        #expect(try await healthStatusLine(port: daemon.port) == "HTTP/1.1 200 OK", "it recovers once files free up")
        // Unjoined connections make room at the budget (the oldest goes), or the newcomer is refused.
        let refused = try Self.metric("roomd_accept_errors_total", port: daemon.port) ?? 0
        let closed = try Self.metric(#"roomd_unjoined_dropped_total{reason="budget"}"#, port: daemon.port) ?? 0
        #expect(refused + closed > 0)
        let warnings = daemon.stderr.components(separatedBy: "open-file limit reached").count - 1
        #expect(warnings >= 1 && warnings <= 4, "each of the two lines at most once a second: \(warnings)")

        // Every socket a joined peer: a newcomer is refused, no joined peer is closed for it.
        var peers = [host]
        var refusedJoins = 0
        while refusedJoins < 3, peers.count < 80 {
            if let (client, _) = try? await daemon.join("p\(peers.count)", as: "viewer", timeout: .seconds(5)) {
                peers.append(client)
            } else {
                refusedJoins += 1
            }
        }
        #expect(refusedJoins == 3 && peers.count <= 64, "joins stop at the budget: \(peers.count) peers")
        for (n, peer) in peers.enumerated() {
            #expect(try await peer.call("ping")["server_time"] != nil, "joined peer \(n) is still served")
        }
        let refusing = daemon.stderr.contains("open-file limit reached: refusing new connections")
        #expect(refusing, "refusals are logged")
    }

    /// The soft open-file limit of `pid` (from /proc, as prlimit would show it).
    static func softOpenFileLimit(_ pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") })
        else { return nil }
        return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).first.flatMap { Int($0) }
    }

    static func setSoftOpenFileLimit(_ pid: Int32, _ limit: Int) throws {
        let prlimit = try runTool("/usr/bin/prlimit", ["--pid", "\(pid)", "--nofile=\(limit):"])
        guard prlimit.status == 0 else {
            throw DaemonError(description: "prlimit failed: \(String(decoding: prlimit.stderr, as: UTF8.self))")
        }
    }

    /// The socket budget is fixed at start from the open-file limit, so running
    /// out of files below it (other files of the process, or an operator
    /// lowering the limit with prlimit, as here) makes accept() fail with
    /// EMFILE. roomd must not spin on the ready listener: it stops watching it
    /// until its once-a-second sweep, keeps serving its peers, and takes the
    /// waiting connections once files are free again.
    @Test func outOfFilesBelowTheBudgetPausesAcceptingWithoutSpinningAndResumes() async throws {
        let daemon = try await Daemon.start(singleProcess: true)
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
