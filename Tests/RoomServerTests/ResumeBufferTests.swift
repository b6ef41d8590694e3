import Foundation
import RoomClient
import RoomWire
import Testing

/// 1.3, section 29 (issue 33, item 3: "a phone on a train in a busy room"):
/// the reconnect grace holds `resume_buffer_bytes` of encoded pushes, not
/// 256 pushes, and the coalesced state pushes merge in the hold instead of
/// adding up. On the manual clock: every tick is a clock move, and the
/// grace cannot end by time while the test runs.
@Suite struct ResumeBufferTests {
    static let busy = """
        {"room":{"reconnect_grace_s":3600,"large_room_threshold":3,"room_state_interval_ms":1000},
         "chat":{"history_size":1000},
         "limits":{"messages_per_second":10000,"message_burst":10000}}
        """

    static func chat(_ text: String) -> String {
        #""method":"broadcast","params":{"info":{"message":"\#(text)"}}"#
    }

    static func resume(_ daemon: Daemon, user: String, role: String, peerID: JSON) async throws -> (RoomClient, JSON) {
        let again = try await daemon.client()
        let token = try daemon.token(user: user, role: role)
        return (again, try await again.call("join", ["token": .string(token), "peer_id": peerID]))
    }

    /// Twelve seconds of a busy room while the moderator's phone is in a
    /// tunnel: 300 chat messages (past the old 256), and every second a
    /// tick of reactions, questions, poll stats, speakers and room-state.
    /// The resumed moderator gets every message in order, then one push
    /// per coalesced kind carrying each key's newest state, then what is newer.
    @Test func aBusyGraceKeepsEveryMessageAndOneMergedPushPerKind() async throws {
        let daemon = try await TestModeTests.manualEverywhere(settings: Self.busy)
        let (host, _) = try await daemon.join("h", as: "host")
        let (guest, _) = try await daemon.join("g", as: "guest")
        let (moderator, joined) = try await daemon.join("m", as: "moderator")
        let moderatorID = try #require(joined["peer"]?["peer_id"])
        let (leaver, leaverJoin) = try await daemon.join("v0", as: "viewer")  // the room is large now
        let leaverID = try #require(leaverJoin["peer"]?["peer_id"]?.stringValue)
        _ = try await host.call("track-add", ["track_id": "h-mic", "type": "audio"])
        _ = try await guest.call("track-add", ["track_id": "g-mic", "type": "audio"])
        let target = try await ReactionTests.say(host, "react to me")
        let poll = try await PollTests.makePoll(
            host,
            ["title": "p", "type": "poll"],
            questions: [
                ["question": ["text": "a or b?", "type": "single-choice"], "options": [["text": "a"], ["text": "b"]]]
            ]
        )
        var voters: [RoomClient] = []
        for index in 0..<6 { voters.append(try await daemon.join("x\(index)", as: "viewer").client) }
        let q1 = try #require(try await guest.call("question-add", ["text": "first?"])["question_id"])
        // The moderator sees the host speak before its phone goes.
        _ = try await host.call("audio-level", ["levels": [["track_id": "h-mic", "level": 90]]])
        try await TestModeTests.advanceAll(daemon, by: 1000)
        _ = try await moderator.next("active-speakers", where: { $0["speaker-list"]?.arrayValue?.count == 1 })

        await moderator.abort()
        try await daemon.waitForGraces()
        var q2: JSON = .null
        var q3: JSON = .null
        var passer: RoomClient?
        var passerID = ""
        var stayerID = ""
        var stayer: RoomClient?
        for tick in 0..<12 {
            let texts = (0..<25).map { "c\(tick * 25 + $0)" }
            _ = try await ReactionTests.batch(host, texts.map(Self.chat))
            _ = try await ReactionTests.batch(
                host,
                [
                    ReactionTests.tap("stream", "fire", tick + 1),
                    ReactionTests.tap("contestant:c\(tick % 3)", "clap", 2),
                ]
            )
            if tick % 2 == 0 {
                _ = try await guest.call("react", ["target": .string(target), "type": "love"])
            } else {
                _ = try await guest.call("unreact", ["target": .string(target), "type": "love"])
            }
            _ = try await host.call("question-vote", ["question_id": q1, "vote": tick % 2 == 0 ? "up" : "down"])
            if tick < 6 {  // one vote each
                _ = try await voters[tick].call(
                    "poll-response",
                    ["poll_id": .string(poll), "responses": [["question": 1, "option": .int(tick % 2 + 1)]]]
                )
            }
            switch tick {
            case 1: q2 = try #require(try await guest.call("question-add", ["text": "second?"])["question_id"])
            case 2:
                let joinedNow = try await daemon.join("v1", as: "viewer")
                (passer, passerID) = (joinedNow.client, joinedNow.result["peer"]!["peer_id"]!.stringValue!)
            case 4:
                _ = try await guest.call("question-delete", ["question_id": q2])
                _ = try await passer!.call("leave")  // came and went within the grace: never named
            case 5:
                let joinedNow = try await daemon.join("v2", as: "viewer")
                (stayer, stayerID) = (joinedNow.client, joinedNow.result["peer"]!["peer_id"]!.stringValue!)
            case 6: q3 = try #require(try await voters[0].call("question-add", ["text": "third?"])["question_id"])
            case 8: _ = try await leaver.call("leave")
            default: break
            }
            // The host speaks until tick 6, then the guest alone.
            let speaker = tick < 6 ? ("h-mic", host) : ("g-mic", guest)
            _ = try await speaker.1.call("audio-level", ["levels": [["track_id": .string(speaker.0), "level": 70]]])
            try await TestModeTests.advanceAll(daemon, by: 1000)
        }
        // The newest state, as the room tells it now.
        let counts = try await host.call("reactions-get", ["targets": ["stream", .string(target), "contestant:c0"]])
        let questions = try #require(try await host.call("question-list", ["order": "new"])["questions"]?.arrayValue)
        let stats = try await host.call("poll-result", ["poll_id": .string(poll)])
        let peerCount = try await http("GET", daemon, "/v2/active-rooms/room-1", token: daemon.managementToken())
            .body["room"]?["peer_count"]

        let (again, resumed) = try await Self.resume(daemon, user: "m", role: "moderator", peerID: moderatorID)
        #expect(resumed["resumed"] == true, "the grace held: \(resumed)")
        _ = try await host.call("broadcast", ["info": ["message": "after"]])
        var pushes: [JSON] = []
        while true {
            let push = try await again.nextMessage()
            guard let method = push["method"]?.stringValue else { continue }
            if method == "on-broadcast", push["params"]?["info"]?["message"] == "after" { break }
            pushes.append(push)
        }
        func of(_ method: String) -> [JSON] { pushes.filter { $0["method"]?.stringValue == method } }
        let chat = of("on-broadcast").compactMap { $0["params"]?["info"]?["message"]?.stringValue }
        #expect(chat == (0..<300).map { "c\($0)" }, "every message, in order")

        // One on-reactions: each (target, type) once, with its newest total.
        let reactions = of("on-reactions")
        #expect(reactions.count == 1, "\(reactions.count) on-reactions")
        let merged = reactions.first?["params"]?["counts"]?.arrayValue ?? []
        let keys = merged.map { "\($0["target"]?.stringValue ?? "")/\($0["type"]?.stringValue ?? "")" }
        #expect(Set(keys).count == keys.count, "one entry per key: \(keys)")
        func total(_ target: String, _ type: String, in list: [JSON]) -> Int? {
            list.first { $0["target"]?.stringValue == target && $0["type"]?.stringValue == type }?["total"]?.intValue
        }
        let now = counts["counts"]?.arrayValue ?? []
        #expect(total("stream", "fire", in: merged) == total("stream", "fire", in: now))
        #expect(total("stream", "fire", in: merged) == (1...12).reduce(0, +))
        #expect(total("contestant:c0", "clap", in: merged) == 8)
        #expect(total(target, "love", in: merged) == 0, "the last tick took the love back: its newest total")
        #expect(keys.count == 5, "stream/fire, three contestants, the message: \(keys)")

        // One on-questions: q1 and q3 as they are now, q2 removed.
        let questionPushes = of("on-questions")
        #expect(questionPushes.count == 1, "\(questionPushes.count) on-questions")
        let changed = questionPushes.first?["params"]?["changed"]?.arrayValue ?? []
        #expect(Set(changed.compactMap { $0["question_id"]?.stringValue }) == Set([q1, q3].compactMap(\.stringValue)))
        for question in changed {
            #expect(questions.contains(question), "the newest state of \(question)")
        }
        #expect(questionPushes.first?["params"]?["removed"] == [q2])

        // One on-poll-stats of the poll: the newest.
        let pollStats = of("on-poll-stats")
        #expect(pollStats.count == 1, "\(pollStats.count) on-poll-stats")
        #expect(pollStats.first?["params"]?["user_count"] == stats["user_count"])
        #expect(pollStats.first?["params"]?["user_count"] == 6)

        // One active-speakers: the newest list (the guest alone).
        let speakers = of("active-speakers")
        #expect(speakers.count == 1, "\(speakers.count) active-speakers")
        #expect(speakers.first?["params"]?["speaker-list"]?[0]?["track_id"] == "g-mic")
        #expect(speakers.first?["params"]?["speaker-list"]?.arrayValue?.count == 1)

        // One room-state: the count now, v2 joined, v0 left; v1 came and went, so neither.
        let roomStates = of("room-state")
        #expect(roomStates.count == 1, "\(roomStates.count) room-state")
        let state = roomStates.first?["params"]
        #expect(state?["peer_count"] == peerCount)
        #expect(state?["joined"]?.arrayValue?.compactMap { $0["peer_id"]?.stringValue } == [stayerID])
        #expect(state?["left"] == [.string(leaverID)])
        #expect(!passerID.isEmpty)

        // Each merged push took the place of its newest: right after the
        // chat of the tick that made it (reactions and questions changed
        // every tick, the poll's last vote was at tick 5, the speakers
        // changed at tick 6, the last leave was at tick 8).
        func at(_ message: String) -> Int {
            pushes.firstIndex { $0["params"]?["info"]?["message"]?.stringValue == message } ?? -1
        }
        func place(_ method: String) -> Int { pushes.firstIndex { $0["method"]?.stringValue == method } ?? -1 }
        #expect(place("on-reactions") > at("c299") && place("on-questions") > at("c299"))
        #expect(place("on-poll-stats") > at("c149") && place("on-poll-stats") < at("c150"))
        #expect(place("active-speakers") > at("c174") && place("active-speakers") < at("c175"))
        #expect(place("room-state") > at("c224") && place("room-state") < at("c225"))
        withExtendedLifetime((leaver, stayer, voters)) {}
    }

