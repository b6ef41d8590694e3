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

        // 3. Three viewers ask to come on stage, each with a note; so does a troll.
        func status(_ client: RoomClient) async throws -> CallInRequest {
            try await client.next { if case .stageStatus(let request) = $0 { request } else { nil } }
        }
        func queue(_ client: RoomClient) async throws -> (changed: [CallInRequest], removed: [String], waiting: Int) {
            try await client.next { event in
                if case .stageQueue(let changed, let removed, let waiting) = event {
                    (changed, removed, waiting)
                } else {
                    nil
                }
            }
        }
        let (alice, aliceID) = viewers[0]
        let (bob, bobID) = viewers[1]
        let (carol, _) = viewers[2]
        let (troll, _) = viewers[6]
        var callers: [CallInRequest] = []
        for (viewer, note) in [
            (alice, "I saw the first show live"), (bob, "A question about the tour"), (carol, "Hi from Lyon!"),
            (troll, "let me on, I am the real host"),
        ] {
            callers.append(try await viewer.askToJoinStage(note: note))
            #expect(try await status(viewer) == callers.last, "asking is a status change: the caller is told")
            try await advance(1)  // one ms apart: the queue's order is the order of asking
        }
        #expect(callers.map(\.position) == [1, 2, 3, 4] && callers.allSatisfy { $0.status == .waiting })

        // 4. The two co-hosts (the host and the producer, a moderator) see one queue: the same push,
        //    with the notes; no viewer learns of it.
        try await advance(1000)  // settings.stage.interval_ms
        let seenByHost = try await queue(host)
        #expect(seenByHost.changed.map(\.note) == callers.map(\.note) && seenByHost.removed == [])
        #expect(seenByHost.waiting == 4)
        #expect(try await queue(moderator) == seenByHost, "one queue, the same for every co-host")
        #expect(
            await Self.events(viewers[7].client, within: .milliseconds(10)).allSatisfy {
                if case .stageQueue = $0 { false } else { true }
            }
        )
        let (waiting, queued) = try await host.stageQueue()
        #expect(waiting.map(\.requestID) == callers.map(\.requestID) && queued == 4)

        // 5. The producer blocks the troll: its request is declined, and it cannot ask again (40303).
        try await moderator.blockFromStage(callers[3].userID)
        #expect(try await status(troll).status == .declined)
        await #expect(throws: RoomClientError.self) { try await troll.askToJoinStage(note: "please") }
        #expect(try await troll.errorCode("stage-request", ["note": "please"]) == 40303)
        // The troll cannot pose as the host either: a moderating peer's name is reserved (40908),
        // whatever its case and surrounding spaces; the host's peer keeps the name alone.
        #expect(try await troll.errorCode("peer-update", ["name": " host "]) == 40908)
        #expect(try await troll.errorCode("peer-update", ["name": "HOST"]) == 40908)

        // 6. The producer invites the first caller; it accepts and is live, a guest.
        let (invited, token) = try await moderator.invite(waiting[0])
        #expect(invited.status == .invited && invited.role == "guest")
        #expect(invited.invitedBy?.peerID == moderatorJoin.peer.peerID)
        let offer = try await alice.next { event -> (String, String?)? in
            if case .roleChangeRequest(let by, let role, let token) = event { return (role + ":" + token, by.peerID) }
            return nil
        }
        #expect(offer.0 == "guest:" + token && offer.1 == moderatorJoin.peer.peerID)
        #expect(try await status(alice).status == .invited)
        let promoted = try await alice.acceptRoleChange(token: token)
        #expect(promoted.role == "guest")
        let onAir = try await status(alice)
        #expect(onAir.status == .live && onAir.requestID == callers[0].requestID && onAir.peer.role == "guest")
        let policy = try await alice.next { if case .policyChange(let policy) = $0 { policy } else { nil } }
        #expect(policy.name == "guest")
        try await advance(1000)
        let onStage = try await queue(host)
        #expect(onStage.changed.map(\.status) == [.live] && onStage.changed[0].requestID == callers[0].requestID)
        #expect(onStage.removed == [callers[3].requestID] && onStage.waiting == 2, "the troll's request is gone")
        #expect(try await queue(moderator) == onStage)

        // 7. The guest publishes audio and video: everyone else sees both tracks, the guest gets none back.
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

        // 8. The guest and the host speak: viewers see the guest first (louder).
        _ = moderator.drain()
        // Both speak; the next tick (250 ms) lists them.
        try await alice.reportAudioLevels([("alice-mic", 80)])
        try await host.reportAudioLevels([("host-mic", 50)])
        _ = viewers[5].client.drain()
        try await advance(250)
        let speakers = try await viewers[5].client.next { if case .activeSpeakers(let list) = $0 { list } else { nil } }
        #expect(speakers.map(\.peerID) == [aliceID, hostID])
        #expect(speakers.map(\.level) == [80, 50])

        // 9. The host invites the next caller, who says no: its request is declined, the host is told.
        let (_, second) = try await host.invite(waiting[1])
        let bobToken = try await bob.next { if case .roleChangeRequest(_, _, let token) = $0 { token } else { nil } }
        #expect(bobToken == second)
        try await bob.rejectRoleChange(token: bobToken)
        let rejected = try await host.next {
            if case .roleChangeRejected(let token, let who, _, let reason) = $0 { (token, who, reason) } else { nil }
        }
        #expect(rejected.0 == second && rejected.1 == bobID && rejected.2 == "rejected")
        #expect(try await status(bob).status == .invited)
        #expect(try await status(bob).status == .declined)

        // 10. The third invitation expires after the shipped request_ttl_s (60 s): the host is told, the token
        //     is dead, and the caller waits again at its place in the queue.
        let (_, third) = try await host.invite(waiting[2])
        _ = try await carol.next { if case .roleChangeRequest = $0 { true } else { nil } }
        #expect(try await status(carol).status == .invited)
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
        let again = try await status(carol)
        #expect(again.status == .waiting && again.position == 1 && again.requestID == callers[2].requestID)

        // 11. Afterwards the host sends the guest back to the audience: its tracks vanish for everyone,
        //     it gets its new policy, and its request is done (gone from the co-hosts' queue).
        for client in [host, moderator] + viewers.map(\.client) { _ = client.drain() }
        try await host.requestRoleChange(for: aliceID, to: "viewer", force: true)
        let demoted = try await alice.next { if case .policyChange(let policy) = $0 { policy.name } else { nil } }
        #expect(demoted == "viewer")
        #expect(try await status(alice).status == .done)
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
        try await advance(1000)
        let after = try await queue(moderator)
        #expect(after.removed.contains(callers[0].requestID) && after.waiting == 1)
        let (done, _) = try await host.stageQueue(status: .done)
        #expect(done.map(\.requestID) == [callers[0].requestID])

        // 12. The moderator mutes the host's microphone; the server enforces it.
        try await moderator.requestTrackUpdate(for: hostID, trackID: "host-mic", mute: true)
        let asked = try await host.next {
            if case .trackUpdateRequest(let by, let track, let mute) = $0 { (by.role, track, mute) } else { nil }
        }
        #expect(asked.0 == "moderator" && asked.1 == "host-mic" && asked.2)
        let muted = try await viewers[9].client.next { if case .trackUpdate(_, let track) = $0 { track } else { nil } }
        #expect(muted.trackID == "host-mic" && muted.mute)

        // 13. The host removes a viewer: 4001 for it, "peer kicked" for the others.
        let (dave, daveID) = viewers[3]
        try await host.removePeer(daveID, reason: "trolling")
        let told = try await dave.next {
            if case .peerLeaveRequest(_, let reason, let roomEnd) = $0 { (reason, roomEnd) } else { nil }
        }
        #expect(told.0 == "trolling" && !told.1)
        #expect(try await dave.closeCode() == 4001)
        for client in [moderator, host] {  // both, before step 14 asks them for silence (a cluster's is late)
            let left = try await client.next {
                if case .peerLeave(let id, let reason) = $0 { (id, reason) } else { nil }
            }
            #expect(left.0 == daveID && left.1 == "peer kicked")
        }

        // 14. The app backend messages the viewers over REST; the host and moderator get nothing.
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
        let hostGot = await Self.events(host)
        #expect(hostGot.isEmpty, "\(hostGot)")
        #expect(await Self.events(moderator, within: .milliseconds(10)).isEmpty)

        // 15. ...and moves another viewer on stage over REST.
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

        // 15b. The host goes live on HLS and drops a cue into the stream; a viewer who joins later sees it.
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

        // 16. The audience arrives: three anonymous viewers (view_and_polls_only) preview, then join;
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

        // 17. The host runs a quiz: the audience votes (one answer per question), the host
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

        // 17b. The audience's own show. Viewers chat (the history keeps it); the audience reacts
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

        // 17c. Viewers ask, the audience votes (it may vote, not ask); the host pins and answers
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

        // 17d. The host pins a message; the moderator deletes spam: every peer is told.
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

        // 17e. A prediction: a quiz whose answer nobody knows until it stops. The audience
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

        // 17f. A viewer joining now gets the chat backfilled: the kept messages and the pin.
        let (latecomer, lateChat) = try await connect("latecomer", "viewer")
        #expect(lateChat.chat.messages.map(\.messageID) == [hello.messageID, great.messageID], "spam deleted")
        #expect(lateChat.chat.pinned?.messageID == hello.messageID)

        // 18. The host ends the show with a lock: everyone is told and closed with 4002.
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

        // 19. The backend unlocks the room; a new show can start.
        #expect(try await http("POST", daemon, "/v2/active-rooms/show/unlock", token: admin).status == 200)
        let reopened = try await late.join(token: lateToken)
        #expect(reopened.room.peerCount == 1)
        #expect(reopened.room.sessionID != hostJoin.room.sessionID)
        #expect(reopened.room.hls == nil, "the stream stopped with the room; a new session has none")

        // 20. The backend's webhook receiver heard every event, in order, each signed.
        let stage = [
            "stage.requested", "stage.requested", "stage.requested", "stage.requested",  // four ask
            "stage.declined",  // the troll, blocked
            "stage.invited", "role.change.success", "stage.live",  // the producer's invitation, accepted
            "stage.invited", "stage.declined",  // the second, rejected
            "stage.invited",  // the third, expired (it waits again: no event)
            "role.change.success", "stage.done",  // the guest goes back to the audience
        ]
        let expected =
            ["session.open.success"] + Array(repeating: "peer.join.success", count: 22) + stage
            + ["peer.leave.success", "role.change.success", "hls.started.success", "stream.live", "peer.join.success"]
            + Array(repeating: "peer.join.success", count: 3) + ["poll.started", "poll.stopped"]  // the audience's quiz
            + ["message.deleted"]  // the moderator deletes the spam (section 22)
            + ["poll.started", "poll.stopped", "peer.join.success"]  // the prediction, the latecomer
            + ["hls.stopped.success", "stream.ended"] + Array(repeating: "peer.leave.success", count: 26)
            + ["session.close.success", "room.end.success", "session.open.success", "peer.join.success"]
        let delivered = try await backend.deliveredTypes(count: expected.count)
        #expect(delivered == expected, "\(delivered)")
        let hooks = backend.delivered
        #expect(backend.requests.allSatisfy { $0["verified"] == true })
        let asks = hooks[23..<27].map { ($0["data"]?["user_id"]?.stringValue, $0["data"]?["note"]?.stringValue) }
        #expect(asks.map(\.0) == callers.map(\.userID) && asks.map(\.1) == callers.map(\.note))
        #expect(hooks[27]["data"]?["request_id"]?.stringValue == callers[3].requestID)
        #expect(hooks[28]["data"]?["invited_role"] == "guest" && hooks[28]["data"]?["peer_id"]?.stringValue == aliceID)
        #expect(hooks[29]["data"]?["peer_id"]?.stringValue == aliceID && hooks[29]["data"]?["role"] == "guest")
        #expect(hooks[34]["data"]?["peer_id"]?.stringValue == aliceID && hooks[34]["data"]?["role"] == "viewer")
        #expect(hooks[35]["data"]?["request_id"]?.stringValue == callers[0].requestID)
        let shift = stage.count - 2  // the later events moved by the stage's, less the two role changes of before
        #expect(hooks[shift + 25]["data"]?["peer_id"]?.stringValue == daveID)
        #expect(hooks[shift + 25]["data"]?["reason"] == "peer kicked")
        #expect(
            hooks[shift + 26]["data"]?["peer_id"]?.stringValue == erinID
                && hooks[shift + 26]["data"]?["name"] == "Viewer4"
        )
        #expect(hooks[shift + 29]["data"]?["peer_id"]?.stringValue == lateJoin.peer.peerID)
        #expect(
            hooks[shift + 33]["data"]?["poll_id"]?.stringValue == quiz
                && hooks[shift + 33]["data"]?["peer_id"]?.stringValue == hostID
        )
        #expect(hooks[shift + 34]["data"]?["poll_id"]?.stringValue == quiz)
        #expect(hooks[shift + 35]["data"]?["message_id"]?.stringValue == spam.messageID)
        #expect(hooks[shift + 36]["data"]?["poll_id"]?.stringValue == prediction)
        #expect(hooks[shift + 38]["data"]?["peer_id"]?.stringValue == lateChat.peer.peerID)
        #expect(hooks[shift + 39]["data"]?["reason"] == "room ended", "end-room stopped the stream")
        #expect(hooks[shift + 68]["data"]?["reason"] == "show over" && hooks[shift + 68]["data"]?["lock"] == true)
        #expect(hooks[shift + 69]["data"]?["session_id"]?.stringValue == reopened.room.sessionID)
        withExtendedLifetime((lateViewer, latecomer)) {}
    }
}
