import Foundation
import RoomClient
import RoomWire
import RoomdTesting
import Testing

/// A planned restart is not a crash (PROTOCOL.md section 18, 1.3 wording:
/// drain): SIGTERM on a node of a cluster hands every room it is home of to
/// another node with its whole state, answers every call with its result
/// (never 5003), closes its connections with 1012 so their peers resume
/// elsewhere, and exits 0. Real nats-server, real nodes, real sockets.
@Suite(.serialized) struct ClusterDrainTests {
    typealias Cluster = ClusterRoutingTests.Cluster

    /// Waits for a node's exit after a signal; its status.
    static func exitStatus(of daemon: Daemon, timeout: Double = 20) async -> Int32 {
        await daemon.stop(signal: SIGTERM, timeout: timeout).status
    }

    /// (a) A message the home answered just before its SIGTERM is in the
    /// room's history on the new home (a kill loses what the last 200-ms
    /// save did not take).
    @Test func aMessageAnsweredJustBeforeTheSigtermIsInTheNewHomesHistory() async throws {
        let cluster = try await Cluster()
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (viewer, _) = try await cluster.join("v", as: "viewer", on: 2)
        defer { _ = host }
        _ = try await host.call("broadcast", ["info": ["message": "early"]])
        try await cluster.waitUntilSaved(containing: "early")
        let sent = try await host.call("broadcast", ["info": ["message": "just before the SIGTERM"]])
        kill(cluster.nodes[0].process.processIdentifier, SIGTERM)
        let history = try await viewer.call("chat-history", ["limit": 10])
        let texts = (history["messages"]?.arrayValue ?? []).compactMap { $0["info"]?["message"]?.stringValue }
        #expect(texts == ["early", "just before the SIGTERM"], "\(history)")
        #expect(history["messages"]?[1]?["message_id"] == sent["message_id"])
        #expect(await Self.exitStatus(of: cluster.nodes[0]) == 0)
    }