    /// The pushes a resumed peer gets, up to a broadcast "after" sent now by `sender`.
    static func replayed(to again: RoomClient, sender: RoomClient) async throws -> [JSON] {
        _ = try await sender.call("broadcast", ["info": ["message": "after"]])
        var pushes: [JSON] = []
        while true {
            let push = try await again.nextMessage()
            guard push["method"] != nil else { continue }
            if push["method"] == "on-broadcast", push["params"]?["info"]?["message"] == "after" { return pushes }
            pushes.append(push)
        }
    }

    /// A held `on-reactions` forgets what a deletion or a clear made moot
    /// (the room pushes no count for those): after `message-delete` of one
    /// message and `chat-clear`, the one merged push has the stream's newest
    /// total alone, after the deletion and the clear.
    @Test func heldReactionsForgetDeletedAndClearedMessages() async throws {
        let daemon = try await TestModeTests.manualEverywhere(settings: #"{"room":{"reconnect_grace_s":3600}}"#)
        let (host, _) = try await daemon.join("h", as: "host")
        let (viewer, joined) = try await daemon.join("v", as: "viewer")
        let viewerID = try #require(joined["peer"]?["peer_id"])
        let first = try await ReactionTests.say(host, "first")
        let second = try await ReactionTests.say(host, "second")
        _ = try await viewer.next("on-broadcast")
        _ = try await viewer.next("on-broadcast")
        await viewer.abort()
        try await daemon.waitForGraces()
        for target in [first, second] { _ = try await host.call("react", ["target": .string(target), "type": "love"]) }
        _ = try await host.call("react", ["target": "stream", "type": "like"])
        try await TestModeTests.advanceAll(daemon, by: 1000)
        _ = try await host.call("message-delete", ["message_id": .string(first)])
        _ = try await host.call("react", ["target": "stream", "type": "like"])
        try await TestModeTests.advanceAll(daemon, by: 1000)
        _ = try await host.call("chat-clear")
        _ = try await host.call("react", ["target": "stream", "type": "like"])
        try await TestModeTests.advanceAll(daemon, by: 1000)

        let (again, resumed) = try await Self.resume(daemon, user: "v", role: "viewer", peerID: viewerID)
        #expect(resumed["resumed"] == true)
        let pushes = try await Self.replayed(to: again, sender: host)
        #expect(
            pushes.compactMap { $0["method"]?.stringValue } == ["on-message-delete", "on-chat-clear", "on-reactions"]
        )
        #expect(pushes.last?["params"]?["counts"] == [["target": "stream", "type": "like", "total": 3]])
    }

