import Foundation
import RoomClient
import RoomWire
import Testing

/// The guest call-in story end to end, as an app's test harness drives it:
/// roomd started from the shipped template on port 0, peers on real sockets
/// through the typed RoomClient SDK, the app backend on REST. Each step
/// checks what every peer received, and what it did not.
@Suite struct GuestCallInScenarioTests {
    /// Everything a client got within `window`, decoded.
    static func events(_ client: RoomClient, within window: Duration = .milliseconds(200)) async -> [RoomEvent] {
        await client.expectSilence(for: window).compactMap { RoomEvent.decode($0) }
    }

    /// On test mode's manual clock (PROTOCOL.md section 25), with the shipped
    /// 60-s invitations: every tick and expiry comes when the story moves
    /// the clock, never while a loaded machine is still on the step before.
    @Test func viewerGoesOnStageSpeaksAndIsSentBack() async throws {
        // The app backend listens to webhooks (checked at the end).
        let backend = try WebhookReceiver()
        let daemon = try await Daemon.start(
            webhooksTo: backend.url,
            settings: #"""
                {"active_speakers":{"interval_ms":250},"reactions":{"interval_ms":100},"qa":{"interval_ms":100}}
                """#,
            arguments: TestModeTests.manualClock
        )
        func advance(_ millis: Int) async throws { try await TestModeTests.advanceAll(daemon, by: millis) }
        let admin = try daemon.managementToken()
        func connect(_ user: String, _ role: String) async throws -> (RoomClient, JoinResult) {
            let client = try await daemon.client()
            let result = try await client.join(
                token: try daemon.token(room: "show", user: user, role: role, name: user.capitalized)
            )
            return (client, result)
        }

        // 1. The host joins and publishes audio and video.
        let (host, hostJoin) = try await connect("host", "host")
        let hostID = hostJoin.peer.peerID
        try await host.addTrack(id: "host-mic", type: .audio)
        try await host.addTrack(id: "host-cam", type: .video)

        // 2. Twenty viewers join; each sees the host's two tracks in its snapshot.
        var viewers: [(client: RoomClient, id: String)] = []
        for index in 0..<20 {
            let (client, joined) = try await connect("viewer\(index)", "viewer")
            #expect(joined.peers.first { $0.peerID == hostID }?.tracks.keys.sorted() == ["host-cam", "host-mic"])
            viewers.append((client, joined.peer.peerID))
        }
        let (moderator, moderatorJoin) = try await connect("mod", "moderator")
        #expect(moderatorJoin.room.peerCount == 22)
        let hostJoins = await Self.events(host).filter { if case .peerJoin = $0 { true } else { false } }
        #expect(hostJoins.count == 21)
        for viewer in viewers + [(moderator, moderatorJoin.peer.peerID)] { _ = viewer.0.drain() }

        // 3. Three viewers raise their hands; the host finds them.
        for viewer in viewers[0..<3] { try await viewer.client.raiseHand() }
        let hands = try await host.findPeers(group: "_handraise")
        #expect(Set(hands.peers.map(\.peerID)) == Set(viewers[0..<3].map(\.id)))
        #expect(hands.eof)

        // 4. The host invites the first politely; it accepts and becomes a guest.
        let (alice, aliceID) = viewers[0]
        try await Task.sleep(for: .milliseconds(100))
        _ = alice.drain()
        let token = try #require(try await host.requestRoleChange(for: aliceID, to: "guest"))
        let request = try await alice.next { event -> (String, String?)? in
            if case .roleChangeRequest(let by, let role, let token) = event { return (role + ":" + token, by.peerID) }
            return nil
        }
        #expect(request.0 == "guest:" + token)
        #expect(request.1 == hostID)
        let promoted = try await alice.acceptRoleChange(token: token)
        #expect(promoted.role == "guest")
        let policy = try await alice.next { if case .policyChange(let policy) = $0 { policy } else { nil } }
        #expect(policy.name == "guest")
        try await alice.lowerHand()

        // 5. The guest publishes audio and video: everyone else sees both tracks, the guest gets none back.
        try await alice.addTrack(id: "alice-mic", type: .audio)
        try await alice.addTrack(id: "alice-cam", type: .video)
        for viewer in viewers[1...] {
            var added: [String] = []
            for _ in 0..<2 {
                added.append(
                    try await viewer.client.next { event in
                        if case .trackAdd(let peer, let track) = event, peer == aliceID { track.trackID } else { nil }
                    }
                )
            }
            #expect(added == ["alice-mic", "alice-cam"])
        }
        #expect(await Self.events(alice).allSatisfy { if case .trackAdd = $0 { false } else { true } })

        // 6. The guest and the host speak: viewers see the guest first (louder).
        _ = moderator.drain()
        // Both speak; the next tick (250 ms) lists them.
        try await alice.reportAudioLevels([("alice-mic", 80)])
        try await host.reportAudioLevels([("host-mic", 50)])
        _ = viewers[5].client.drain()
        try await advance(250)
        let speakers = try await viewers[5].client.next { if case .activeSpeakers(let list) = $0 { list } else { nil } }
        #expect(speakers.map(\.peerID) == [aliceID, hostID])
        #expect(speakers.map(\.level) == [80, 50])

        // 7. A second invitation is rejected; the host is told.
        let (bob, bobID) = viewers[1]
        let second = try #require(try await host.requestRoleChange(for: bobID, to: "guest"))
        let bobToken = try await bob.next { if case .roleChangeRequest(_, _, let token) = $0 { token } else { nil } }
        #expect(bobToken == second)
        try await bob.rejectRoleChange(token: bobToken)
        let rejected = try await host.next {
            if case .roleChangeRejected(let token, let who, _, let reason) = $0 { (token, who, reason) } else { nil }
        }
        #expect(rejected.0 == second && rejected.1 == bobID && rejected.2 == "rejected")

        // 8. A third expires after the shipped request_ttl_s (60 s); the host is told, and the token is dead.
        let (carol, carolID) = viewers[2]
        let third = try #require(try await host.requestRoleChange(for: carolID, to: "guest"))
        _ = try await carol.next { if case .roleChangeRequest = $0 { true } else { nil } }
        try await advance(59_999)
        #expect(await Self.events(host).allSatisfy { if case .roleChangeRejected = $0 { false } else { true } })
        try await advance(1)
        let expired = try await host.next {
            if case .roleChangeRejected(let token, _, _, let reason) = $0 { (token, reason) } else { nil }
        }
        #expect(expired.0 == third && expired.1 == "expired")
        await #expect(
            throws: RoomClientError.rpc(
                code: 40403,
                message: "token: no pending role change request for you",
                data: nil
            )
        ) {
            try await carol.acceptRoleChange(token: third)
        }

        // 9. The host forces the guest back to viewer: its tracks vanish for everyone, it gets its new policy.
        for client in [host, moderator] + viewers.map(\.client) { _ = client.drain() }
        try await host.requestRoleChange(for: aliceID, to: "viewer", force: true)
        let demoted = try await alice.next { if case .policyChange(let policy) = $0 { policy.name } else { nil } }
        #expect(demoted == "viewer")
        for client in [host, moderator, viewers[7].client] {
            var removed: [String] = []
            for _ in 0..<2 {
                removed.append(
                    try await client.next {
                        if case .trackRemove(let peer, let track) = $0, peer == aliceID { track.trackID } else { nil }
                    }
                )
            }
            #expect(removed.sorted() == ["alice-cam", "alice-mic"])
        }
        await #expect(throws: RoomClientError.self) { try await alice.addTrack(type: .audio) }

        // 10. The moderator mutes the host's microphone; the server enforces it.
        try await moderator.requestTrackUpdate(for: hostID, trackID: "host-mic", mute: true)
        let asked = try await host.next {
            if case .trackUpdateRequest(let by, let track, let mute) = $0 { (by.role, track, mute) } else { nil }
        }
        #expect(asked.0 == "moderator" && asked.1 == "host-mic" && asked.2)
        let muted = try await viewers[9].client.next { if case .trackUpdate(_, let track) = $0 { track } else { nil } }
        #expect(muted.trackID == "host-mic" && muted.mute)

        // 11. The host removes a viewer: 4001 for it, "peer kicked" for the others.
        let (dave, daveID) = viewers[3]
        try await host.removePeer(daveID, reason: "trolling")
        let told = try await dave.next {
            if case .peerLeaveRequest(_, let reason, let roomEnd) = $0 { (reason, roomEnd) } else { nil }
        }
        #expect(told.0 == "trolling" && !told.1)
        #expect(try await dave.closeCode() == 4001)
        let left = try await moderator.next {
            if case .peerLeave(let id, let reason) = $0 { (id, reason) } else { nil }
        }
        #expect(left.0 == daveID && left.1 == "peer kicked")

        // 12. The app backend messages the viewers over REST; the host and moderator get nothing.
        for client in [host, moderator] + viewers.map(\.client) { _ = client.drain() }
        let sent = try await http(
            "POST",
            daemon,
            "/v2/active-rooms/show/send-message",
            token: admin,
            body: #"{"role":"viewer","message":"Thanks for watching!"}"#
        )
        #expect(sent.status == 200)
        let note = try await viewers[10].client.next { if case .broadcast(let message) = $0 { message } else { nil } }
        #expect(note.message == "Thanks for watching!")
        #expect(note.sender.isServer)
        #expect(await Self.events(host).isEmpty)
        #expect(await Self.events(moderator, within: .milliseconds(10)).isEmpty)

        // 13. ...and moves another viewer on stage over REST.
        let (erin, erinID) = viewers[4]
        let moved = try await http(
            "POST",
            daemon,
            "/v2/active-rooms/show/peers/\(erinID)",
            token: admin,
            body: #"{"role":"guest"}"#
        )
        #expect(moved.body["role"] == "guest", "the changed Peer")
        #expect(try await erin.next { if case .policyChange(let policy) = $0 { policy.name } else { nil } } == "guest")

        // 13b. The host goes live on HLS and drops a cue into the stream; a viewer who joins later sees it.
        #expect(hostJoin.room.hls == nil, "no stream before the first start")
        try await host.startHLSStreaming()
        let live = try await viewers[12].client.next { if case .hlsUpdate(let state) = $0 { state } else { nil } }
        #expect(live.running && live.startedBy?.peerID == hostID)
        #expect(live.variants.map(\.url) == ["/hls/show/\(hostJoin.room.sessionID)/index.m3u8"])
        let cues = try await host.sendHLSTimedMetadata([
            HLSTimedMetadata(payload: #"{"poll":"who wins?"}"#, duration: 120)
        ])
        #expect(cues.count == 1 && cues[0].endDate - cues[0].startDate == 120_000)
        let heard = try await viewers[12].client.next { if case .hlsTimedMetadata(let cues) = $0 { cues } else { nil } }
        #expect(heard == cues)
        let (lateViewer, lateJoin) = try await connect("late-viewer", "viewer")
        #expect(lateJoin.room.hls?.running == true)
        #expect(lateJoin.room.hls?.cues == cues, "a late joiner sees the live cue")
        let daterange = try await httpText("GET", daemon, "/v2/active-rooms/show/hls/daterange", token: admin)
        #expect(daterange.text.hasPrefix("#EXT-X-DATERANGE:ID=\"\(cues[0].id)\""), "the packager gets it too")
        for client in [host, moderator, erin, viewers[19].client] {
            _ = try await client.next { if case .hlsTimedMetadata = $0 { true } else { nil } }
        }

        // 14. The audience arrives: three anonymous viewers (view_and_polls_only) preview, then join;
        //     they may listen to the session store but not chat.
        var audience: [(client: RoomClient, id: String)] = []
        for index in 0..<3 {
            let client = try await daemon.client()
            let token = try daemon.token(
                room: "show",
                user: "anon\(index)",
                role: "viewer",
                restrictions: "view_and_polls_only"
            )
            let preview = try await client.preview(token: token)
            #expect(preview.room?.roomID == "show" && preview.policy.name == "viewer")
            let joined = try await client.join(token: token)
            try await client.listenMetadata(["pinned"])
            audience.append((client, joined.peer.peerID))
        }
        #expect(try await audience[0].client.errorCode("broadcast", ["info": ["message": "hi"]]) == 40300)
        try await host.setMetadata("pinned", value: ["text": "Quiz time!"])
        for member in audience {
            let pinned = try await member.client.next {
                if case .metadataChanged(let entries) = $0 { entries } else { nil }
            }
            #expect(pinned.first?.value == ["text": "Quiz time!"])
        }

        // 15. The host runs a quiz: the audience votes (one answer per question), the host
        //     watches the stats and reads the leaderboard, everyone sees the stop with the answers.
        let quiz = try await host.setPollInfo(title: "Warm-up", type: .quiz)
        try await host.setPollQuestions(
            pollID: quiz,
            [
                PollQuestionDraft(
                    "Capital of France?",
                    type: .singleChoice,
                    options: ["Paris", "Rome"],
                    answer: [1],
                    weight: 2
                ),
                PollQuestionDraft("Primes?", type: .multipleChoice, options: ["2", "4", "5"], answer: [1, 3]),
            ]
        )
        try await host.startPoll(quiz)
        for member in audience {
            let started = try await member.client.next { if case .pollStarted(let polls) = $0 { polls } else { nil } }
            #expect(started.first?.pollID == quiz)
            #expect(started.first?.questions?.count == 2)
            #expect(started.first?.questions?.first?.answer == nil, "the answers stay hidden from voters")
        }
        let choices: [(Int, [Int], Int)] = [(1, [1, 3], 800), (1, [2], 2000), (2, [1, 3], 500)]
        for (member, (option, options, duration)) in zip(audience, choices) {
            let outcomes = try await member.client.respondToPoll(
                pollID: quiz,
                [
                    PollAnswer(question: 1, option: option, duration: duration),
                    PollAnswer(question: 2, options: options, duration: duration),
                ]
            )
            #expect(outcomes.map(\.errorCode) == [nil, nil])
        }
        let twice = try await audience[0].client.respondToPoll(pollID: quiz, [PollAnswer(question: 1, option: 2)])
        #expect(twice.first?.errorCode == 40906)
        try await advance(1000)  // the next on-poll-stats (settings.poll.stats_interval_ms)
        let stats = try await host.next(
            { if case .pollStats(let result) = $0, result.userCount == 3 { result } else { nil } }
        )
        #expect(stats.questions[0].options == [2, 1])
        #expect(stats.questions[0].correct == 2)
        let board = try await host.pollLeaderboard(quiz)
        #expect(board.entries.map { $0.peer?.peerID } == audience.map(\.id), "score, then time taken")
        #expect(board.entries.map(\.score) == [3, 2, 1])
        #expect(board.votedUsers == 3 && board.correctUsers == 1)
        try await host.stopPoll(quiz)
        for client in [host, moderator, erin, viewers[19].client] + audience.map(\.client) {
            let stopped = try await client.next { if case .pollStopped(let polls) = $0 { polls } else { nil } }
            #expect(stopped.first?.state == .stopped)
            #expect(stopped.first?.questions?.first?.answer == [1])
        }

        // 15b. The audience's own show. Viewers chat (the history keeps it); the audience reacts
        //      to a message and taps the stream, and everyone gets the counts coalesced.
        for client in [host, moderator] + viewers.map(\.client) + audience.map(\.client) { _ = client.drain() }
        let hello = try await viewers[10].client.broadcast("Hello from row ten!")
        let great = try await viewers[11].client.broadcast("This guest is great")
        let seen = try await audience[0].client.next {
            if case .broadcast(let message) = $0, message.messageID == great.messageID { message } else { nil }
        }
        #expect(seen.sender.peerID == viewers[11].id && seen.message == "This guest is great")
        try await audience[1].client.react(hello.messageID, type: "love")
        #expect(
            try await audience[1].client.react(hello.messageID, type: "love").total == 1,
            "one reaction of a type per user on a message"
        )
        try await audience[2].client.react(hello.messageID, type: "love")
        for member in audience { try await member.client.react("stream", type: "fire", count: 5) }
        try await advance(100)  // the next on-reactions
        var totals: [String: Int] = [:]  // "target/type" -> total, as the host's pushes tell it
        while totals["stream/fire"] != 15 || totals["\(hello.messageID)/love"] != 2 {
            let counts = try await host.next({ if case .reactions(let counts) = $0 { counts } else { nil } })
            for count in counts { totals[count.target + "/" + count.type] = count.total }
        }
        let rest = try await http("GET", daemon, "/v2/active-rooms/show/reactions", token: admin)
        #expect(
            rest.body["counts"]?.arrayValue?.contains { $0["target"] == "stream" && $0["total"] == 15 } == true,
            "the operator reads the same counts over REST"
        )

        // 15c. Viewers ask, the audience votes (it may vote, not ask); the host pins and answers
        //      the top question, and everyone sees it in the next on-questions.
        let meet = try await viewers[12].client.askQuestion("How did you two meet?")
        let next = try await viewers[13].client.askQuestion("What's next for the show?")
        for member in audience { _ = try await member.client.voteQuestion(next.questionID, .up) }
        _ = try await viewers[14].client.voteQuestion(meet.questionID, .down)
        #expect(try await audience[0].client.errorCode("question-add", ["text": "Me too?"]) == 40300)
        let top = try await host.questions(order: .top)
        #expect(top.questions.map(\.questionID) == [next.questionID, meet.questionID])
        #expect(top.questions.map(\.score) == [3, -1] && top.total == 2)
        _ = try await host.updateQuestion(next.questionID, pinned: true)
        _ = try await host.updateQuestion(next.questionID, state: .answered)
        try await advance(100)  // the next on-questions
        let answered = try await viewers[15].client.next {
            if case .questions(let changed, _) = $0 {
                changed.first { $0.questionID == next.questionID && $0.state == .answered }
            } else {
                nil
            }
        }
        #expect(answered.pinned && answered.up == 3 && answered.askedBy.peerID == viewers[13].id)

        // 15d. The host pins a message; the moderator deletes spam: every peer is told.
        try await host.pinMessage(hello.messageID)
        let pin = try await audience[2].client.next {
            if case .messagePinned(let message, let by) = $0 { (message?.messageID, by.peerID) } else { nil }
        }
        #expect(pin.0 == hello.messageID && pin.1 == hostID)
        let spam = try await viewers[16].client.broadcast("cheap followers here")
        try await moderator.deleteMessage(spam.messageID)
        let deleted = try await viewers[10].client.next {
            if case .messageDeleted(let id, let by) = $0 { (id, by.peerID) } else { nil }
        }
        #expect(deleted.0 == spam.messageID && deleted.1 == moderatorJoin.peer.peerID)

        // 15e. A prediction: a quiz whose answer nobody knows until it stops. The audience
        //      votes, the host stops it and sets the answer; whoever saw the stop gets it, and
        //      the session leaderboard adds both quizzes up.
        let prediction = try await host.setPollInfo(title: "Who wins tonight?", type: .quiz)
        try await host.setPollQuestions(
            pollID: prediction,
            [PollQuestionDraft("Winner?", type: .singleChoice, options: ["Alice", "Bob"])]
        )
        try await host.startPoll(prediction)
        for (member, option) in zip(audience, [2, 1, 2]) {
            _ = try await member.client.next {
                if case .pollStarted(let polls) = $0, polls.first?.pollID == prediction { true } else { nil }
            }
            let outcomes = try await member.client.respondToPoll(
                pollID: prediction,
                [PollAnswer(question: 1, option: option)]
            )
            #expect(outcomes.map(\.errorCode) == [nil])
        }
        try await host.stopPoll(prediction)
        try await host.setPollAnswers(pollID: prediction, [PollAnswer(question: 1, option: 2)])
        for client in [moderator, viewers[19].client] + audience.map(\.client) {
            let told = try await client.next {
                if case .pollAnswer(let id, let answers) = $0, id == prediction { answers } else { nil }
            }
            #expect(told == [["question": 1, "option": 2]])
        }
        let season = try await audience[1].client.sessionLeaderboard()
        #expect(season.pollID == nil)
        #expect(season.entries.map(\.score) == [4, 2, 2], "3 + 1, 2 + 0, 1 + 1")
        #expect(season.entries.first?.peer?.peerID == audience[0].id)

        // 15f. A viewer joining now gets the chat backfilled: the kept messages and the pin.
        let (latecomer, lateChat) = try await connect("latecomer", "viewer")
        #expect(lateChat.chat.messages.map(\.messageID) == [hello.messageID, great.messageID], "spam deleted")
        #expect(lateChat.chat.pinned?.messageID == hello.messageID)

        // 16. The host ends the show with a lock: everyone is told and closed with 4002.
        try await host.endRoom(reason: "show over", lock: true)
        for client in [host, moderator, erin, viewers[19].client] {
            let end = try await client.next {
                if case .peerLeaveRequest(_, let reason, let roomEnd) = $0 { (reason, roomEnd) } else { nil }
            }
            #expect(end.0 == "show over" && end.1)
            #expect(try await client.closeCode() == 4002)
        }
        let late = try await daemon.client()
        let lateToken = try daemon.token(room: "show", user: "late", role: "viewer")
        await #expect(throws: RoomClientError.self) { try await late.join(token: lateToken) }
        #expect(try await late.errorCode("join", ["token": .string(lateToken)]) == 40003)

        // 17. The backend unlocks the room; a new show can start.
        #expect(try await http("POST", daemon, "/v2/active-rooms/show/unlock", token: admin).status == 200)
        let reopened = try await late.join(token: lateToken)
        #expect(reopened.room.peerCount == 1)
        #expect(reopened.room.sessionID != hostJoin.room.sessionID)
        #expect(reopened.room.hls == nil, "the stream stopped with the room; a new session has none")

        // 16. The backend's webhook receiver heard every event, in order, each signed.
        let expected =
            ["session.open.success"] + Array(repeating: "peer.join.success", count: 22)
            + [
                "role.change.success", "role.change.success", "peer.leave.success", "role.change.success",
                "hls.started.success", "stream.live", "peer.join.success",
            ]
            + Array(repeating: "peer.join.success", count: 3) + ["poll.started", "poll.stopped"]  // the audience's quiz
            + ["message.deleted"]  // the moderator deletes the spam (section 22)
            + ["poll.started", "poll.stopped", "peer.join.success"]  // the prediction, the latecomer
            + ["hls.stopped.success", "stream.ended"] + Array(repeating: "peer.leave.success", count: 26)
            + ["session.close.success", "room.end.success", "session.open.success", "peer.join.success"]
        #expect(try await backend.deliveredTypes(count: expected.count) == expected)
        let hooks = backend.delivered
        #expect(backend.requests.allSatisfy { $0["verified"] == true })
        #expect(hooks[23]["data"]?["peer_id"]?.stringValue == aliceID && hooks[23]["data"]?["role"] == "guest")
        #expect(hooks[24]["data"]?["peer_id"]?.stringValue == aliceID && hooks[24]["data"]?["role"] == "viewer")
        #expect(hooks[25]["data"]?["peer_id"]?.stringValue == daveID && hooks[25]["data"]?["reason"] == "peer kicked")
        #expect(hooks[26]["data"]?["peer_id"]?.stringValue == erinID && hooks[26]["data"]?["name"] == "Viewer4")
        #expect(hooks[29]["data"]?["peer_id"]?.stringValue == lateJoin.peer.peerID)
        #expect(
            hooks[33]["data"]?["poll_id"]?.stringValue == quiz && hooks[33]["data"]?["peer_id"]?.stringValue == hostID
        )
        #expect(hooks[34]["data"]?["poll_id"]?.stringValue == quiz)
        #expect(hooks[35]["data"]?["message_id"]?.stringValue == spam.messageID)
        #expect(hooks[36]["data"]?["poll_id"]?.stringValue == prediction)
        #expect(hooks[38]["data"]?["peer_id"]?.stringValue == lateChat.peer.peerID)
        #expect(hooks[39]["data"]?["reason"] == "room ended", "end-room stopped the stream")
        #expect(hooks[68]["data"]?["reason"] == "show over" && hooks[68]["data"]?["lock"] == true)
        #expect(hooks[69]["data"]?["session_id"]?.stringValue == reopened.room.sessionID)
        withExtendedLifetime((lateViewer, latecomer)) {}
    }
}
