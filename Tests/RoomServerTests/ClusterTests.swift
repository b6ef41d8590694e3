import Foundation
import RoomClient
import RoomWire
import RoomdTesting
import Testing

/// `roomd --cluster` (PROTOCOL.md section 18), first slice: nodes on a real
/// nats-server see each other; a bus outage refuses joins (5003) and fails
/// `/healthz` (503) while local peers keep working; the bus coming back
/// heals both. Rooms are not routed across nodes yet (docs/CLUSTER.md).
@Suite(.serialized) struct ClusterTests {
    static func node(_ nats: NatsServerProcess, _ id: String?) async throws -> Daemon {
        try await Daemon.start(arguments: ["--cluster", nats.url] + (id.map { ["--node-id", $0] } ?? []))
    }

    static func healthz(_ daemon: Daemon) async throws -> (status: Int, body: JSON) {
        try await http("GET", daemon, "/healthz")
    }

    /// Polls `/healthz` every 50 ms until `accept` holds (at most `seconds`); returns the last answer.
    static func healthz(
        _ daemon: Daemon,
        within seconds: Double = 8,
        until accept: (Int, JSON) -> Bool
    ) async throws -> (status: Int, body: JSON) {
        let deadline = Date().addingTimeInterval(seconds)
        var last = try await healthz(daemon)
        while !accept(last.status, last.body), Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
            last = try await healthz(daemon)
        }
        return last
    }

    static func up(nodes: Int) -> (Int, JSON) -> Bool {
        { status, body in
            status == 200 && body["cluster"]?["connected"] == .bool(true)
                && body["cluster"]?["nodes"]?.intValue == nodes
        }
    }

    static let down: @Sendable (Int, JSON) -> Bool = { status, body in
        status == 503 && body["cluster"]?["connected"] == .bool(false)
    }

    @Test func nodesSeeEachOtherAndALeavingNodeIsNoLongerCounted() async throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        var nodes: [Daemon] = []
        for id in ["n1", "n2", "n3"] { nodes.append(try await Self.node(nats, id)) }
        for (id, node) in zip(["n1", "n2", "n3"], nodes) {
            let health = try await Self.healthz(node, until: Self.up(nodes: 3))
            #expect(health.status == 200, "\(id): \(health.body) \(node.stderr)")
            #expect(health.body["status"] == "ok")
            #expect(
                health.body["cluster"] == ["node_id": .string(id), "nodes": 3, "connected": true],
                "\(health.body)"
            )
        }
        #expect(await nodes[2].stop().status == 0)
        for node in nodes.prefix(2) {
            let health = try await Self.healthz(node, within: 3, until: Self.up(nodes: 2))
            #expect(health.body["cluster"]?["nodes"] == 2, "\(health.body)")
        }
    }

    @Test func aKilledNodeIsCountedOutAfterItsHeartbeatsStop() async throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        let a = try await Self.node(nats, "a")
        let b = try await Self.node(nats, "b")
        for node in [a, b] { _ = try await Self.healthz(node, until: Self.up(nodes: 2)) }
        let killed = Date()
        _ = await b.stop(signal: SIGKILL)
        let health = try await Self.healthz(a, within: 8, until: Self.up(nodes: 1))
        #expect(health.body["cluster"]?["nodes"] == 1, "\(health.body)")
        // No leave message: the 3.5 s alive window (plus up to a heartbeat) decides.
        #expect(Date().timeIntervalSince(killed) > 2.5)
        // Restarted with the same id, it is counted again.
        let again = try await Self.node(nats, "b")
        for node in [a, again] { _ = try await Self.healthz(node, until: Self.up(nodes: 2)) }
        #expect(try await Self.healthz(again).body["cluster"] == ["node_id": "b", "nodes": 2, "connected": true])
    }

    @Test func twoProcessesWithOneNodeIDAreLogged() async throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        let first = try await Self.node(nats, "same")
        let second = try await Self.node(nats, "same")
        let deadline = Date().addingTimeInterval(5)
        let message = "another process uses this node id"
        while Date() < deadline, !(first.stderr.contains(message) && second.stderr.contains(message)) {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(first.stderr.contains(message) && second.stderr.contains(message), "\(first.stderr)")
        #expect(first.stderr.components(separatedBy: message).count - 1 == 1, "at most one line per 10 s")
    }

    @Test func aBusOutageRefusesJoinsKeepsLocalPeersWorkingAndRecovers() async throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        let a = try await Self.node(nats, "a")
        let b = try await Self.node(nats, "b")
        for node in [a, b] { _ = try await Self.healthz(node, until: Self.up(nodes: 2)) }
        let host = try await a.join("h", as: "host")
        let guest = try await a.join("g", as: "guest")
        try await Task.sleep(for: .milliseconds(100))
        _ = host.client.drain()

        nats.stop()
        for node in [a, b] {
            let health = try await Self.healthz(node, within: 5, until: Self.down)
            #expect(health.status == 503, "\(health.body)")
            #expect(health.body["status"] == "cluster unavailable")
            #expect(health.body["cluster"]?["connected"] == false)
            #expect(health.body["cluster"]?["nodes"] == 1, "nobody else can be heard")
            #expect(health.body["peers"]?.intValue == (node === a ? 2 : 0))
        }
        // New joins are refused on every node…
        for node in [a, b] {
            let client = try await node.client()
            let token = try node.token(user: "late", role: "guest")
            let failure = try await client.failure("join", ["token": .string(token)])
            #expect(failure.code == 5003, "\(failure)")
            #expect(failure.message.contains("cluster unavailable"))
        }
        // …while the peers already joined keep working where they are.
        let pong = try await guest.client.call("ping", ["timestamp": 7])
        #expect(pong["timestamp"] == 7)
        _ = try await guest.client.call("broadcast", ["info": ["message": "still here"]])
        #expect(try await host.client.next("on-broadcast")["info"]?["message"] == "still here")

        try nats.start()
        for node in [a, b] {
            let health = try await Self.healthz(node, within: 10, until: Self.up(nodes: 2))
            #expect(health.status == 200, "\(health.body) \(node.stderr.suffix(2000))")
            #expect(health.body["status"] == "ok")
        }
        let late = try await b.join("late", as: "guest")
        #expect(late.result["peer"]?["peer_id"]?.stringValue?.isEmpty == false)
        #expect(a.stderr.contains("cluster: bus unreachable") && a.stderr.contains("cluster: bus connected"))
    }

    @Test func aNodeStartedWithoutItsBusServesNoJoinsUntilTheBusAnswers() async throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        nats.stop()
        let node = try await Self.node(nats, "early")
        let health = try await Self.healthz(node)
        #expect(health.status == 503)
        #expect(health.body["cluster"] == ["node_id": "early", "nodes": 1, "connected": false])
        let client = try await node.client()
        #expect(
            try await client.errorCode("join", ["token": .string(try node.token(user: "u", role: "guest"))]) == 5003
        )
        // Bad params and bad tokens still get their own codes first.
        #expect(try await client.errorCode("join", ["token": "x"]) == 2004)
        try nats.start()
        _ = try await Self.healthz(node, within: 10, until: Self.up(nodes: 1))
        #expect(try await client.errorCode("join", ["token": .string(try node.token(user: "u", role: "guest"))]) == nil)
    }

    /// A node that just started accepts no connection before its bus is up
    /// (2 s at most): a client that connects at once (a load balancer's
    /// first pick after a restart) waits in the backlog, and its join is
    /// answered with a result, not 5003. nats-server is stopped (SIGSTOP)
    /// for the node's first 200 ms (the bus then needs ~1 s on a loaded CI
    /// machine: 500 ms once left it up only after the node's 2 s), timed by
    /// `StoppedProcess`'s thread: the tests' tasks share a cooperative pool of two
    /// threads here, which a loaded CI run (12 tests at once) held up for
    /// seconds, so a `Task.sleep` of 200 ms once resumed the bus after 2 s.
    @Test func aJoinSentAsTheNodeStartsWaitsForTheBusInsteadOf5003() async throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        let stopped = StoppedProcess(try #require(nats.pid), atMost: 30)
        let node: Daemon
        do { node = try await Self.node(nats, "fresh") } catch {
            stopped.resume()
            throw error
        }
        stopped.resume(after: 0.2)
        let token = try node.token(user: "u", role: "guest")
        let join = Task { () async throws -> Int? in
            let client = try await node.client()
            return try await client.errorCode("join", ["token": .string(token)])
        }
        #expect(try await join.value == nil, "the join waited for the bus: \(node.stderr.suffix(1500))")
        #expect(!node.stderr.contains("accepting connections (joins answer 5003"))
    }

    @Test func theNodeIDDefaultsToHostnameAndPortAndTheTemplateCanNameTheBus() async throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        let node = try await Daemon.start(settings: #"{"cluster":{"nats_url":"\#(nats.url)"}}"#, singleProcess: true)
        let health = try await Self.healthz(node, until: Self.up(nodes: 1))
        #expect(health.status == 200, "\(health.body)")
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, 255)
        let host = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" ? String($0) : "-" }.joined()
        #expect(
            health.body["cluster"]?["node_id"]?.stringValue == "\(host.prefix(64 - "-\(node.port)".count))-\(node.port)"
        )
        #expect(try Self.threadNames(node).contains { $0.hasPrefix("roomd-cluster") })
    }

    /// The names of the daemon's threads (Linux).
    static func threadNames(_ daemon: Daemon) throws -> [String] {
        let folder = "/proc/\(daemon.process.processIdentifier)/task"
        return try FileManager.default.contentsOfDirectory(atPath: folder).compactMap {
            try? String(contentsOfFile: "\(folder)/\($0)/comm", encoding: .utf8)
        }
    }

    @Test func withoutAClusterHealthzHasNoClusterAndNothingOfNATSIsLogged() async throws {
        let node = try await Daemon.start(singleProcess: true)
        let health = try await Self.healthz(node)
        #expect(health.status == 200)
        #expect(health.body["cluster"] == nil)
        #expect(!node.stderr.lowercased().contains("cluster"), "\(node.stderr)")
        #expect(try Self.threadNames(node).allSatisfy { !$0.hasPrefix("roomd-cluster") }, "no cluster thread")
    }

    @Test(arguments: [
        (["--cluster", "http://127.0.0.1:4222"], "--cluster: expected nats://HOST:PORT"),
        (["--cluster", "nats://127.0.0.1"], "--cluster: expected nats://HOST:PORT"),
        (["--cluster", "nats://127.0.0.1:0"], "--cluster: port: must be between 1 and 65535"),
        (["--cluster", "nats://user:pw@127.0.0.1:4222"], "--cluster: expected nats://HOST:PORT"),
        (["--cluster", "nats://127.0.0.1:4222", "--node-id", "a.b"], "--node-id: must be 1 to 64 characters"),
        (["--node-id", "alone"], "--node-id: needs --cluster"),
        (["--threads", "2"], "--threads: needs --cluster"),
        (["--reuse-port"], "--reuse-port: needs --cluster"),
        (["--cluster", "nats://127.0.0.1:4222", "--threads", "0"], "--threads: must be between 1 and 64"),
    ])
    func badClusterFlagsAreUsageErrors(arguments: [String], message: String) throws {
        let run = try runCommand(Daemon.binary, ["--config", Daemon.shippedConfig, "--port", "0"] + arguments)
        #expect(run.status == 64, "\(arguments): \(run.err)")
        #expect(run.err.contains(message), "\(run.err)")
        #expect(run.out.isEmpty)
    }

    /// The node ids that answer `GET /healthz` on `count` fresh TCP connections
    /// to `port` (the kernel spreads connections over the sockets sharing it).
    static func answeringNodes(port: Int, connections count: Int = 24) throws -> Set<String> {
        var ids: Set<String> = []
        for _ in 0..<count {
            let (response, _) = try rawExchange(
                port: port,
                Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
            )
            guard let body = response.components(separatedBy: "\r\n\r\n").last,
                let id = (try? JSON.parse(Array(body.utf8)))?["cluster"]?["node_id"]?.stringValue
            else { continue }
            ids.insert(id)
        }
        return ids
    }

    @Test func twoServiceThreadsShareOnePortAndTheirPeersMeetInOneRoom() async throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        let daemon = try await Daemon.start(
            arguments: ["--cluster", nats.url, "--node-id", "p", "--threads", "2"],
            singleProcess: true
        )
        _ = try await Self.healthz(daemon, until: Self.up(nodes: 2))
        // Both threads accept on the one port: 24 connections all landing on
        // one of two sockets has a chance of 2^-23.
        #expect(try Self.answeringNodes(port: daemon.port) == ["p-t1", "p-t2"], "\(daemon.stderr.suffix(3000))")
        // Eight peers, each on its own connection (so on either thread), in one room.
        var peers: [(client: RoomClient, result: JSON)] = []
        for index in 0..<8 { peers.append(try await daemon.join("u\(index)", as: index == 0 ? "host" : "guest")) }
        try await Task.sleep(for: .milliseconds(300))
        for peer in peers { _ = peer.client.drain() }
        _ = try await peers[0].client.call("broadcast", ["info": ["message": "to everyone"]])
        for peer in peers.dropFirst() {
            #expect(try await peer.client.next("on-broadcast")["info"]?["message"] == "to everyone")
        }
        #expect(
            daemon.stderr.contains("thread=1") && daemon.stderr.contains("thread=2"),
            "each thread's lines say which"
        )
        // /metrics is the whole process' whichever thread answers (a sibling's
        // gauges are at most a second old).
        try await Task.sleep(for: .milliseconds(1200))
        for _ in 0..<6 {
            let (response, _) = try await rawExchange(
                port: daemon.port,
                Array("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
            )
            let lines = Set(response.components(separatedBy: "\n"))
            #expect(lines.contains("roomd_peers 8"), "\(response.suffix(2000))")
            #expect(lines.contains("roomd_connections 8"))
            #expect(lines.contains(#"roomd_calls_total{method="join"} 8"#))
            #expect(lines.contains(#"roomd_calls_total{method="broadcast"} 1"#))
            #expect(response.components(separatedBy: "# TYPE roomd_peers gauge").count == 2, "one TYPE line per metric")
        }
        let stopped = await daemon.stop(timeout: 30)
        #expect(stopped.status == 0, "SIGTERM stops every thread (-1: it hung and was killed): \(stopped)")
    }

    @Test func reusePortLetsTwoNodesShareAPortAndWithoutItTheSecondCannotListen() async throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        let a = try await Daemon.start(
            arguments: ["--cluster", nats.url, "--node-id", "a", "--reuse-port"],
            singleProcess: true
        )
        let b = try await Daemon.start(
            arguments: ["--cluster", nats.url, "--node-id", "b", "--reuse-port", "--port", String(a.port)],
            singleProcess: true
        )
        #expect(b.port == a.port)
        for node in [a, b] { _ = try await Self.healthz(node, until: Self.up(nodes: 2)) }
        #expect(try Self.answeringNodes(port: a.port) == ["a", "b"])
        // Without --reuse-port the port stays the first node's alone.
        let run = try await runCommand(
            Daemon.binary,
            [
                "--config", Daemon.shippedConfig, "--port", String(a.port),
                "--cluster", nats.url, "--node-id", "c",
            ],
            environment: ["ROOMD_SECRET": String(repeating: "s", count: 40)],
            timeout: 10
        )
        #expect(run.status == 1, "\(run.err)")
        #expect(run.err.contains("cannot listen on 127.0.0.1:\(a.port)"), "\(run.err)")
        // A node that stops hands the port to the other.
        #expect(await b.stop().status == 0)
        #expect(try Self.answeringNodes(port: a.port, connections: 6) == ["a"])
    }

    @Test func sharingAPortOnThePollLoopIsAUsageError() throws {
        for flag in [["--threads", "2"], ["--reuse-port"]] {
            let run = try runCommand(
                Daemon.binary,
                [
                    "--config", Daemon.shippedConfig, "--port", "0",
                    "--cluster", "nats://127.0.0.1:4222",
                ] + flag,
                environment: ["ROOMD_EVENT_LOOP": "poll"]
            )
            #expect(run.status == 64, "\(flag): \(run.err)")
            #expect(run.err.contains("\(flag[0]): sharing a port needs the libev loop"), "\(run.err)")
        }
    }

    @Test func aBadNatsURLInTheTemplateNamesItsPath() throws {
        let text = try Daemon.mergeSettings(
            String(contentsOfFile: Daemon.shippedConfig, encoding: .utf8),
            #"{"cluster":{"nats_url":"nats:/x"}}"#
        )
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "roomd-cluster-\(UUID().uuidString).json"
        )
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try runCommand(Daemon.binary, ["check-config", file.path])
        #expect(run.status == 2)
        #expect(run.err.contains(#"settings.cluster.nats_url: expected nats://HOST:PORT, got "nats:/x""#), "\(run.err)")
    }
}