    /// A peer that was shown no speakers when its grace began, and whose
    /// held lists end empty, gets no `active-speakers` at all: the lists
    /// cancel out (never an empty list to a peer that has none, section 7).
    @Test func heldSpeakerListsThatEndEmptyCancelOut() async throws {
        let daemon = try await TestModeTests.manualEverywhere(settings: #"{"room":{"reconnect_grace_s":3600}}"#)
        let (host, _) = try await daemon.join("h", as: "host")
        let (viewer, joined) = try await daemon.join("v", as: "viewer")
        let viewerID = try #require(joined["peer"]?["peer_id"])
        _ = try await host.call("track-add", ["track_id": "h-mic", "type": "audio"])
        _ = try await viewer.next("on-track-add")
        await viewer.abort()
        try await daemon.waitForGraces()
        _ = try await host.call("audio-level", ["levels": [["track_id": "h-mic", "level": 80]]])
        try await TestModeTests.advanceAll(daemon, by: 1000)
        _ = try await host.next("active-speakers", where: { $0["speaker-list"]?.arrayValue?.count == 1 })
        try await TestModeTests.advanceAll(daemon, by: 1000)
        _ = try await host.next("active-speakers", where: { $0["speaker-list"] == [] })

        let (again, resumed) = try await Self.resume(daemon, user: "v", role: "viewer", peerID: viewerID)
        #expect(resumed["resumed"] == true)
        #expect(try await Self.replayed(to: again, sender: host).isEmpty)
    }

    /// The budget is bytes: 14 messages of 4 KiB (~60 KiB) stay within a
    /// 64-KiB `resume_buffer_bytes` after 200 ticks of reactions (merged:
    /// one push), two more end the grace at once: the others see the
    /// leave, and a resume is 41001.
    @Test func heldBytesPastTheBudgetEndTheGraceAtOnce() async throws {
        let daemon = try await TestModeTests.manualEverywhere(
            settings: """
                {"room":{"reconnect_grace_s":3600,"resume_buffer_bytes":65536},
                 "limits":{"messages_per_second":10000,"message_burst":10000}}
                """
        )
        let (host, _) = try await daemon.join("h", as: "host")
        let (viewer, joined) = try await daemon.join("v", as: "viewer")
        let viewerID = try #require(joined["peer"]?["peer_id"])
        _ = try await host.next("on-peer-join")
        await viewer.abort()
        try await daemon.waitForGraces()
        for _ in 0..<200 {
            _ = try await host.call("react", ["target": "stream", "type": "like"])
            try await TestModeTests.advanceAll(daemon, by: 1000)
        }
        let text = String(repeating: "x", count: 4000)
        for index in 0..<14 { _ = try await host.call("broadcast", ["info": ["message": .string("\(index)\(text)")]]) }
        #expect(
            await host.expectSilence(for: .milliseconds(300)).allSatisfy { $0["method"] != "on-peer-leave" },
            "200 ticks and ~60 KiB of chat are within 64 KiB"
        )
        for index in 14..<16 { _ = try await host.call("broadcast", ["info": ["message": .string("\(index)\(text)")]]) }
        let left = try await host.next("on-peer-leave")
        #expect(left == ["peer_id": viewerID, "reason": "websocket closed"])
        let late = try await daemon.client()
        let token = try daemon.token(user: "v", role: "viewer")
        #expect(try await late.errorCode("join", ["token": .string(token), "peer_id": viewerID]) == 41001)
    }

