import Foundation
import RoomClient
import RoomCluster
import RoomWire
import Testing

/// Every call is answered while a room's home is replaced (PROTOCOL.md
/// section 18, 1.2 wording): with its result once the new home has it, or
/// with 5003 — never left waiting. Three nodes on a real nats-server; the
/// room's home (n1) is killed with SIGKILL.
@Suite(.serialized) struct ClusterFailoverTests {
    typealias Cluster = ClusterRoutingTests.Cluster

    /// A call's answer: its result, or its error code.
    static func answer(
        _ client: RoomClient,
        _ method: String,
        _ params: JSON? = nil
    ) async throws -> Result<
        JSON, RoomClientError
    > {
        do {
            return .success(try await client.call(method, params, timeout: .seconds(25)))
        } catch let error as RoomClientError {
            if case .timeout = error { throw error }
            return .failure(error)
        }
    }

    /// A survivor's call reaches the home, which stops (SIGSTOP: it never
    /// answers) and is then killed: the survivor's node answers it 5003 once
    /// the home is counted out, and the survivor goes on in the taken-over room.
    @Test func aCallInFlightAtTheKillIsAnswered5003() async throws {
        let cluster = try await Cluster()
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (guest, _) = try await cluster.join("g", as: "guest", on: 1)
        defer { _ = host }
        try await cluster.waitUntilSaved(containing: #""user_id":"g""#)  // with the guest
        let home = cluster.nodes[0].process.processIdentifier
        kill(home, SIGSTOP)
        async let inFlight = Self.answer(guest, "broadcast", ["info": ["message": "at the kill"]])
        try await Task.sleep(for: .milliseconds(300))
        kill(home, SIGKILL)
        let started = Date()
        switch try await inFlight {
        case .failure(.rpc(let code, _, _)): #expect(code == 5003)
        case .failure(let error): Issue.record("the call failed with \(error), not 5003")
        case .success(let result): Issue.record("the stopped home answered \(result)")
        }
        #expect(Date().timeIntervalSince(started) < 15, "answered once the home was counted out")
        // The room lives on: the guest's calls are answered by the new home.
        let after = try await ClusterRoutingTests.eventually(guest, "broadcast", ["info": ["message": "after"]])
        #expect(after["message_id"] != nil)
    }

    /// The killed node's peer resumes on another node while its room is
    /// being taken over: its `join` waits out the takeover and is answered.
    @Test func aResumeOfTheDeadNodesPeerDuringTheTakeoverIsAnswered() async throws {
        let cluster = try await Cluster()
        defer { cluster.nats.remove() }
        let (host, hostID) = try await cluster.join("h", as: "host", on: 0)  // n1: home, and the host's node
        let (guest, _) = try await cluster.join("g", as: "guest", on: 1)
        defer { _ = (host, guest) }
        try await cluster.waitUntilSaved(containing: #""user_id":"g""#)
        _ = await cluster.nodes[0].stop(signal: SIGKILL)
        try await Task.sleep(for: .milliseconds(300))
        let again = try await RoomClient.connect(
            to: "ws://127.0.0.1:\(cluster.nodes[1].port)/ws",
            defaultTimeout: Daemon.waitTimeout
        )
        let token = try cluster.nodes[1].token(user: "h", role: "host")
        switch try await Self.answer(again, "join", ["token": .string(token), "peer_id": .string(hostID)]) {
        case .success(let result):
            #expect(result["resumed"] == true, "\(result)")
            #expect(result["peer"]?["peer_id"]?.stringValue == hostID)
        case .failure(let error):
            Issue.record("the resume failed: \(error)")
        }
    }

    /// A room ended with `lock: true` whose home dies: a `join` sent to
    /// another node during the takeover gets the lock's 40003.
    @Test func aJoinOfALockedRoomDuringTheTakeoverIsAnswered40003() async throws {
        let cluster = try await Cluster()
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        _ = try await host.call("end-room", ["reason": "the show is over", "lock": true])
        try await cluster.waitUntilSaved(containing: #""locked":true"#)
        _ = await cluster.nodes[0].stop(signal: SIGKILL)
        try await Task.sleep(for: .milliseconds(500))
        let late = try await RoomClient.connect(
            to: "ws://127.0.0.1:\(cluster.nodes[1].port)/ws",
            defaultTimeout: Daemon.waitTimeout
        )
        let token = try cluster.nodes[1].token(user: "v", role: "viewer")
        switch try await Self.answer(late, "join", ["token": .string(token)]) {
        case .failure(.rpc(let code, _, _)): #expect(code == 40003)
        case .failure(let error): Issue.record("the join failed with \(error), not 40003")
        case .success(let result): Issue.record("joined a locked room: \(result)")
        }
    }

    /// Issue 20, item 3: a guest deleting one session-store key over and over
    /// (16,000 times, ~1.2 MB of tombstones before) no longer grows its
    /// room's saved state past the bound: the room is saved, and survives
    /// its home's death with its store.
    @Test func deletesOfOneKeyDoNotBloatTheSavedState() async throws {
        let cluster = try await Cluster(
            settings: #"{"limits":{"messages_per_second":1000000,"message_burst":1000000}}"#
        )
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (viewer, _) = try await cluster.join("v", as: "viewer", on: 2)
        defer { _ = host }
        _ = try await host.call("set-metadata", ["key": "topic", "value": "kept"])
        let guest = try RawSocket(port: cluster.nodes[1].port, readTimeoutSeconds: 20)
        let token = try cluster.nodes[1].token(user: "g", role: "guest")
        try guest.sendText(#"{"jsonrpc":"2.0","id":0,"method":"join","params":{"token":"\#(token)"}}"#)
        #expect(try JSON.parse(try #require(guest.readFrame()).payload)["result"]?["peer"] != nil)
        let key = String(repeating: "k", count: 64)
        let batch =
            "["
            + (1...64).map {
                #"{"jsonrpc":"2.0","id":\#($0),"method":"set-metadata","params":{"key":"\#(key)","value":null}}"#
            }
            .joined(separator: ",") + "]"
        let batches = 250  // 16,000 deletes
        try guest.sendTexts(Array(repeating: batch, count: batches))
        var answered = 0
        while answered < batches, let frame = await guest.readFrame() {
            if (try? JSON.parse(frame.payload))?.arrayValue?.count == 64 { answered += 1 }
        }
        #expect(answered == batches)
        try await cluster.waitUntilSaved(containing: key)  // a state after the deletes (their tombstone)
        #expect(!cluster.nodes[0].stderr.contains("room state not saved"))
        _ = await cluster.nodes[0].stop(signal: SIGKILL)
        let topic = try await ClusterRoutingTests.eventually(viewer, "get-metadata", ["key": "topic"], within: 15)
        #expect(topic["value"] == "kept")
    }

    /// Issue 33: the save window is the 200-ms period plus the save's own
    /// time, which `/metrics` shows; a save later than 800 ms (nats-server
    /// stopped for 1.2 s: the call is answered, its state waits) is logged
    /// with the room, so an operator knows a `kill -9` of the home would
    /// lose more than the last second.
    @Test func aSaveThatTheBusHoldsUpIsMeasuredAndLoggedAsLate() async throws {
        let cluster = try await Cluster()
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        defer { _ = host }
        try await cluster.waitUntilSaved(containing: #""user_id":"h""#)
        let port = cluster.nodes[0].port
        let series = "roomd_cluster_state_save_seconds_count"
        #expect((try ResourceLimitTests.metric(series, port: port) ?? 0) > 0, "a save is measured")
        #expect(!cluster.nodes[0].stderr.contains("room state saved late"))
        let nats = try #require(cluster.nats.pid)
        // Stopped 1.2 s, at most 1.8 s however late this task runs: under the lease (3 s, renewed every 1 s).
        let stall = StoppedProcess(nats, atMost: 1.8)
        _ = try await host.call("set-metadata", ["key": "mark", "value": "during the stall"])  // answered
        try await Task.sleep(for: .milliseconds(1200))
        stall.resume()
        try await cluster.waitUntilSaved(containing: "during the stall")
        let deadline = ContinuousClock.now + .seconds(10)
        while !cluster.nodes[0].stderr.contains("room state saved late"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let line = cluster.nodes[0].stderr.split(separator: "\n").first { $0.contains("room state saved late") }
        #expect(line?.contains("room=room-1") == true, "logged with the room: \(String(describing: line))")
        let late = try ResourceLimitTests.metric(#"roomd_cluster_state_save_seconds_bucket{le="0.8"}"#, port: port)
        let all = try ResourceLimitTests.metric(series, port: port)
        #expect(late != nil && all != nil && late! < all!, "the late save is above the 0.8-s bucket")
    }

    /// What a node holds of its rooms' saved state is on `/metrics`
    /// (`roomd_cluster_room_state_bytes`, to set its RSS against): the
    /// home counts the room's 50 KB of chat, the other nodes nothing; after
    /// a `kill -9` of the home, the node that took the room over counts
    /// what it restored.
    @Test func theRoomStateANodeHoldsIsAGauge() async throws {
        let cluster = try await Cluster(
            settings: #"{"limits":{"messages_per_second":1000000,"message_burst":1000000}}"#
        )
        defer { cluster.nats.remove() }
        let series = "roomd_cluster_room_state_bytes"
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (viewer, _) = try await cluster.join("v", as: "viewer", on: 2)
        defer { _ = host }
        let text = String(repeating: "y", count: 1000)
        for n in 0..<50 { _ = try await host.call("broadcast", ["info": ["message": .string("\(n) \(text)")]]) }
        try await cluster.waitUntilSaved(containing: "49 yyy")
        let onHome = try #require(try ResourceLimitTests.metric(series, port: cluster.nodes[0].port))
        #expect(onHome > 50_000 && onHome < 200_000, "\(onHome)")
        #expect(try ResourceLimitTests.metric(series, port: cluster.nodes[2].port) == 0)
        _ = await cluster.nodes[0].stop(signal: SIGKILL)
        _ = try await ClusterRoutingTests.eventually(viewer, "chat-history", ["limit": 1], within: 15)
        let taken = [
            try ResourceLimitTests.metric(series, port: cluster.nodes[1].port) ?? 0,
            try ResourceLimitTests.metric(series, port: cluster.nodes[2].port) ?? 0,
        ]
        #expect(taken.filter { $0 > 50_000 }.count == 1, "the new home holds the room: \(taken)")
        #expect(taken.filter { $0 == 0 }.count == 1, "the other holds nothing: \(taken)")
    }

    /// 1.2, section 19: the chat history and the pin belong to the room
    /// session and survive a takeover; 1.3: whole — 1,200 messages of 4 KiB
    /// (4.8 MB, before 1.3 the newest 512 KiB were kept: ~130).
    @Test func theChatHistoryAndItsPinSurviveATakeover() async throws {
        let cluster = try await Cluster(
            settings:
                #"{"chat":{"history_size":2000},"limits":{"messages_per_second":1000000,"message_burst":1000000}}"#
        )
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (viewer, _) = try await cluster.join("v", as: "viewer", on: 2)
        defer { _ = host }
        let long = String(repeating: "x", count: 4000)
        var ids: [String] = []
        for n in 0..<1200 {
            let sent = try await host.call("broadcast", ["info": ["message": .string("\(n) \(long)")]])
            ids.append(try #require(sent["message_id"]?.stringValue))
        }
        try await host.pinMessage(ids[150])
        try await host.deleteMessage(ids[1199])
        _ = try await host.call("set-metadata", ["key": "mark", "value": "after the delete"])
        try await cluster.waitUntilSaved(containing: "after the delete")
        #expect(!cluster.nodes[0].stderr.contains("room state not saved"))
        _ = await cluster.nodes[0].stop(signal: SIGKILL)
        // A page holds a quarter of max_outbound_bytes (~60 of these): page back to the oldest kept.
        var page = try await ClusterRoutingTests.eventually(viewer, "chat-history", ["limit": 200], within: 15)
        var texts = (page["messages"]?.arrayValue ?? []).compactMap { $0["info"]?["message"]?.stringValue }
        while page["more"] == true, let first = page["messages"]?[0]?["message_id"] {
            page = try await viewer.call("chat-history", ["before": first, "limit": 200])
            texts = (page["messages"]?.arrayValue ?? []).compactMap { $0["info"]?["message"]?.stringValue } + texts
        }
        #expect(texts.count == 1199, "\(texts.count) messages after the takeover")
        #expect(texts == (0..<1199).map { "\($0) \(long)" }, "every message, in order, less the deleted")
        let late = try await RoomClient.connect(
            to: "ws://127.0.0.1:\(cluster.nodes[1].port)/ws",
            defaultTimeout: Daemon.waitTimeout
        )
        let token = try cluster.nodes[1].token(user: "late", role: "guest")
        let joined = try await late.call("join", ["token": .string(token)])
        #expect(joined["chat"]?["pinned"]?["message_id"]?.stringValue == ids[150])
        #expect(joined["chat"]?["messages"]?.arrayValue?.count == 50)
    }

    /// 1.2, section 21: questions, their counts, votes and pin survive a takeover.
    @Test func questionsAndTheirVotesSurviveATakeover() async throws {
        let cluster = try await Cluster()
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (guest, _) = try await cluster.join("g", as: "guest", on: 1)
        let (viewer, _) = try await cluster.join("v", as: "viewer", on: 2)
        defer { _ = host }
        let asked = try await guest.askQuestion("still here?")
        let other = try await viewer.askQuestion("and me?")
        _ = try await viewer.voteQuestion(asked.questionID, .up)
        _ = try await host.updateQuestion(other.questionID, pinned: true)
        try await Task.sleep(for: .milliseconds(800))  // saved
        _ = await cluster.nodes[0].stop(signal: SIGKILL)
        let page = try await ClusterRoutingTests.eventually(viewer, "question-list", [:], within: 15)
        let texts = page["questions"]?.arrayValue?.map { $0["text"]?.stringValue }
        #expect(texts == ["and me?", "still here?"], "pinned first")
        #expect(page["questions"]?[1]?["up"] == 1)
        let again = try await viewer.voteQuestion(asked.questionID, .up)
        #expect(again.up == 1, "the viewer's vote is remembered: a repeat changes nothing")
    }

    /// 1.3: nothing is cut from a room's saved state — 1,000 questions of
    /// 300 bytes with a vote each survive a kill of their home, every one
    /// (before 1.3 the newest 128 KiB of questions were kept: ~300).
    @Test func aThousandQuestionsAndTheirVotesSurviveATakeoverWhole() async throws {
        let cluster = try await Cluster(
            settings: #"{"qa":{"max_questions":2000},"limits":{"messages_per_second":1000000,"message_burst":1000000}}"#
        )
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (guest, _) = try await cluster.join("g", as: "guest", on: 1)
        let (viewer, _) = try await cluster.join("v", as: "viewer", on: 2)
        defer { _ = host }
        let text = String(repeating: "q", count: 300)
        for n in 0..<1000 {
            let asked = try await guest.askQuestion("\(n) \(text)")
            _ = try await viewer.voteQuestion(asked.questionID, .up)
        }
        _ = try await host.call("set-metadata", ["key": "mark", "value": "after the votes"])
        try await cluster.waitUntilSaved(containing: "after the votes")
        _ = await cluster.nodes[0].stop(signal: SIGKILL)
        var page = try await ClusterRoutingTests.eventually(
            viewer,
            "question-list",
            ["order": "new", "limit": 100],
            within: 15
        )
        #expect(page["total"] == 1000)
        var seen: [String] = []
        var ups = 0
        while true {
            let questions = page["questions"]?.arrayValue ?? []
            seen += questions.compactMap { $0["text"]?.stringValue }
            ups += questions.filter { $0["up"] == 1 }.count
            if questions.isEmpty || seen.count >= 1000 { break }
            page = try await viewer.call("question-list", ["order": "new", "limit": 100, "offset": .int(seen.count)])
        }
        #expect(seen == (0..<1000).reversed().map { "\($0) \(text)" }, "every question, newest first")
        #expect(ups == 1000, "every vote")
    }

    /// Reactions (section 20) belong to the room session: totals and each
    /// user's own count survive a kill of the home, and the new home pushes on.
    @Test func reactionsAndEachUsersOwnCountSurviveATakeover() async throws {
        let cluster = try await Cluster(settings: #"{"reactions":{"interval_ms":100}}"#)
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (guest, _) = try await cluster.join("g", as: "guest", on: 1)
        let (viewer, _) = try await cluster.join("v", as: "viewer", on: 2)
        defer { _ = host }
        let id = try #require(try await guest.call("broadcast", ["info": ["message": "react"]])["message_id"])
        let like: JSON = ["target": id, "type": "like"]
        _ = try await guest.call("react", like)
        _ = try await viewer.call("react", like)
        _ = try await viewer.call("react", ["target": "stream", "type": "fire", "count": 9])
        _ = try await guest.call("react", ["target": "contestant:red", "type": "clap", "count": 3])
        try await Task.sleep(for: .milliseconds(800))  // pushed, and saved as pushed
        _ = (guest.drain(), viewer.drain())
        _ = await cluster.nodes[0].stop(signal: SIGKILL)
        let targets: JSON = ["targets": [id, "stream", "contestant:red"]]
        let after = try await ClusterRoutingTests.eventually(viewer, "reactions-get", targets, within: 15)
        #expect(
            after == [
                "counts": [
                    ["target": id, "type": "like", "total": 2, "mine": 1],
                    ["target": "stream", "type": "fire", "total": 9, "mine": 9],
                    ["target": "contestant:red", "type": "clap", "total": 3, "mine": 0],
                ]
            ]
        )
        #expect(try await viewer.call("react", like)["total"] == 2, "the viewer's reaction is still known")
        #expect(try await viewer.call("unreact", like)["total"] == 1)
        // The new home pushes what changed since, and nothing its peers had heard before the kill.
        let pushed = try await guest.next { event in if case .reactions(let counts) = event { counts } else { nil } }
        #expect(pushed == [ReactionCount(target: id.stringValue!, type: "like", total: 1)])
    }

    /// Issue 20 (found by the cluster soak): the home is killed and restarted
    /// with the same node id within the alive window (3.5 s), so the others
    /// never count it out. Its new run knows none of the old run's clients:
    /// the survivor's call in flight at the kill is still answered (5003),
    /// and the room is taken over and goes on.
    @Test func aCallInFlightWhenTheHomeRestartsAtOnceIsAnswered5003() async throws {
        let cluster = try await Cluster()
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (guest, _) = try await cluster.join("g", as: "guest", on: 1)
        defer { _ = host }
        try await cluster.waitUntilSaved(containing: #""user_id":"g""#)
        let home = cluster.nodes[0].process.processIdentifier
        kill(home, SIGSTOP)
        async let inFlight = Self.answer(guest, "broadcast", ["info": ["message": "at the kill"]])
        try await Task.sleep(for: .milliseconds(300))
        _ = await cluster.nodes[0].stop(signal: SIGKILL)
        let restarted = try await ClusterTests.node(cluster.nats, "n1")  // the same id, a new run, at once
        switch try await inFlight {
        case .failure(.rpc(let code, _, _)): #expect(code == 5003)
        case .failure(let error): Issue.record("the call failed with \(error), not 5003")
        case .success(let result): Issue.record("the stopped home answered \(result)")
        }
        let after = try await ClusterRoutingTests.eventually(guest, "broadcast", ["info": ["message": "after"]])
        #expect(after["message_id"] != nil)
        withExtendedLifetime(restarted) {}
    }

    /// Issue 20 (found by the cluster soak, a SIGSEGV in lws): clients that
    /// close while their room is being looked up (here: a lease left by a
    /// node that died, waited out) must not be touched when the lookup ends.
    @Test func clientsGoneWhileTheirRoomIsLookedUpAreLeftAlone() async throws {
        let cluster = try await Cluster(nodes: 1)
        defer { cluster.nats.remove() }
        let (ghost, leases) = try await ClusterRoutingTests.ghost(cluster.nats.url)
        _ = try leases.claim("orphan")
        ghost.stop()
        let node = cluster.nodes[0]
        let token = try node.token(room: "orphan", user: "e", role: "host")
        for _ in 0..<20 {
            let eager = try RawSocket(port: node.port, readTimeoutSeconds: 10)
            try eager.sendTexts([
                #"{"jsonrpc":"2.0","id":0,"method":"join","params":{"token":"\#(token)"}}"#,
                #"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            ])
        }  // each socket closes here (deinit): gone before the lookup ends (the lease expires within 3 s)
        try await Task.sleep(for: .seconds(5))
        #expect(node.process.isRunning, "the node is alive")
        let (client, _) = try await cluster.join("a", as: "host", on: 0, room: "orphan")
        #expect(try await client.call("ping")["server_time"] != nil)
    }
}
