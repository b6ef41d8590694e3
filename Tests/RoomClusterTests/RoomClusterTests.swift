import Foundation
import Logging
import RoomCluster
import RoomdTesting
import Synchronization
import Testing

/// RoomCluster against a real nats-server (JetStream on, free loopback ports).
@Suite(.serialized)
struct RoomClusterTests {
    static func node(_ id: NodeID, _ nats: NatsServerProcess, leaseTTL: Int64 = 3000) -> RoomCluster {
        var logger = Logger(label: "cluster-test")
        logger.logLevel = .critical
        let config = ClusterConfig(
            natsURL: nats.url,
            nodeID: id,
            heartbeatMillis: 200,
            leaseTTLMillis: leaseTTL,
            requestTimeoutMillis: 1000,
            reconnectWaitMillis: 100
        )
        let cluster = RoomCluster(config: config, logger: logger)
        cluster.start()
        return cluster
    }

    /// Polls `condition` every 20 ms for at most `seconds`.
    static func eventually(_ seconds: Double = 5, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }

    static func leases(_ node: RoomCluster) throws -> RoomLeases {
        guard eventually(5, { node.leases != nil }), let leases = node.leases else {
            throw ClusterTestError(description: "\(node.config.nodeID): lease bucket never bound")
        }
        return leases
    }