    /// `roomd_resume_buffer_bytes` counts what the node holds for peers in
    /// their grace (to set its RSS against): 0 with nobody away, the bytes
    /// of the held chat while a viewer is away, 0 again once it resumed.
    @Test func theHeldBytesAreAGaugeThatFallsBackWhenTheGraceEnds() async throws {
        let daemon = try await TestModeTests.manualEverywhere(settings: Self.busy)
        // Over 3 nodes (ROOMD_TEST_CLUSTER) the grace is held by the room's home: the nodes' sum.
        func held() throws -> Double {
            try (daemon.nodes.isEmpty ? [daemon] : daemon.nodes).reduce(0) {
                $0 + (try ResourceLimitTests.metric("roomd_resume_buffer_bytes", port: $1.port) ?? -1_000_000)
            }
        }
        let (host, _) = try await daemon.join("h", as: "host")
        let (viewer, joined) = try await daemon.join("v", as: "viewer")
        let viewerID = try #require(joined["peer"]?["peer_id"])
        #expect(try held() == 0)
        await viewer.abort()
        try await daemon.waitForGraces()
        let text = String(repeating: "x", count: 1000)
        for index in 0..<10 { _ = try await host.call("broadcast", ["info": ["message": .string("\(index)\(text)")]]) }
        let bytes = try held()
        #expect(
            bytes > 10 * 1000 && bytes < 10 * 1500,
            "10 pushes of ~1.3 KB (a 1,000-byte message, its ids and sender) held: \(bytes)"
        )
        let (_, resumed) = try await Self.resume(daemon, user: "v", role: "viewer", peerID: viewerID)
        #expect(resumed["resumed"] == true)
        #expect(try held() == 0)
    }

    /// `resume_buffer_bytes` out of 64 KiB..64 MiB stops roomd before it
    /// listens: exit 2 and the template error's line.
    @Test func aResumeBufferOutOfRangeStopsTheDaemon() throws {
        for (value, line) in [
            ("65535", "settings.room.resume_buffer_bytes: must be between 65536 and 67108864, got 65535"),
            ("67108865", "settings.room.resume_buffer_bytes: must be between 65536 and 67108864, got 67108865"),
        ] {
            let serve = try OperatorConfigTests.run(#"{"room":{"resume_buffer_bytes":\#(value)}}"#, checkOnly: false)
            #expect(serve.status == 2)
            #expect(serve.err.split(separator: "\n").contains(Substring(line)), "\(serve.err)")
            #expect(serve.out.isEmpty, "it never listened")
        }
        #expect(try OperatorConfigTests.run(#"{"room":{"resume_buffer_bytes":65536}}"#, checkOnly: true).status == 0)
    }
}

