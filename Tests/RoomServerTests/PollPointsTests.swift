import Foundation
import RoomClient
import RoomWire
import Testing

/// Points across a show (PROTOCOL.md section 21, "Polls, 1.2 wording"): a
/// prediction's answer set after it stopped, and the session's leaderboard.
/// Shipped roles: host and moderator have pollWrite.
@Suite struct PollPointsTests {
    /// "Who wins tonight?": a quiz whose choice question has no answer yet, and a text question.
    static let prediction: JSON = [
        [
            "question": ["text": "who wins?", "type": "single-choice", "weight": 5],
            "options": [["text": "red"], ["text": "blue"]],
        ],
        ["question": ["text": "why?", "type": "short-answer", "skippable": true]],
    ]

    @Test func aPredictionIsAnsweredAfterItStopsAndScoresFollow() async throws {
        let stage = try await Stage()
        let (restricted, _) = try await stage.daemon.join("r", as: "viewer", restrictions: "view_and_polls_only")
        let id = try await PollTests.makePoll(
            stage.host,
            ["title": "Tonight", "type": "quiz"],
            questions: Self.prediction
        )
        _ = try await stage.guest.call(
            "poll-response",
            ["poll_id": .string(id), "responses": [["question": 1, "option": 2]]]
        )
        _ = try await stage.viewer.call(
            "poll-response",
            ["poll_id": .string(id), "responses": [["question": 1, "option": 1]]]
        )
        let answer: JSON = [["question": 1, "option": 2]]
        let early = try await stage.host.failure("poll-answer-set", ["poll_id": .string(id), "answers": answer])
        #expect(early.code == 40904 && early.message.contains("poll-questions-set"), "\(early)")
        _ = try await stage.host.call("poll-stop", ["poll_id": .string(id)])
        let before = try await stage.host.pollLeaderboard(id)
        #expect(before.entries.allSatisfy { $0.score == 0 } && before.correctUsers == 0, "nobody is correct yet")
        try await stage.settle()
        _ = restricted.drain()

        // Who may, and bad input.
        #expect(
            try await stage.guest.errorCode("poll-answer-set", ["poll_id": .string(id), "answers": answer]) == 40300
        )
        let cases: [(JSON, String)] = [
            ([], "answers"),
            ([["question": 2, "text": "x"]], "answers[0]"),
            ([["question": 2, "option": 1]], "text question"),
            ([["question": 3, "option": 1]], "no question 3"),
            ([["question": 1, "option": 3]], "answers[0]"),
            ([["question": 1, "options": [1, 2]]], "single-choice"),
            ([["question": 1, "option": 1], ["question": 1, "option": 2]], "twice"),
            ([["question": 1, "option": 1, "options": [1]]], "not both"),
            ([["question": .number("9223372036854775807"), "option": 1]], "question"),
        ]
        for (answers, field) in cases {
            let bad = try await stage.host.failure("poll-answer-set", ["poll_id": .string(id), "answers": answers])
            #expect(bad.code == -32602 && bad.message.contains(field), "\(answers): \(bad)")
        }
        #expect(try await stage.host.errorCode("poll-answer-set", ["poll_id": "nope", "answers": answer]) == 40404)
        let poll = try await PollTests.makePoll(
            stage.host,
            ["title": "Lunch", "type": "poll"],
            questions: [
                ["question": ["text": "where?", "type": "single-choice"], "options": [["text": "a"], ["text": "b"]]]
            ]
        )
        _ = try await stage.host.call("poll-stop", ["poll_id": .string(poll)])
        let notQuiz = try await stage.host.failure("poll-answer-set", ["poll_id": .string(poll), "answers": answer])
        #expect(notQuiz.code == -32602 && notQuiz.message.contains("not a quiz"), "\(notQuiz)")
        try await stage.settle()
        _ = restricted.drain()