    @Test func nodesSeeEachOtherAndALeavingNodeIsDroppedAtOnce() throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        let a = Self.node("a", nats)
        let b = Self.node("b", nats)
        let c = Self.node("c", nats)
        defer {
            a.stop()
            b.stop()
        }
        #expect(
            Self.eventually { [a, b, c].allSatisfy { $0.status.connected && $0.status.nodes == 3 } },
            "\([a, b, c].map(\.status))"
        )
        c.stop()
        #expect(c.status.connected == false)
        // The leave message, not the 700 ms alive window: well within it.
        let started = Date()
        #expect(Self.eventually(2) { a.status.nodes == 2 && b.status.nodes == 2 })
        #expect(Date().timeIntervalSince(started) < 0.6)
    }

    @Test func aSilentNodeAgesOutOfTheCount() throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        let a = Self.node("a", nats)
        defer { a.stop() }
        #expect(Self.eventually { a.status.connected })
        // A node that sends one heartbeat and dies without a leave (like kill -9).
        let ghost = try rawPublish(nats, subject: "roomd.nodes.ghost", body: "up")
        #expect(Self.eventually(2) { a.status.nodes == 2 }, "\(ghost)")
        #expect(Self.eventually(3) { a.status.nodes == 1 })  // alive window: 3.5 heartbeats = 700 ms
    }

    @Test func aClaimIsExclusiveAndRenewalsFollowTheRevision() throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        let a = Self.node("a", nats)
        let b = Self.node("b", nats)
        defer {
            a.stop()
            b.stop()
        }
        let leasesA = try Self.leases(a)
        let leasesB = try Self.leases(b)
        guard case .claimed(let lease) = try leasesA.claim("show") else {
            Issue.record("a did not claim")
            return
        }
        #expect(lease.node == "a")
        #expect(try leasesB.claim("show") == .held(lease))
        #expect(try leasesB.holder(of: "show") == lease)
        let renewed = try #require(try leasesA.renew(lease))
        #expect(renewed.revision > lease.revision)
        // The old revision is stale: a renewal with it fails (as a takeover would make it).
        #expect(try leasesA.renew(lease) == nil)
        // b cannot renew or release a's lease.
        #expect(try leasesB.renew(renewed) == nil)
        #expect(try leasesB.release(renewed) == false)
        #expect(try leasesA.release(renewed) == true)
        #expect(try leasesA.holder(of: "show") == nil)
        guard case .claimed(let taken) = try leasesB.claim("show") else {
            Issue.record("b did not claim")
            return
        }
        #expect(taken.node == "b")
        #expect(try leasesA.renew(renewed) == nil)
        #expect(try leasesA.holder(of: "show")?.node == "b")
        // Another room is independent; a room id outside [A-Za-z0-9_-] gets an encoded key.
        guard case .claimed = try leasesA.claim("other room/ü") else {
            Issue.record("a did not claim another room")
            return
        }
        #expect(try leasesB.holder(of: "other room/ü")?.node == "a")
    }

    @Test func anUnrenewedLeaseExpiresAndAnotherNodeTakesOver() throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        let a = Self.node("a", nats, leaseTTL: 1000)
        let b = Self.node("b", nats, leaseTTL: 1000)
        defer {
            a.stop()
            b.stop()
        }
        let leasesA = try Self.leases(a)
        let leasesB = try Self.leases(b)
        #expect(leasesA.ttlMillis == 1000)
        guard case .claimed(let lease) = try leasesA.claim("show") else {
            Issue.record("a did not claim")
            return
        }
        // Renewed within the TTL, it stays a's.
        var current = lease
        for _ in 0..<3 {
            usleep(400_000)
            current = try #require(try leasesA.renew(current))
        }
        #expect(try leasesB.claim("show") == .held(current))
        // Not renewed: nats-server removes it after the TTL, and b's claim wins.
        var takenOver: RoomLease?
        #expect(
            Self.eventually(4) {
                if case .claimed(let lease) = try? leasesB.claim("show") { takenOver = lease }
                return takenOver != nil
            }
        )
        #expect(takenOver?.node == "b")
        #expect(try leasesA.renew(current) == nil)  // a learns it lost the room
    }

    @Test func racingClaimantsHaveExactlyOneWinner() throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        let nodes = (0..<4).map { Self.node(NodeID("n\($0)"), nats) }
        defer { for node in nodes { node.stop() } }
        let leases = try nodes.map { try Self.leases($0) }
        for round in 0..<5 {
            let room = "race-\(round)"
            let winners = Mutex<[NodeID]>([])
            DispatchQueue.concurrentPerform(iterations: leases.count) { i in
                if case .claimed(let lease) = try? leases[i].claim(room) { winners.withLock { $0.append(lease.node) } }
            }
            let won = winners.withLock { $0 }
            #expect(won.count == 1, "\(room): \(won)")
            #expect(try leases[0].holder(of: room)?.node == won.first)
        }
    }

    @Test func aBusOutageIsReportedAndRecoveredWithLeasesKept() throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        let statuses = Mutex<[ClusterStatus]>([])
        var logger = Logger(label: "cluster-test")
        logger.logLevel = .critical
        // A lease long enough to outlive the outage (a shorter one expires with it, as it should).
        let a = RoomCluster(
            config: ClusterConfig(
                natsURL: nats.url,
                nodeID: "a",
                heartbeatMillis: 200,
                leaseTTLMillis: 60_000,
                requestTimeoutMillis: 1000,
                reconnectWaitMillis: 100
            ),
            logger: logger
        ) { status in statuses.withLock { $0.append(status) } }
        a.start()
        let b = Self.node("b", nats, leaseTTL: 60_000)
        defer {
            a.stop()
            b.stop()
        }
        #expect(Self.eventually { a.status.connected && a.status.nodes == 2 })
        guard case .claimed(let lease) = try Self.leases(a).claim("show") else {
            Issue.record("no claim")
            return
        }

        nats.stop()
        #expect(Self.eventually(3) { !a.status.connected && !b.status.connected })
        #expect(a.status.nodes == 1)  // nobody else can be heard
        if let leases = a.leases {
            #expect(throws: ClusterError.self) { _ = try leases.claim("during-outage") }
        }

        try nats.start()
        #expect(
            Self.eventually(8) { a.status.connected && b.status.connected && a.status.nodes == 2 },
            "\(a.status) \(b.status)"
        )
        // The store survived the restart: the lease is still a's.
        #expect(try Self.leases(b).holder(of: "show") == lease)
        let renewed = try Self.leases(a).renew(lease)
        #expect(renewed != nil)
        let seen = statuses.withLock { $0.map(\.connected) }
        #expect(seen.contains(false) && seen.last == true, "\(seen)")
    }

    @Test func nodeToNodeMessagesArriveInOrderAndOnlyAtTheirNode() throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        var logger = Logger(label: "cluster-test")
        logger.logLevel = .critical
        let received = Mutex<[NodeID: [[UInt8]]]>([:])
        func node(_ id: NodeID) -> RoomCluster {
            let config = ClusterConfig(
                natsURL: nats.url,
                nodeID: id,
                heartbeatMillis: 200,
                requestTimeoutMillis: 1000,
                reconnectWaitMillis: 100
            )
            let cluster = RoomCluster(
                config: config,
                logger: logger,
                onMessage: { payload in
                    received.withLock { $0[id, default: []].append(payload) }
                }
            )
            cluster.start()
            return cluster
        }
        let a = node("a")
        let b = node("b")
        let c = node("c")
        defer {
            a.stop()
            b.stop()
            c.stop()
        }
        #expect(Self.eventually { [a, b, c].allSatisfy { $0.status.connected && $0.status.nodes == 3 } })
        for i in 0..<1000 { try a.send(to: "b", Array("m\(i)".utf8)) }
        try a.send(to: "c", [0, 1, 2, 255])
        try a.send(to: "c", [])
        #expect(Self.eventually { received.withLock { ($0["b"]?.count ?? 0) == 1000 && ($0["c"]?.count ?? 0) == 2 } })
        let got = received.withLock { $0 }
        #expect(got["b"] == (0..<1000).map { Array("m\($0)".utf8) }, "every message, in the order sent")
        #expect(got["c"] == [[0, 1, 2, 255], []])
        #expect(got["a"] == nil, "a sender does not hear itself")
        // Bounds and bad ids are refused before anything is published.
        #expect(throws: ClusterError.self) {
            try a.send(to: "b", [UInt8](repeating: 1, count: RoomCluster.maxMessageBytes + 1))
        }
        #expect(throws: ClusterError.self) { try a.send(to: "b.>", [1]) }
        try a.send(to: "b", [UInt8](repeating: 7, count: RoomCluster.maxMessageBytes))
        #expect(Self.eventually { received.withLock { $0["b"]?.last?.count == RoomCluster.maxMessageBytes } })
        c.stop()
        #expect(throws: ClusterError.self) { try c.send(to: "a", [1]) }  // stopped
    }

    @Test func nothingHappensBeforeStartAndStopWithoutStartReturns() throws {
        var logger = Logger(label: "cluster-test")
        logger.logLevel = .critical
        let cluster = RoomCluster(config: ClusterConfig(natsURL: "nats://127.0.0.1:1", nodeID: "idle"), logger: logger)
        #expect(cluster.status == ClusterStatus(nodeID: "idle", nodes: 1, connected: false))
        #expect(cluster.leases == nil)
        #expect(throws: ClusterError.self) { try cluster.send(to: "other", [1]) }  // nothing to send on
        cluster.stop()
        cluster.start()  // after stop: stays stopped
        #expect(cluster.status.connected == false)
    }

    @Test func nodeIDsAndKeys() {
        #expect(ClusterConfig.isValidNodeID("node-1_a"))
        #expect(!ClusterConfig.isValidNodeID(""))
        #expect(!ClusterConfig.isValidNodeID("a.b"))
        #expect(!ClusterConfig.isValidNodeID(String(repeating: "x", count: 65)))
        #expect(ClusterConfig.defaultNodeID(hostName: "web-3.example.com", port: 7880) == "web-3-example-com-7880")
        let long = ClusterConfig.defaultNodeID(hostName: String(repeating: "h", count: 100), port: 65535)
        #expect(
            long.rawValue.utf8.count == 64 && long.rawValue.hasSuffix("-65535")
                && ClusterConfig.isValidNodeID(long.rawValue)
        )
        #expect(RoomLeases.key("room-1_A") == "room-1_A")
        #expect(RoomLeases.key("a.b") == "x.612e62")
        #expect(RoomLeases.key("a.b") != RoomLeases.key("a-b"))
    }
}

struct ClusterTestError: Error, CustomStringConvertible { var description: String }

/// Publishes one message with a bare NATS protocol exchange (CONNECT, PUB, PING/PONG).
func rawPublish(_ nats: NatsServerProcess, subject: String, body: String) throws -> String {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var timeout = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(nats.port).bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
    guard connected else { throw ClusterTestError(description: "cannot connect to nats") }
    let text = "CONNECT {\"verbose\":false}\r\nPUB \(subject) \(body.utf8.count)\r\n\(body)\r\nPING\r\n"
    _ = Array(text.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while !String(decoding: received, as: UTF8.self).contains("PONG") {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { break }
        received += buffer[0..<n]
    }
    return String(decoding: received, as: UTF8.self)
}
