import Foundation
import RoomClient
import RoomWire
import Testing

/// Polls and quizzes over real sockets (section 15). Shipped roles: host and
/// moderator have pollWrite, guest and viewer pollRead; `vote` null = every role votes.
@Suite struct PollTests {
    static let quizQuestions: JSON = [
        [
            "question": ["text": "2+2?", "type": "single-choice", "weight": 2],
            "options": [["text": "3"], ["text": "4"]],
            "answer": ["option": 2],
        ],
        [
            "question": ["text": "odd?", "type": "multiple-choice"],
            "options": [["text": "1"], ["text": "2"], ["text": "3"]],
            "answer": ["options": [1, 3]],
        ],
        ["question": ["text": "why?", "type": "short-answer", "skippable": true, "answer_max_len": 20]],
    ]

    /// Creates (and by default starts) a poll; returns its id.
    @discardableResult
    static func makePoll(
        _ host: RoomClient,
        _ info: JSON = ["title": "Quiz", "type": "quiz"],
        questions: JSON = quizQuestions,
        start: Bool = true
    ) async throws -> String {
        let id = try #require(try await host.call("poll-info-set", info)["poll_id"]?.stringValue)
        let set = try await host.call("poll-questions-set", ["poll_id": .string(id), "questions": questions])
        #expect(set["total_questions"]?.intValue == questions.arrayValue?.count)
        if start { _ = try await host.call("poll-start", ["poll_id": .string(id)]) }
        return id
    }

    @Test func startStopAndWhoGetsWhat() async throws {
        let stage = try await Stage()
        let (restricted, _) = try await stage.daemon.join("r", as: "viewer", restrictions: "view_and_polls_only")
        try await stage.settle()
        let id = try await Self.makePoll(stage.host, start: false)
        #expect(id.isEmpty == false)
        for client in stage.all + [restricted] {
            #expect(await Stage.methods(client).isEmpty, "a draft pushes nothing")
        }
        #expect(
            try await stage.viewer.errorCode("poll-info-get", ["poll_id": .string(id)]) == 40404,
            "drafts: writers only"
        )

        let started = try await stage.host.call("poll-start", ["poll_id": .string(id)])
        #expect(started == ["poll_id": .string(id), "duration": 0])
        for writer in [stage.host, stage.moderator] {
            let push = try await writer.next("on-poll-start")
            let poll = try #require(push["polls"]?[0])
            #expect(poll["poll_id"] == .string(id))
            #expect(poll["state"] == "started")
            #expect(poll["started_by"] == stage.id("host"))
            #expect(poll["questions"]?[0]?["answer"] == ["option": 2], "pollWrite peers see the answers")
            #expect(poll["questions"]?[1]?["answer"] == ["options": [1, 3]])
        }
        for reader in [stage.guest, stage.viewer, restricted] {
            let poll = try #require(try await reader.next("on-poll-start")["polls"]?[0])
            #expect(poll["questions"]?[0]?["options"] == [["index": 1, "text": "3"], ["index": 2, "text": "4"]])
            #expect(poll["questions"]?[0]?["answer"] == nil, "answers hidden until the quiz stops")
            #expect(poll["questions_count"] == 3)
        }
        let info = try await stage.viewer.call("poll-info-get", ["poll_id": .string(id)])
        #expect(info["state"] == "started")
        #expect(info["vote"] == .null)
        #expect(info["responses"] == .null)
        #expect(info["anonymous"] == false)
        #expect(info["visibility"] == false)
        #expect(info["stopped_at"] == .null)
        let questions = try await stage.viewer.call(
            "poll-questions-get",
            ["poll_id": .string(id), "index": 2, "count": 1]
        )
        #expect(questions["questions"]?.arrayValue?.map { $0["index"] } == [2])
        #expect(questions["questions"]?[0]?["answer"] == nil)
        #expect(questions["last"] == false)