        // Blue wins: the guest scores, everyone who reads the quiz hears it, the answers as sent.
        #expect(
            try await stage.moderator.call("poll-answer-set", ["poll_id": .string(id), "answers": answer]) == [
                "poll_id": .string(id)
            ]
        )
        for client in stage.all + [restricted] {
            let pushed = try await client.next("on-poll-answer")
            #expect(pushed == ["poll_id": .string(id), "answers": answer])
        }
        let board = try await stage.viewer.pollLeaderboard(id)
        #expect(board.correctUsers == 1 && board.entries.first?.score == 5)
        #expect(board.entries.first?.peer?.userID == "g")
        let result = try await stage.host.call("poll-result", ["poll_id": .string(id)])
        #expect(result["questions"]?[0]?["correct"] == 1, "\(result)")
        // A correction: red after all; scores move.
        try await stage.host.setPollAnswers(pollID: id, [PollAnswer(question: 1, option: 1)])
        let event = try await stage.guest.nextEvent()
        #expect(event == .pollAnswer(pollID: id, answers: [["question": 1, "option": 1]]))
        #expect(try await stage.viewer.pollLeaderboard(id).entries.first?.peer?.userID == "v")
    }

    @Test func theSessionLeaderboardAddsUpEveryStoppedQuiz() async throws {
        let stage = try await Stage()
        let (restricted, _) = try await stage.daemon.join("r", as: "viewer", restrictions: "view_and_polls_only")
        // Quiz 1: the guest gets both right (2 + 1 points), the viewer one (1).
        let first = try await PollTests.makePoll(stage.host)
        _ = try await stage.guest.call(
            "poll-response",
            [
                "poll_id": .string(first),
                "responses": [
                    ["question": 1, "option": 2], ["question": 2, "options": [1, 3]], ["question": 3, "skipped": true],
                ],
            ]
        )
        _ = try await stage.viewer.call(
            "poll-response",
            [
                "poll_id": .string(first),
                "responses": [["question": 1, "option": 1, "duration": 500], ["question": 2, "options": [1, 3]]],
            ]
        )
        _ = try await stage.host.call("poll-stop", ["poll_id": .string(first)])
        // Quiz 2, anonymous: only the restricted viewer answers, correctly (2 points).
        let second = try await PollTests.makePoll(stage.host, ["title": "Anon", "type": "quiz", "anonymous": true])
        _ = try await restricted.call(
            "poll-response",
            ["poll_id": .string(second), "responses": [["question": 1, "option": 2, "duration": 100]]]
        )
        _ = try await stage.host.call("poll-stop", ["poll_id": .string(second)])
        // Quiz 3 still runs: it does not count.
        let third = try await PollTests.makePoll(stage.host)
        _ = try await stage.viewer.call(
            "poll-response",
            ["poll_id": .string(third), "responses": [["question": 1, "option": 2]]]
        )

        // Anyone may read it, a restricted viewer too; poll_id is null.
        let raw = try await restricted.call("poll-leaderboard", [:])
        #expect(raw["poll_id"] == .null)
        let board = try await stage.viewer.sessionLeaderboard()
        #expect(board.pollID == nil)
        #expect(board.entries.map(\.score) == [3, 2, 1])
        #expect(board.entries.map(\.position) == [1, 2, 3])
        #expect(board.entries[0].peer?.userID == "g" && board.entries[0].correctResponses == 2)
        #expect(board.entries[0].totalResponses == 3, "a skip counts as a response")
        #expect(board.entries[1].peer == nil, "answered only an anonymous quiz: not named")
        #expect(board.entries[2].peer?.userID == "v" && board.entries[2].duration == 500)
        #expect(board.votedUsers == 3)
        #expect(board.correctUsers == 0, "nobody got all 3 graded questions of both quizzes")
        #expect(board.totalUsers == 5, "every user in the room may vote (shipped roles)")
        #expect(board.last)
        let page = try await stage.viewer.sessionLeaderboard(offset: 1, count: 1)
        #expect(page.entries.map(\.position) == [2] && !page.last)
        let far = try await stage.viewer.sessionLeaderboard(offset: Int.max, count: 100)
        #expect(far.entries.isEmpty && far.last, "a huge offset is an empty last page")
        for bad: JSON in [["count": 0], ["count": 101], ["offset": -1], ["poll_id": "no/slash"]] {
            #expect(try await stage.viewer.errorCode("poll-leaderboard", bad) == -32602, "\(bad)")
        }
    }
}