    /// (b) A peer on another node sends a burst of broadcasts while the home
    /// drains: every one is answered with its result (a message id), none
    /// 5003, in order, and the viewer on the third node gets them all.
    @Test func aBurstOfBroadcastsDuringTheDrainIsAnsweredWithResults() async throws {
        let cluster = try await Cluster(
            settings: #"{"limits":{"messages_per_second":1000000,"message_burst":1000000}}"#
        )
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (viewer, _) = try await cluster.join("v", as: "viewer", on: 2)
        defer { _ = host }
        let guest = try RawSocket(port: cluster.nodes[1].port, readTimeoutSeconds: 30)
        let token = try cluster.nodes[1].token(user: "g", role: "guest")
        try guest.sendText(#"{"jsonrpc":"2.0","id":0,"method":"join","params":{"token":"\#(token)"}}"#)
        #expect(try JSON.parse(try #require(await guest.readFrame()).payload)["result"]?["peer"] != nil)
        let count = 400
        let burst = (1...count).map {
            #"{"jsonrpc":"2.0","id":\#($0),"method":"broadcast","params":{"info":{"message":"b\#($0)"}}}"#
        }
        try guest.sendTexts(Array(burst.prefix(100)))
        kill(cluster.nodes[0].process.processIdentifier, SIGTERM)
        try guest.sendTexts(Array(burst.dropFirst(100)))
        var answered: [Int] = []
        var errors: [String] = []
        while answered.count + errors.count < count, let frame = await guest.readFrame() {
            guard frame.opcode == 1, let message = try? JSON.parse(frame.payload), let id = message["id"]?.intValue
            else { continue }
            if message["result"]?["message_id"] != nil { answered.append(id) } else { errors.append("\(message)") }
        }
        #expect(errors.isEmpty, "\(errors.count) errors, the first: \(errors.first ?? "")")
        #expect(answered == Array(1...count), "every call answered with its result, in order")
        var pushed = 0
        while pushed < count {
            let push = try await viewer.next("on-broadcast")
            #expect(push["info"]?["message"]?.stringValue == "b\(pushed + 1)")
            pushed += 1
        }
        #expect(await Self.exitStatus(of: cluster.nodes[0]) == 0)
    }

    /// (c) The draining node's own peers are closed with 1012 and resume on
    /// another node, with their state (the room's store, their track). Read
    /// from a raw socket, and through RoomClient: Debian's lws 4.1 client
    /// rewrites a code above 1011 to 1002, and RoomClient reads the 1012
    /// back from its close text, "service restart".
    @Test func theDrainingNodesPeersAreClosed1012AndResumeElsewhere() async throws {
        let cluster = try await Cluster()
        defer { cluster.nats.remove() }
        let (host, joined) = try await Self.rawJoin(cluster.nodes[0], user: "h", role: "host")  // n1: home
        let hostID = try #require(joined["peer"]?["peer_id"]?.stringValue)
        let (guest, _) = try await cluster.join("g", as: "guest", on: 1)
        let (viewer, _) = try await cluster.join("v", as: "viewer", on: 0)
        _ = try await Self.rawCall(host, 1, "track-add", #"{"track_id":"h-cam","type":"video"}"#)
        _ = try await Self.rawCall(host, 2, "set-metadata", #"{"key":"topic","value":"drained"}"#)
        kill(cluster.nodes[0].process.processIdentifier, SIGTERM)
        let closed = await host.readCloseCode()
        #expect(closed == 1012)
        let (kitCode, kitReason) = try await viewer.closeStatus()
        #expect(kitCode == 1012, "RoomClient sees the drain's 1012 (\(kitCode) \(kitReason))")
        let again = try await RoomClient.connect(
            to: "ws://127.0.0.1:\(cluster.nodes[2].port)/ws",
            defaultTimeout: Daemon.waitTimeout
        )
        let token = try cluster.nodes[2].token(user: "h", role: "host")
        let resumed = try await again.call("join", ["token": .string(token), "peer_id": .string(hostID)])
        #expect(resumed["resumed"] == true, "\(resumed)")
        #expect(resumed["peer"]?["peer_id"]?.stringValue == hostID)
        #expect(try await again.call("get-metadata", ["key": "topic"])["value"] == "drained")
        let peers = try await guest.call("find-peer", ["limit": 10])
        #expect("\(peers)".contains("h-cam"), "the host's track is still there: \(peers)")
        #expect(await Self.exitStatus(of: cluster.nodes[0]) == 0)
    }

    /// (d) While a node drains, /healthz answers 503 "draining" and REST
    /// 503 with 5003. The drain is held by a client whose join went to a
    /// room's home that never answers (a bare cluster member holding the
    /// room's lease): the node closes it only once it is answered.
    @Test func healthzSaysDrainingAndRestIs503WhileTheNodeDrains() async throws {
        let cluster = try await Cluster(nodes: 1)  // the default --drain-timeout, 10 s: the hold ends before it
        defer { cluster.nats.remove() }
        let (ghost, leases) = try await ClusterRoutingTests.ghost(cluster.nats.url)
        defer { ghost.stop() }
        _ = try leases.claim("elsewhere")
        let node = cluster.nodes[0]
        _ = try await ClusterTests.healthz(node, until: ClusterTests.up(nodes: 2))
        let waiting = try RawSocket(port: node.port, readTimeoutSeconds: 30)
        let token = try node.token(room: "elsewhere", user: "w", role: "host")
        try waiting.sendText(#"{"jsonrpc":"2.0","id":0,"method":"join","params":{"token":"\#(token)"}}"#)
        try await node.waitForLog("cluster: looking a room up")  // read: its join is on its way
        kill(node.process.processIdentifier, SIGTERM)
        try await node.waitForLog("draining:")
        let health = try await ClusterTests.healthz(node)
        #expect(health.status == 503)
        #expect(health.body["status"] == "draining", "\(health.body)")
        let rest = try await http("GET", node, "/v2/active-rooms", token: try node.managementToken())
        #expect(rest.status == 503)
        #expect(rest.body["code"] == 5003, "\(rest.body)")
        // A feed GET on a kept connection, which roomd reads and answers itself (not lws): 503 too.
        let metrics = try await http("GET", node, "/metrics").body.stringValue ?? ""
        let direct = FeedTests.value("roomd_feed_answered_directly_total", in: metrics)
        let feed = try RawHTTPConnection(port: node.port)
        let viewer = try node.token(room: "elsewhere", user: "v", role: "viewer")
        feed.send(FeedDirectTests.get("/v2/rooms/elsewhere/feed?from=0&to=1", token: viewer))
        let drained = try #require(await feed.exactAnswer(timeout: 10))
        #expect(drained.head.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"), "\(drained.head)")
        #expect(try JSON.parse(drained.body)["code"] == 5003)
        let after = try await http("GET", node, "/metrics").body.stringValue ?? ""
        #expect(FeedTests.value("roomd_feed_answered_directly_total", in: after) == direct + 1, "roomd's own path")
        #expect(node.process.isRunning, "held by the unanswered join")
        ghost.stop()  // counted out: the join is answered (nobody can take the room), then the drain ends
        #expect(await Self.exitStatus(of: node) == 0)
    }

    /// (e) `--drain-timeout` out of 1..300 exits 64; without `--cluster` it
    /// is accepted and a single daemon shuts down as before (1001).
    @Test func drainTimeoutOutOfRangeExits64AndIsAcceptedWithoutACluster() async throws {
        for bad in ["0", "301"] {
            let run = try await runCommand(
                Daemon.binary,
                ["--config", Daemon.shippedConfig, "--port", "0", "--drain-timeout", bad]
            )
            #expect(run.status == 64, "--drain-timeout \(bad): \(run.err)")
            #expect(run.err.contains("--drain-timeout"))
        }
        let daemon = try await Daemon.start(arguments: ["--drain-timeout", "300"], singleProcess: true)
        let (host, _) = try await daemon.join("h", as: "host")
        let stopped = await daemon.stop()
        #expect(stopped.status == 0)
        #expect(try await host.closeCode() == 1001)
    }

    /// (f) The last node of a cluster saves its rooms before it exits (and
    /// closes 1012); a node started again on the same nats-server store
    /// finds the room as it was: the same session, its history.
    @Test func theLastNodeSavesAndARestartFindsTheRoom() async throws {
        let cluster = try await Cluster(nodes: 1)
        defer { cluster.nats.remove() }
        let (host, joined) = try await Self.rawJoin(cluster.nodes[0], user: "h", role: "host")
        let session = try #require(joined["room"]?["session_id"]?.stringValue)
        _ = try await Self.rawCall(host, 1, "broadcast", #"{"info":{"message":"before the stop"}}"#)
        kill(cluster.nodes[0].process.processIdentifier, SIGTERM)
        #expect(await host.readCloseCode() == 1012)
        #expect(await Self.exitStatus(of: cluster.nodes[0]) == 0)
        let restarted = try await ClusterTests.node(cluster.nats, "n1")
        _ = try await ClusterTests.healthz(restarted, until: ClusterTests.up(nodes: 1))
        let (_, again) = try await restarted.join("v", as: "viewer")
        #expect(again["room"]?["session_id"]?.stringValue == session)
        let texts = (again["chat"]?["messages"]?.arrayValue ?? []).compactMap { $0["info"]?["message"]?.stringValue }
        #expect(texts == ["before the stop"], "\(again)")
    }

    /// (f) Joins read during the drain, up to its last turn: clients of the
    /// draining node send their joins (to a room homed there and to one
    /// homed elsewhere) one after another, 2 ms apart, from the SIGTERM on.
    /// Every join read is answered with its result, never 5003 (the bus is
    /// up until the node exits); one not read gets the 1012 close and is
    /// sent again elsewhere. The node's log does not call its own leaving
    /// "bus unreachable".
    @Test func joinsReadUntilTheDrainsLastTurnAreAnsweredNever5003() async throws {
        let cluster = try await Cluster()
        defer { cluster.nats.remove() }
        let (host, _) = try await Self.rawJoin(cluster.nodes[0], user: "h", role: "host")  // room-1's home: n1
        let (other, _) = try await Self.rawJoin(cluster.nodes[1], user: "o", role: "host", room: "room-2")  // n2
        defer { _ = (host, other) }
        var clients: [(RawSocket, String)] = []
        for n in 0..<80 {
            let socket = try RawSocket(port: cluster.nodes[0].port, readTimeoutSeconds: 30)
            let token = try cluster.nodes[0].token(room: n % 2 == 0 ? "room-1" : "room-2", user: "u\(n)", role: "guest")
            clients.append((socket, #"{"jsonrpc":"2.0","id":1,"method":"join","params":{"token":"\#(token)"}}"#))
        }
        kill(cluster.nodes[0].process.processIdentifier, SIGTERM)
        for (socket, join) in clients {
            try? socket.sendText(join)
            usleep(2000)
        }
        var answered = 0
        for (socket, _) in clients {
            var close: Int?
            while let frame = await socket.readFrame() {
                if frame.opcode == 8 {
                    close = frame.payload.count >= 2 ? Int(frame.payload[0]) << 8 | Int(frame.payload[1]) : 1005
                    break
                }
                guard frame.opcode == 1, let message = try? JSON.parse(frame.payload), message["id"] != nil else {
                    continue
                }
                #expect(message["result"]?["peer"] != nil, "\(message)")
                answered += 1
            }
            #expect(close == 1012)
        }
        print("joins answered during the drain: \(answered) of \(clients.count), the others closed 1012")
        #expect(await Self.exitStatus(of: cluster.nodes[0]) == 0)
        #expect(cluster.nodes[0].stderr.contains("cluster: left"))
        #expect(!cluster.nodes[0].stderr.contains("bus unreachable"), "a node that leaves did not lose its bus")
    }

    /// `--threads 2`: both service threads drain; the process exits 0 and
    /// its peers are closed with 1012.
    @Test func everyServiceThreadDrains() async throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        let node = try await Daemon.start(arguments: ["--cluster", nats.url, "--node-id", "t", "--threads", "2"])
        _ = try await ClusterTests.healthz(node, until: ClusterTests.up(nodes: 2))
        var clients: [RawSocket] = []
        for n in 0..<4 {
            let (client, _) = try await Self.rawJoin(node, user: "u\(n)", role: "host", room: "r\(n)")
            clients.append(client)
        }
        let stopped = await node.stop(signal: SIGTERM, timeout: 20)
        #expect(stopped.status == 0)
        for client in clients { #expect(await client.readCloseCode() == 1012) }
    }

    /// Joins on a raw socket (its close code is read as sent); the join's result.
    static func rawJoin(
        _ daemon: Daemon,
        user: String,
        role: String,
        room: String = "room-1"
    ) async throws -> (RawSocket, JSON) {
        let socket = try RawSocket(port: daemon.port, readTimeoutSeconds: 30)
        let token = try daemon.token(room: room, user: user, role: role)
        return (socket, try await rawCall(socket, 0, "join", #"{"token":"\#(token)"}"#))
    }

    /// Sends a call on a raw socket and reads until its answer: the result.
    static func rawCall(_ socket: RawSocket, _ id: Int, _ method: String, _ params: String) async throws -> JSON {
        try socket.sendText(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#)
        while let frame = await socket.readFrame() {
            guard frame.opcode == 1, let message = try? JSON.parse(frame.payload), message["id"]?.intValue == id
            else { continue }
            return try #require(message["result"], "\(message)")
        }
        throw DaemonError(description: "no answer to \(method)")
    }
}