        let stopped = try await stage.moderator.call("poll-stop", ["poll_id": .string(id)])
        #expect(stopped["poll_id"] == .string(id))
        for client in stage.all + [restricted] {
            let poll = try #require(try await client.next("on-poll-stop")["polls"]?[0])
            #expect(poll["state"] == "stopped")
            #expect(poll["stopped_by"] == stage.id("moderator"))
            #expect(poll["questions"]?[0]?["answer"] == ["option": 2], "a stopped quiz shows its answers")
        }
        let after = try await stage.viewer.call("poll-questions-get", ["poll_id": .string(id)])
        #expect(after["questions"]?[0]?["answer"] == ["option": 2])
        #expect(after["last"] == true)
    }

    @Test func voteRolesDecideWhoMayVoteAndWhoHears() async throws {
        let template = try Daemon.shippedTemplate { roles in
            var permissions = roles["guest"]!["permissions"] as! [String: Any]
            permissions["pollRead"] = false
            roles["guest"]!["permissions"] = permissions
        }
        let stage = try await Stage(daemon: try await Daemon.start(template: template))
        let id = try await Self.makePoll(
            stage.host,
            ["title": "Viewers only", "type": "poll", "vote": ["viewer"]],
            questions: [
                [
                    "question": ["text": "?", "type": "single-choice"],
                    "options": [["text": "a"], ["text": "b"]],
                ]
            ]
        )
        _ = try await stage.viewer.next("on-poll-start")
        #expect(
            await Stage.methods(stage.guest).allSatisfy { $0 != "on-poll-start" },
            "a guest without pollRead that may not vote hears nothing"
        )
        #expect(
            try await stage.guest.errorCode(
                "poll-response",
                ["poll_id": .string(id), "responses": [["question": 1, "option": 1]]]
            ) == 40300
        )
        #expect(try await stage.guest.errorCode("poll-info-get", ["poll_id": .string(id)]) == 40300)
        #expect(try await stage.guest.call("poll-list")["polls"] == [])
        let voted = try await stage.viewer.call(
            "poll-response",
            ["poll_id": .string(id), "responses": [["question": 1, "option": 2]]]
        )
        #expect(voted == ["poll_id": .string(id), "result": [["question": 1]]], "no correct in a poll")
    }

    @Test func oneAnswerPerUserPerQuestionAndPerEntryErrors() async throws {
        let stage = try await Stage()
        let (restricted, _) = try await stage.daemon.join("r", as: "viewer", restrictions: "view_and_polls_only")
        let id = try await Self.makePoll(stage.host)
        let first = try await restricted.call(
            "poll-response",
            [
                "poll_id": .string(id),
                "responses": [
                    ["question": 1, "option": 2, "duration": 1200]
                ],
            ]
        )
        #expect(first["result"] == [["question": 1, "correct": true]], "view_and_polls_only peers may vote")
        let second = try await restricted.call(
            "poll-response",
            [
                "poll_id": .string(id),
                "responses": [
                    ["question": 1, "option": 1],
                    ["question": 2, "options": [1, 2]],
                    ["question": 3, "text": "because"],
                    ["question": 7, "option": 1],
                ],
            ]
        )
        let result = try #require(second["result"]?.arrayValue)
        #expect(result[0]["error"]?["code"] == 40906)
        #expect(result[0]["correct"] == nil)
        #expect(result[1] == ["question": 2, "correct": false], "the other answers of the call still count")
        #expect(result[2] == ["question": 3])
        #expect(result[3]["error"]?["code"] == -32602)
        // The same user on another connection is the same voter.
        let (twin, _) = try await stage.daemon.join("r", as: "viewer")
        let again = try await twin.call(
            "poll-response",
            ["poll_id": .string(id), "responses": [["question": 2, "options": [1, 3]]]]
        )
        #expect(again["result"]?[0]?["error"]?["code"] == 40906)

        let bad = try await stage.viewer.call(
            "poll-response",
            [
                "poll_id": .string(id),
                "responses": [
                    ["question": 1, "options": [2]],
                    ["question": 1, "option": 3],
                    ["question": 2, "options": [0]],
                    ["question": 3, "text": .string(String(repeating: "x", count: 21))],
                    ["question": 1, "skipped": true],
                    ["question": 3, "skipped": true],
                ],
            ]
        )
        let codes: [Int?] = bad["result"]?.arrayValue?.map { $0["error"]?["code"]?.intValue } ?? []
        #expect(codes == [-32602, -32602, -32602, -32602, -32602, nil])
        let result2 = try await stage.host.call("poll-result", ["poll_id": .string(id)])
        #expect(result2["user_count"] == 2)
        #expect(result2["max_user"] == 6, "every peer may vote: 4 + restricted + twin")
        #expect(result2["total_response"] == 3)
        #expect(
            result2["questions"]?[0] == [
                "question": 1, "type": "single-choice", "options": [0, 1], "skipped": 0,
                "total": 1, "correct": 1,
            ]
        )
        #expect(result2["questions"]?[2]?["skipped"] == 1)
        #expect(result2["questions"]?[2]?["total"] == 1)
    }

    @Test func errorCodes() async throws {
        let daemon = try await Daemon.start(settings: #"{"polls":{"max_polls":2}}"#)
        let stage = try await Stage(daemon: daemon)
        let (restrictedHost, _) = try await daemon.join("rh", as: "host", restrictions: "view_and_polls_only")
        #expect(try await stage.guest.errorCode("poll-info-set", ["title": "x", "type": "poll"]) == 40300)
        #expect(try await restrictedHost.errorCode("poll-info-set", ["title": "x", "type": "poll"]) == 40300)
        #expect(try await stage.host.errorCode("poll-info-set", ["title": "x", "type": "survey"]) == -32602)
        #expect(try await stage.host.errorCode("poll-info-set", ["type": "poll"]) == -32602)
        #expect(
            try await stage.host.errorCode("poll-info-set", ["poll_id": "bad id", "title": "x", "type": "poll"])
                == -32602
        )
        #expect(
            try await stage.host.errorCode(
                "poll-info-set",
                ["title": .string(String(repeating: "t", count: 1025)), "type": "poll"]
            ) == 41300
        )
        #expect(try await stage.host.errorCode("poll-start", ["poll_id": "nope"]) == 40404)
        #expect(try await stage.viewer.errorCode("poll-info-get", ["poll_id": "nope"]) == 40404)

        let created = try await stage.host.call("poll-info-set", ["poll_id": "mine", "title": "x", "type": "poll"])
        #expect(created == ["poll_id": "mine"], "a given unknown poll_id creates that poll")
        #expect(try await stage.host.errorCode("poll-start", ["poll_id": "mine"]) == 40904, "no questions")
        let option: JSON = ["text": "o"]
        let tooManyOptions: JSON = [
            [
                "question": ["text": "q", "type": "single-choice"],
                "options": .array(Array(repeating: option, count: 11)),
            ]
        ]
        #expect(
            try await stage.host.errorCode("poll-questions-set", ["poll_id": "mine", "questions": tooManyOptions])
                == 40907
        )
        let question: JSON = ["question": ["text": "q", "type": "single-choice"], "options": [option]]
        #expect(
            try await stage.host.errorCode(
                "poll-questions-set",
                ["poll_id": "mine", "questions": .array(Array(repeating: question, count: 21))]
            ) == 40907
        )
        #expect(
            try await stage.host.errorCode(
                "poll-questions-set",
                [
                    "poll_id": "mine",
                    "questions": [["question": ["text": "q", "type": "short-answer"], "options": [option]]],
                ]
            ) == -32602
        )
        _ = try await stage.host.call("poll-questions-set", ["poll_id": "mine", "questions": [question]])
        #expect(try await stage.host.errorCode("poll-stop", ["poll_id": "mine"]) == 40904, "not started")
        #expect(
            try await stage.viewer.errorCode(
                "poll-response",
                ["poll_id": "mine", "responses": [["question": 1, "option": 1]]]
            ) == 40404,
            "a draft is unknown to voters"
        )
        _ = try await stage.host.call("poll-start", ["poll_id": "mine"])
        for (method, params) in [
            ("poll-stop", ["poll_id": "mine"]), ("poll-start", ["poll_id": "mine"]),
            ("poll-questions-set", ["poll_id": "mine", "questions": []]),
            ("poll-info-set", ["poll_id": "mine", "title": "x", "type": "poll"]),
        ] as [(String, JSON)] {
            let failure = try await restrictedHost.failure(method, params)
            #expect(failure.code == 40300, "\(method)")
            #expect(failure.message == "permission denied: \(method) is not allowed for view_and_polls_only")
        }
        #expect(try await stage.host.errorCode("poll-start", ["poll_id": "mine"]) == 40904, "started twice")
        #expect(
            try await stage.host.errorCode("poll-info-set", ["poll_id": "mine", "title": "y", "type": "poll"]) == 40904
        )
        #expect(try await stage.host.errorCode("poll-questions-set", ["poll_id": "mine", "questions": []]) == 40904)
        #expect(try await stage.viewer.errorCode("poll-response", ["poll_id": "mine"]) == -32602)
        #expect(try await stage.host.errorCode("poll-leaderboard", ["poll_id": "mine"]) == -32602, "not a quiz")
        _ = try await stage.host.call("poll-stop", ["poll_id": "mine"])
        #expect(try await stage.host.errorCode("poll-stop", ["poll_id": "mine"]) == 40904, "already stopped")
        #expect(
            try await stage.viewer.errorCode(
                "poll-response",
                ["poll_id": "mine", "responses": [["question": 1, "option": 1]]]
            ) == 40904
        )

        _ = try await stage.host.call("poll-info-set", ["title": "second", "type": "poll"])
        #expect(
            try await stage.host.errorCode("poll-info-set", ["title": "third", "type": "poll"]) == 40907,
            "max_polls"
        )
        #expect(try await stage.viewer.errorCode("poll-list", ["state": "done"]) == -32602)
        // Paging far past the end (up to Int.max) is an empty last page, not an overflow.
        let huge = JSON.int(Int.max)
        #expect(try await stage.host.call("poll-questions-get", ["poll_id": "mine", "index": huge])["last"] == true)
        #expect(try await stage.host.call("poll-responses", ["poll_id": "mine", "index": huge])["last"] == true)
        #expect(
            try await stage.host.call("poll-responses", ["poll_id": "mine", "index": huge, "self": true])["last"]
                == true
        )
        #expect(try await stage.host.call("ping")["server_time"] != nil, "roomd is still there")
    }

    @Test func listNewestFirstWithStateFilter() async throws {
        let stage = try await Stage()
        let first = try await Self.makePoll(stage.host, ["title": "one", "type": "quiz"])
        let second = try await Self.makePoll(stage.host, ["title": "two", "type": "quiz"])
        let draft = try await Self.makePoll(stage.host, ["title": "three", "type": "quiz"], start: false)
        _ = try await stage.host.call("poll-stop", ["poll_id": .string(first)])
        #expect(
            try await stage.host.call("poll-list")["polls"]?.arrayValue?.map { $0["poll_id"] } == [
                .string(draft), .string(second), .string(first),
            ]
        )
        #expect(
            try await stage.viewer.call("poll-list")["polls"]?.arrayValue?.map { $0["poll_id"] } == [
                .string(second), .string(first),
            ],
            "drafts are the writers' own"
        )
        #expect(
            try await stage.viewer.call("poll-list", ["state": "stopped"])["polls"]?.arrayValue?.map { $0["poll_id"] }
                == [.string(first)]
        )
        #expect(try await stage.host.call("poll-list", ["state": "started"])["polls"]?[0]?["questions"] == nil)
    }

    @Test func resultsAndResponsesVisibility() async throws {
        let stage = try await Stage()
        let id = try await Self.makePoll(
            stage.host,
            ["title": "q", "type": "quiz", "responses": ["moderator", "guest"]]
        )
        _ = try await stage.viewer.call(
            "poll-response",
            ["poll_id": .string(id), "responses": [["question": 1, "option": 1]]]
        )
        _ = try await stage.guest.call(
            "poll-response",
            ["poll_id": .string(id), "responses": [["question": 1, "option": 2]]]
        )
        #expect(
            try await stage.viewer.errorCode("poll-result", ["poll_id": .string(id)]) == 40300,
            "hidden until stopped"
        )
        #expect(try await stage.viewer.errorCode("poll-responses", ["poll_id": .string(id)]) == 40300)
        let mine = try await stage.viewer.call("poll-responses", ["poll_id": .string(id), "self": true])
        #expect(
            mine["responses"] == [
                [
                    "question": 1, "option": 1, "skipped": false,
                    "peer": ["peer_id": stage.id("viewer"), "role": "viewer", "info": ["name": "v", "user_id": "v"]],
                ]
            ]
        )
        let all = try await stage.guest.call("poll-responses", ["poll_id": .string(id), "count": 1])
        #expect(all["responses"]?.arrayValue?.count == 1, "the responses roles read everything")
        #expect(all["last"] == false)
        let page2 = try await stage.guest.call("poll-responses", ["poll_id": .string(id), "index": 1])
        #expect(page2["responses"]?[0]?["peer"]?["peer_id"] == stage.id("guest"))
        #expect(page2["last"] == true)
        #expect(
            try await stage.viewer.errorCode("poll-leaderboard", ["poll_id": .string(id)]) == 40300,
            "until stopped"
        )
        _ = try await stage.host.call("poll-stop", ["poll_id": .string(id)])
        let result = try await stage.viewer.call("poll-result", ["poll_id": .string(id)])
        #expect(result["questions"]?[0]?["options"] == [1, 1])
        #expect(result["questions"]?[0]?["correct"] == 1, "answers are public once stopped")
        let board = try await stage.viewer.call("poll-leaderboard", ["poll_id": .string(id)])
        #expect(
            board["entries"]?.arrayValue?.map { $0["peer"]?["peer_id"] } == [stage.id("guest"), stage.id("viewer")]
        )
        #expect(board["entries"]?.arrayValue?.map { $0["position"] } == [1, 2])
        #expect(board["entries"]?[0]?["score"] == 2)
        #expect(board["entries"]?[1]?["score"] == 0, "users with 0 points are listed")
        #expect(board["voted_users"] == 2)
        #expect(board["total_users"] == 4)
        #expect(board["correct_users"] == 0, "nobody answered every question right")
    }

    @Test func anonymousPollsNeverNameTheVoter() async throws {
        let stage = try await Stage()
        let id = try await Self.makePoll(stage.host, ["title": "q", "type": "quiz", "anonymous": true])
        _ = try await stage.viewer.call(
            "poll-response",
            ["poll_id": .string(id), "responses": [["question": 1, "option": 2]]]
        )
        let all = try await stage.host.call("poll-responses", ["poll_id": .string(id)])
        #expect(all["responses"]?[0]?["peer"] == nil)
        #expect(all["responses"]?[0]?["option"] == 2)
        let mine = try await stage.viewer.call("poll-responses", ["poll_id": .string(id), "self": true])
        #expect(mine["responses"]?[0]?["peer"] == nil)
        let board = try await stage.host.call("poll-leaderboard", ["poll_id": .string(id)])
        #expect(board["entries"]?[0]?["score"] == 2)
        #expect(board["entries"]?[0]?["peer"] == nil)
    }

    @Test func statsAreCoalescedAndGoToWritersUnlessVisible() async throws {
        let daemon = try await Daemon.start(settings: #"{"polls":{"stats_interval_ms":300}}"#)
        let stage = try await Stage(daemon: daemon)
        var voters: [RoomClient] = []
        for i in 0..<12 { voters.append(try await daemon.join("x\(i)", as: "viewer").client) }
        try await stage.settle()
        let id = try await Self.makePoll(stage.host)
        try await stage.settle()
        for voter in voters { _ = voter.drain() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for voter in voters {
                group.addTask {
                    _ = try await voter.call(
                        "poll-response",
                        ["poll_id": .string(id), "responses": [["question": 1, "option": 2]]]
                    )
                }
            }
            try await group.waitForAll()
        }
        let first = try await stage.host.next("on-poll-stats")
        let window = await stage.host.expectSilence(for: .milliseconds(700))
        let stats = [first] + window.filter { $0["method"] == "on-poll-stats" }.compactMap { $0["params"] }
        #expect(stats.count <= 2, "12 votes: at most one push per 300 ms, not one per vote")
        #expect(stats.last?["user_count"] == 12, "the last push has every vote")
        #expect(first["poll_id"] == .string(id))
        #expect(first["questions"]?[0]?["correct"] != nil, "writers see the correct counts")
        _ = try await stage.moderator.next("on-poll-stats")
        for client in [stage.viewer, stage.guest] + voters {
            #expect(
                await Stage.methods(client, within: .milliseconds(50)).allSatisfy { $0 != "on-poll-stats" },
                "visibility false: writers only"
            )
        }
        #expect(await Stage.methods(stage.host, within: .milliseconds(700)).isEmpty, "nothing changed: no push")

        let visible = try await Self.makePoll(
            stage.host,
            ["title": "v", "type": "poll", "visibility": true],
            questions: [["question": ["text": "?", "type": "single-choice"], "options": [["text": "a"]]]]
        )
        _ = try await stage.guest.call(
            "poll-response",
            ["poll_id": .string(visible), "responses": [["question": 1, "option": 1]]]
        )
        let seen = try await stage.viewer.next("on-poll-stats")
        #expect(seen["poll_id"] == .string(visible))
        #expect(seen["questions"]?[0]?["options"] == [1])
        #expect(seen["questions"]?[0]?["correct"] == nil)
        #expect(try await stage.viewer.call("poll-result", ["poll_id": .string(visible)])["user_count"] == 1)
    }

    /// On the manual clock: a 30-s quiz stops at 30 s, not a millisecond before.
    @Test func durationEndsThePollWithStoppedByNull() async throws {
        let daemon = try await TestModeTests.manualEverywhere()
        let stage = try await Stage(daemon: daemon)
        let id = try await Self.makePoll(stage.host, ["title": "quick", "type": "quiz", "duration": 30])
        _ = try await stage.viewer.next("on-poll-start")
        try await TestModeTests.advanceAll(daemon, by: 29_999)
        #expect(await Stage.methods(stage.viewer).allSatisfy { $0 != "on-poll-stop" })
        try await TestModeTests.advanceAll(daemon, by: 1)
        let stop = try await stage.viewer.next("on-poll-stop")
        #expect(stop["polls"]?[0]?["poll_id"] == .string(id))
        #expect(stop["polls"]?[0]?["stopped_by"] == .null)
        #expect(stop["polls"]?[0]?["state"] == "stopped")
        let info = try await stage.host.call("poll-info-get", ["poll_id": .string(id)])
        #expect(info["duration"] == 30)
        #expect(info["stopped_at"]?.intValue == Int(TestModeTests.start) + 30_000)
    }

    @Test func pollsBelongToTheSessionAndVotesAreCounted() async throws {
        let daemon = try await Daemon.start(settings: #"{"room":{"reconnect_grace_s":0}}"#)
        let (host, _) = try await daemon.join("h", as: "host")
        let (viewer, _) = try await daemon.join("v", as: "viewer")
        let id = try await Self.makePoll(host)
        _ = try await viewer.call(
            "poll-response",
            [
                "poll_id": .string(id),
                "responses": [
                    ["question": 1, "option": 2], ["question": 2, "options": [1, 3]], ["question": 1, "option": 1],
                ],
            ]
        )
        let metrics = try await daemon.metricsText()
        #expect(metrics.contains("roomd_poll_votes_total 2"), "accepted answers only")
        try await viewer.leave()
        try await host.leave()
        let (again, _) = try await daemon.join("h", as: "host")
        #expect(try await again.call("poll-list")["polls"] == [], "a new session has no polls")
        #expect(try await again.errorCode("poll-info-get", ["poll_id": .string(id)]) == 40404)
    }

    @Test func draftsAreEditedInPlaceAndTextsAreBounded() async throws {
        let stage = try await Stage()
        let id = try await Self.makePoll(stage.host, ["title": "first", "type": "quiz"], start: false)
        #expect(
            try await stage.host.call(
                "poll-info-set",
                ["poll_id": .string(id), "title": "second", "type": "quiz", "duration": 30]
            )
                == ["poll_id": .string(id)]
        )
        let info = try await stage.host.call("poll-info-get", ["poll_id": .string(id)])
        #expect(info["title"] == "second")
        #expect(info["duration"] == 30)
        #expect(info["questions_count"] == 3, "editing the info keeps the questions")
        let long = JSON.string(String(repeating: "é", count: 513))  // 1026 bytes
        #expect(
            try await stage.host.errorCode(
                "poll-questions-set",
                [
                    "poll_id": .string(id),
                    "questions": [
                        ["question": ["text": long, "type": "short-answer"]]
                    ],
                ]
            ) == 41300
        )
        #expect(
            try await stage.host.errorCode(
                "poll-questions-set",
                [
                    "poll_id": .string(id),
                    "questions": [
                        [
                            "question": ["text": "q", "type": "single-choice"], "options": [["text": long]],
                            "answer": ["option": 1],
                        ]
                    ],
                ]
            ) == 41300
        )
        // 1.2: a quiz's choice question may wait for its answer (a prediction, PollPointsTests).
        let prediction = try #require(
            try await stage.host.call("poll-info-set", ["title": "p", "type": "quiz"])["poll_id"]
        )
        let unanswered = try await stage.host.call(
            "poll-questions-set",
            [
                "poll_id": prediction,
                "questions": [["question": ["text": "q", "type": "single-choice"], "options": [["text": "a"]]]],
            ]
        )
        #expect(unanswered["total_questions"] == 1)
        #expect(
            try await stage.host.errorCode("poll-info-set", ["title": "t", "type": "poll", "vote": ["nobody"]]) == 40402
        )
        _ = try await stage.host.call("poll-start", ["poll_id": .string(id)])
        let entry = try await stage.viewer.call(
            "poll-response",
            [
                "poll_id": .string(id),
                "responses": [
                    ["question": 3, "text": .string(String(repeating: "x", count: 1025))]
                ],
            ]
        )
        #expect(entry["result"]?[0]?["error"]?["code"] == 41300)
    }

    @Test func theStopReachesTheSamePeersAsTheStart() async throws {
        let template = try Daemon.shippedTemplate { roles in
            var permissions = roles["guest"]!["permissions"] as! [String: Any]
            permissions["pollRead"] = false
            roles["guest"]!["permissions"] = permissions
        }
        let stage = try await Stage(daemon: try await Daemon.start(template: template))
        let id = try await Self.makePoll(stage.host, ["title": "v", "type": "quiz", "vote": ["viewer"]])
        _ = try await stage.host.call("poll-stop", ["poll_id": .string(id)])
        for client in [stage.host, stage.moderator, stage.viewer] {
            #expect(Set(await Stage.methods(client)).isSuperset(of: ["on-poll-start", "on-poll-stop"]))
        }
        #expect(await Stage.methods(stage.guest).isEmpty, "a guest that may neither read nor vote hears nothing")
    }
}
