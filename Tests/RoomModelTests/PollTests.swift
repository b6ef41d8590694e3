import RoomConfig
import Testing

@testable import RoomModel

/// Polls and quizzes in the model (section 15): permissions, states, one
/// answer per user per question, running counts, the leaderboard, coalesced stats.
@Suite struct PollTests {
    let registry: RoomRegistry
    let clock: ManualClock
    let host: Peer, guest: Peer, viewer: Peer, moderator: Peer, restricted: Peer

    init() throws {
        var roles = Fixtures.template().roles
        roles["host"]!.permissions.pollWrite = true
        roles["host"]!.permissions.pollRead = true
        roles["viewer"]!.permissions.pollRead = true
        var settings = Settings()
        settings.polls.maxPolls = 3
        clock = ManualClock()
        registry = RoomRegistry(
            template: RoleTemplate(name: "t", roles: Array(roles.values), settings: settings),
            clock: clock,
            ids: SequentialIDGenerator()
        )
        host = try registry.join(Fixtures.request("h", role: "host")).peer
        guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        moderator = try registry.join(Fixtures.request("m", role: "moderator")).peer
        restricted = try registry.join(Fixtures.request("r", role: "viewer", viewOnly: true)).peer
    }

    /// A started quiz: q1 single-choice (answer 2, weight 2), q2 multiple-choice (answer 1,3), q3 skippable text.
    func startedQuiz(_ info: PollInfoInput = PollInfoInput(title: "Quiz", type: .quiz)) throws -> Poll {
        let poll = try registry.setPollInfo(by: host, info)
        _ = try registry.setPollQuestions(
            by: host,
            pollID: poll.id,
            [
                QuestionInput(text: "2+2?", type: .singleChoice, weight: 2, options: ["3", "4"], answer: [2]),
                QuestionInput(text: "odd?", type: .multipleChoice, options: ["1", "2", "3"], answer: [3, 1]),
                QuestionInput(text: "why?", type: .shortAnswer, skippable: true, answerMaxLen: 5),
            ]
        )
        _ = try registry.startPoll(by: host, pollID: poll.id)
        return poll
    }

    @Test func writingNeedsPollWriteAndIsRestrictedForViewOnlyPeers() throws {
        let info = PollInfoInput(title: "T", type: .poll)
        #expect(code { _ = try registry.setPollInfo(by: guest, info) } == .permissionDenied)
        #expect(code { _ = try registry.setPollInfo(by: viewer, info) } == .permissionDenied)
        #expect(code { _ = try registry.setPollInfo(by: restricted, info) } == .permissionDenied)
        let poll = try registry.setPollInfo(by: host, info)
        #expect(poll.id == "poll-1")
        #expect(poll.state == .created)
        #expect(poll.createdBy == host.id)
        #expect(code { _ = try registry.startPoll(by: host, pollID: poll.id) } == .wrongState, "no questions")
        #expect(code { _ = try registry.startPoll(by: host, pollID: "nope") } == .pollNotFound)
    }

    @Test func draftsAreSeenByWritersOnly() throws {
        let poll = try registry.setPollInfo(by: host, PollInfoInput(title: "T", type: .poll))
        #expect(code { _ = try registry.readablePoll(viewer, poll.id) } == .pollNotFound)
        #expect(registry.listPolls(for: viewer, state: nil).isEmpty)
        #expect(registry.listPolls(for: host, state: nil).map(\.id) == [poll.id])
    }