/// Section 29 over a cluster (section 18): a peer's grace lives on its
/// room's home, so the budget and the merges apply there, whichever node
/// the peer came through and comes back through.
@Suite(.serialized) struct ResumeBufferClusterTests {
    /// The viewer's node is killed (SIGKILL): the home counts it out and
    /// puts its peer in the grace; 300 messages and 12 reaction ticks later
    /// the viewer resumes through a third node and gets every message in
    /// order and one `on-reactions` with the newest total.
    @Test func aPeerWhoseNodeDiedResumesElsewhereWithEverythingHeld() async throws {
        let cluster = try await ClusterRoutingTests.Cluster(
            settings: """
                {"room":{"reconnect_grace_s":120},"reactions":{"interval_ms":100},
                 "limits":{"messages_per_second":10000,"message_burst":10000}}
                """
        )
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (viewer, viewerID) = try await cluster.join("v", as: "viewer", on: 1)
        _ = try await host.next("on-peer-join")
        _ = await cluster.nodes[1].stop(signal: SIGKILL)
        try await cluster.nodes[0].waitForLog("its clients' peers enter the reconnect grace")
        for round in 0..<12 {
            _ = try await ReactionTests.batch(host, (0..<25).map { ResumeBufferTests.chat("c\(round * 25 + $0)") })
            _ = try await host.call("react", ["target": "stream", "type": "fire"])
            let total = round + 1
            _ = try await host.next("on-reactions", where: { $0["counts"]?[0]?["total"]?.intValue == total })
        }
        let again = try await RoomClient.connect(
            to: "ws://127.0.0.1:\(cluster.nodes[2].port)/ws",
            defaultTimeout: Daemon.waitTimeout
        )
        let token = try cluster.nodes[2].token(user: "v", role: "viewer")
        let resumed = try await again.call("join", ["token": .string(token), "peer_id": .string(viewerID)])
        #expect(resumed["resumed"] == true, "the grace held: \(resumed)")
        _ = try await host.call("broadcast", ["info": ["message": "after"]])
        var pushes: [JSON] = []
        while true {
            let push = try await again.nextMessage()
            guard push["method"] != nil else { continue }
            if push["method"] == "on-broadcast", push["params"]?["info"]?["message"] == "after" { break }
            pushes.append(push)
        }
        let chat = pushes.filter { $0["method"] == "on-broadcast" }.compactMap {
            $0["params"]?["info"]?["message"]?.stringValue
        }
        #expect(chat == (0..<300).map { "c\($0)" }, "every message, in order")
        let reactions = pushes.filter { $0["method"] == "on-reactions" }
        #expect(reactions.count == 1, "\(reactions.count) on-reactions")
        #expect(reactions.first?["params"]?["counts"] == [["target": "stream", "type": "fire", "total": 12]])
        withExtendedLifetime(viewer) {}
    }