    @Test func startPushesToReadersAndVotersWritersWithAnswers() throws {
        let poll = try registry.setPollInfo(by: host, PollInfoInput(title: "Q", type: .quiz, vote: ["viewer"]))
        _ = try registry.setPollQuestions(
            by: host,
            pollID: poll.id,
            [
                QuestionInput(text: "a", type: .singleChoice, options: ["x", "y"], answer: [1])
            ]
        )
        let (_, deliveries) = try registry.startPoll(by: host, pollID: poll.id)
        // guest and moderator lack pollRead and may not vote (vote: [viewer]).
        #expect(
            deliveries.sent == [
                Sent(push: "on-poll-start:poll-1+answers", to: [host.id]),
                Sent(push: "on-poll-start:poll-1", to: [viewer.id, restricted.id]),
            ]
        )
        #expect(code { _ = try registry.startPoll(by: host, pollID: poll.id) } == .wrongState)
        #expect(code { _ = try registry.setPollQuestions(by: host, pollID: poll.id, []) } == .wrongState)
        #expect(
            code { _ = try registry.setPollInfo(by: host, PollInfoInput(pollID: poll.id, title: "x", type: .poll)) }
                == .wrongState
        )
        #expect(
            code { _ = try registry.respond(guest, pollID: poll.id, [ResponseInput(question: 1, option: 1)]) }
                == .permissionDenied
        )
    }

    @Test func oneAnswerPerUserPerQuestionTheOthersStillCount() throws {
        let poll = try startedQuiz()
        let first = try registry.respond(
            restricted,
            pollID: poll.id,
            [ResponseInput(question: 1, option: 2, duration: 900)]
        )
        #expect(first.outcomes == [ResponseOutcome(question: 1, correct: true)])
        let second = try registry.respond(
            restricted,
            pollID: poll.id,
            [
                ResponseInput(question: 1, option: 1),
                ResponseInput(question: 2, options: [1, 3]),
                ResponseInput(question: 2, options: [1]),
            ]
        )
        #expect(second.outcomes.map(\.error?.code) == [.alreadyAnswered, nil, .alreadyAnswered])
        #expect(second.outcomes[1].correct == true)
        #expect(poll.tallies[0].optionCounts == [0, 1])
        #expect(poll.tallies[1].optionCounts == [1, 0, 1])
        #expect(poll.voters["r"]?.score == 3)
        // Another peer of the same user is the same voter.
        let twin = try registry.join(Fixtures.request("r", role: "viewer")).peer
        let again = try registry.respond(twin, pollID: poll.id, [ResponseInput(question: 1, option: 2)])
        #expect(again.outcomes.first?.error?.code == .alreadyAnswered)
    }

    @Test func entriesAreJudgedOneByOne() throws {
        let poll = try startedQuiz()
        let (_, outcomes) = try registry.respond(
            viewer,
            pollID: poll.id,
            [
                ResponseInput(question: 9, option: 1),
                ResponseInput(question: 1, options: [2]),
                ResponseInput(question: 1, option: 3),
                ResponseInput(question: 2, options: [1, 1]),
                ResponseInput(question: 3, text: "too long"),
                ResponseInput(question: 3, skipped: true, duration: 50),
                ResponseInput(question: 1, option: 1),
            ]
        )
        #expect(
            outcomes.map(\.error?.code) == [
                .invalidParams, .invalidParams, .invalidParams, .invalidParams,
                .invalidParams, nil, nil,
            ]
        )
        #expect(outcomes[6].correct == false)
        #expect(poll.tallies[2].skipped == 1)
        #expect(poll.tallies[2].total == 0)
        #expect(poll.totalResponses == 1, "skips are not in total_response")
        let skipNotAllowed = try registry.respond(host, pollID: poll.id, [ResponseInput(question: 1, skipped: true)])
        #expect(skipNotAllowed.outcomes[0].error?.code == .invalidParams)
    }

    @Test func leaderboardRanksByScoreThenDurationThenPeer() throws {
        let poll = try startedQuiz()
        _ = try registry.respond(
            viewer,
            pollID: poll.id,
            [
                ResponseInput(question: 1, option: 2, duration: 500),
                ResponseInput(question: 2, options: [1, 3], duration: 500),
            ]
        )
        _ = try registry.respond(
            restricted,
            pollID: poll.id,
            [
                ResponseInput(question: 1, option: 2, duration: 100),
                ResponseInput(question: 2, options: [1, 3], duration: 100),
            ]
        )
        _ = try registry.respond(guest, pollID: poll.id, [ResponseInput(question: 1, option: 1)])
        #expect(code { _ = try registry.leaderboard(viewer, poll, offset: 0, count: 10) } == .permissionDenied)
        let board = try registry.leaderboard(host, poll, offset: 0, count: 10)
        #expect(board.entries.map(\.voter.userID) == ["r", "v", "g"])
        #expect(board.entries.map(\.position) == [1, 2, 3])
        #expect(board.entries.map(\.voter.score) == [3, 3, 0])
        #expect(board.votedUsers == 3)
        #expect(board.correctUsers == 2)
        #expect(board.totalUsers == 5)
        #expect(try registry.leaderboard(host, poll, offset: .max, count: 100).last, "no overflow")
        let page = try registry.leaderboard(host, poll, offset: 2, count: 1)
        #expect(page.entries.map(\.position) == [3])
        #expect(page.last)
        _ = try registry.stopPoll(by: host, pollID: poll.id)
        #expect(try registry.leaderboard(viewer, poll, offset: 0, count: 10).entries.count == 3, "anyone once stopped")
    }

    /// One stats interval: a tick per slice.
    func statsInterval() -> [Delivery] {
        (0..<registry.pollStatsSlices).flatMap { _ in registry.tickPollStats() }
    }

    @Test func statsAreCoalescedPerIntervalAndOnlyWhenChanged() throws {
        #expect(registry.pollStatsSlices == 20)
        #expect(registry.pollStatsTickMs == 50)
        let poll = try startedQuiz(PollInfoInput(title: "Q", type: .quiz, visibility: true))
        #expect(statsInterval().isEmpty, "nothing changed yet")
        for voter in [viewer, restricted, guest] {
            _ = try registry.respond(voter, pollID: poll.id, [ResponseInput(question: 1, option: 2)])
        }
        let stats = statsInterval()
        #expect(stats.names(for: host) == ["on-poll-stats:poll-1+correct"])
        for peer in [guest, viewer, moderator, restricted] {
            #expect(stats.names(for: peer) == ["on-poll-stats:poll-1"], "exactly one per peer per interval")
        }
        #expect(stats.allSatisfy { $0.recipients.count == 1 }, "each tick serves one slice of the peers")
        #expect(statsInterval().isEmpty, "nothing changed since: no push")
        // A vote in the middle of an interval: every slice hears of it once, the ones already served included.
        for _ in 0..<3 { _ = registry.tickPollStats() }
        _ = try registry.respond(moderator, pollID: poll.id, [ResponseInput(question: 1, option: 1)])
        let next = statsInterval()
        for peer in [host, guest, viewer, moderator, restricted] { #expect(next.names(for: peer).count == 1) }
        #expect(statsInterval().isEmpty)
    }

    @Test func statsSlicesFollowTheInterval() {
        for (interval, slices, tick) in [
            (1000, 20, 50), (300, 6, 50), (120, 2, 60), (100, 2, 50), (1055, 20, 53), (60000, 20, 3000),
        ] {
            var settings = Settings()
            settings.polls.statsIntervalMs = interval
            let registry = RoomRegistry(template: Fixtures.template(settings: settings))
            #expect(registry.pollStatsSlices == slices)
            #expect(registry.pollStatsTickMs == tick)
            #expect(
                registry.pollStatsSlices * registry.pollStatsTickMs >= interval,
                "a slice comes round no sooner than the interval"
            )
        }
    }

    @Test func statsGoToWritersOnlyWithoutVisibility() throws {
        let poll = try startedQuiz()
        _ = try registry.respond(viewer, pollID: poll.id, [ResponseInput(question: 1, option: 2)])
        #expect(statsInterval().sent == [Sent(push: "on-poll-stats:poll-1+correct", to: [host.id])])
    }

    @Test func durationStopsThePollWithStoppedByNull() throws {
        let poll = try startedQuiz(PollInfoInput(title: "Q", type: .quiz, duration: 30))
        #expect(registry.nextDeadline == clock.now + 30_000)
        clock.advance(byMillis: 29_999)
        #expect(registry.expireDue().isEmpty)
        clock.advance(byMillis: 1)
        let expired = registry.expireDue()
        let stopped = expired.flatMap(\.effects.deliveries)
        #expect(expired.compactMap { $0.log?.metadata["poll"] } == [poll.id])
        #expect(stopped.sent.first?.push == "on-poll-stop:poll-1")
        #expect(poll.state == .stopped)
        #expect(poll.stoppedBy == nil)
        #expect(registry.nextDeadline == nil)
        #expect(
            code { _ = try registry.respond(viewer, pollID: poll.id, [ResponseInput(question: 1, option: 1)]) }
                == .wrongState
        )
        #expect(code { _ = try registry.stopPoll(by: host, pollID: poll.id) } == .wrongState)
    }

    @Test func limits() throws {
        for i in 1...3 {
            _ = try registry.setPollInfo(by: host, PollInfoInput(pollID: "p\(i)", title: "T", type: .poll))
        }
        #expect(code { _ = try registry.setPollInfo(by: host, PollInfoInput(title: "T", type: .poll)) } == .tooMany)
        let long = String(repeating: "x", count: 1025)
        #expect(
            code { _ = try registry.setPollInfo(by: host, PollInfoInput(pollID: "p1", title: long, type: .poll)) }
                == .tooLarge
        )
        let question = QuestionInput(text: "q", type: .singleChoice, options: ["a"])
        #expect(
            code { _ = try registry.setPollQuestions(by: host, pollID: "p1", Array(repeating: question, count: 21)) }
                == .tooMany
        )
        let many = QuestionInput(text: "q", type: .singleChoice, options: Array(repeating: "o", count: 11))
        #expect(code { _ = try registry.setPollQuestions(by: host, pollID: "p1", [many]) } == .tooMany)
        let longText = QuestionInput(text: long, type: .shortAnswer)
        #expect(code { _ = try registry.setPollQuestions(by: host, pollID: "p1", [longText]) } == .tooLarge)
        #expect(
            try registry.setPollQuestions(by: host, pollID: "p1", Array(repeating: question, count: 20)).questions.count
                == 20
        )
    }

    @Test func aVoteCostsItsAnswersNotTheVoters() throws {
        // Running counters: the tallies after n votes equal a recount, and no vote touches other voters' state.
        let poll = try startedQuiz()
        var peers: [Peer] = []
        for i in 0..<200 { peers.append(try registry.join(Fixtures.request("u\(i)", role: "viewer")).peer) }
        for (i, peer) in peers.enumerated() {
            _ = try registry.respond(peer, pollID: poll.id, [ResponseInput(question: 1, option: i % 2 + 1)])
        }
        #expect(poll.tallies[0].optionCounts == [100, 100])
        #expect(poll.tallies[0].correct == 100)
        #expect(poll.records.count == 200)
        #expect(poll.voters.count == 200)
    }
}