    /// The room's home is killed: the node that takes the room over holds
    /// the pushes of every restored peer with the same budget. The dead
    /// node's viewer resumes through a third node after 300 messages.
    @Test func aTakenOverRoomHoldsTheDeadHomesPeersPushesByBytes() async throws {
        let cluster = try await ClusterRoutingTests.Cluster(
            settings: """
                {"room":{"reconnect_grace_s":120},"limits":{"messages_per_second":10000,"message_burst":10000}}
                """
        )
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (viewer, viewerID) = try await cluster.join("v", as: "viewer", on: 0)
        let (guest, _) = try await cluster.join("g", as: "guest", on: 1)
        try await cluster.waitUntilSaved(containing: #""user_id":"g""#)
        _ = await cluster.nodes[0].stop(signal: SIGKILL)
        // Answered once the room is taken over (a read: no retry pushes twice).
        _ = try await ClusterRoutingTests.eventually(guest, "reactions-get", ["targets": ["stream"]], within: 20)
        for round in 0..<12 {
            _ = try await ReactionTests.batch(guest, (0..<25).map { ResumeBufferTests.chat("c\(round * 25 + $0)") })
        }
        let again = try await RoomClient.connect(
            to: "ws://127.0.0.1:\(cluster.nodes[2].port)/ws",
            defaultTimeout: Daemon.waitTimeout
        )
        let token = try cluster.nodes[2].token(user: "v", role: "viewer")
        let resumed = try await again.call("join", ["token": .string(token), "peer_id": .string(viewerID)])
        #expect(resumed["resumed"] == true, "the grace held: \(resumed)")
        let pushes = try await ResumeBufferTests.replayed(to: again, sender: guest)
        let chat = pushes.filter { $0["method"] == "on-broadcast" }.compactMap {
            $0["params"]?["info"]?["message"]?.stringValue
        }
        #expect(chat == (0..<300).map { "c\($0)" }, "every message, in order")
        withExtendedLifetime((host, viewer)) {}
    }
}
