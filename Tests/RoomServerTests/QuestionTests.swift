import Foundation
import RoomClient
import RoomWire
import Testing

/// Audience Q&A (PROTOCOL.md section 21): asking, voting, ordering, moderating,
/// and the coalesced `on-questions`. Shipped roles: host and moderator have
/// `moderateChat`. `interval_ms` 100 keeps the pushes quick.
@Suite struct QuestionTests {
    static let settings = #"{"qa":{"interval_ms":100,"max_questions":5}}"#

    static func stage() async throws -> Stage {
        try await Stage(daemon: await Daemon.start(settings: settings))
    }

    static func ask(_ client: RoomClient, _ text: String) async throws -> String {
        try #require(try await client.call("question-add", ["text": .string(text)])["question_id"]?.stringValue)
    }

    @Test func askVoteAndListTopAndNew() async throws {
        let stage = try await Self.stage()
        let asked = try await stage.guest.call("question-add", ["text": "first?"])
        #expect(asked["text"] == "first?" && asked["up"] == 0 && asked["down"] == 0 && asked["score"] == 0)
        #expect(asked["state"] == "open" && asked["pinned"] == false)
        #expect(asked["asked_by"]?["peer_id"] == stage.id("guest"))
        #expect(asked["asked_at"]?.intValue != nil)
        let first = try #require(asked["question_id"])
        let second = try await Self.ask(stage.viewer, "second?")
        let third = try await Self.ask(stage.host, "third?")

        // One vote per user, replaced by a later one; none withdraws; one's own question too.
        _ = try await stage.host.call("question-vote", ["question_id": .string(second), "vote": "up"])
        _ = try await stage.guest.call("question-vote", ["question_id": .string(second), "vote": "up"])
        _ = try await stage.guest.call("question-vote", ["question_id": .string(second), "vote": "down"])
        let voted = try await stage.viewer.call("question-vote", ["question_id": .string(second), "vote": "up"])
        #expect(voted["up"] == 2 && voted["down"] == 1 && voted["score"] == 1)
        let again = try await stage.viewer.call("question-vote", ["question_id": .string(second), "vote": "up"])
        #expect(again["up"] == 2, "a repeated vote changes nothing")
        _ = try await stage.moderator.call("question-vote", ["question_id": first, "vote": "down"])
        let withdrawn = try await stage.moderator.call("question-vote", ["question_id": first, "vote": "none"])
        #expect(withdrawn["down"] == 0)
        _ = try await stage.guest.call("question-vote", ["question_id": .string(third), "vote": "down"])

        let top = try await stage.viewer.call("question-list", [:])
        #expect(top["total"] == 3)
        #expect(top["questions"]?.arrayValue?.map { $0["text"]?.stringValue } == ["second?", "first?", "third?"])
        let new = try await stage.viewer.call("question-list", ["order": "new", "limit": 2])
        #expect(new["questions"]?.arrayValue?.map { $0["text"]?.stringValue } == ["third?", "second?"])
        #expect(new["total"] == 3, "total is before paging")
        let paged = try await stage.viewer.call("question-list", ["offset": 2])
        #expect(paged["questions"]?.arrayValue?.map { $0["text"]?.stringValue } == ["third?"])
        let far = try await stage.viewer.call("question-list", ["offset": .number("9223372036854775807")])
        #expect(far["questions"] == [] && far["total"] == 3)
    }

    /// One `on-questions` carries at most ~16 KiB of questions: ten 3,000-byte
    /// questions asked at once reach a viewer over several pushes, each under
    /// the bound, none lost; the bound keeps a viewer's Q&A traffic flat
    /// however many questions are being voted on.
    @Test func aPushCarriesAtMostSixteenKiBAndTheRestFollows() async throws {
        let stage = try await Stage(
            daemon: await Daemon.start(settings: #"{"qa":{"interval_ms":100,"max_questions":20}}"#)
        )
        let text = String(repeating: "q", count: 3000)
        var asked: Set<String> = []
        for _ in 0..<10 { asked.insert(try await Self.ask(stage.guest, text)) }
        var seen: Set<String> = []
        var pushes = 0
        while seen != asked {
            let push = try await stage.viewer.next("on-questions")
            let changed = push["changed"]?.arrayValue ?? []
            #expect(changed.count <= 5, "\(changed.count) questions of 3,000 bytes in one push")
            #expect(push.text.utf8.count <= 16 * 1024 + 1024)
            seen.formUnion(changed.compactMap { $0["question_id"]?.stringValue })
            pushes += 1
        }
        #expect(pushes >= 2)
    }

    @Test func badInputGetsTheDocumentedCodeWithTheFieldNamed() async throws {
        let stage = try await Self.stage()
        let id = try await Self.ask(stage.guest, "q")
        let cases: [(String, JSON, Int, String)] = [
            ("question-add", [:], -32602, "text"),
            ("question-add", ["text": ""], -32602, "text"),
            ("question-add", ["text": .string(String(repeating: "x", count: 4097))], 41300, "text"),
            ("question-vote", ["question_id": .string(id)], -32602, "vote"),
            ("question-vote", ["question_id": .string(id), "vote": "sideways"], -32602, "vote"),
            ("question-vote", ["question_id": "nope", "vote": "up"], 40406, "question_id"),
            ("question-list", ["limit": 0], -32602, "limit"),
            ("question-list", ["limit": 101], -32602, "limit"),
            ("question-list", ["offset": -1], -32602, "offset"),
            ("question-list", ["order": "best"], -32602, "order"),
            ("question-list", ["state": "closed"], -32602, "state"),
            ("question-update", ["question_id": .string(id)], -32602, "state or pinned"),
            ("question-update", ["question_id": "nope", "state": "answered"], 40406, "question_id"),
            ("question-delete", ["question_id": "nope"], 40406, "question_id"),
        ]
        for (method, params, code, field) in cases {
            let failure = try await stage.host.failure(method, params)
            #expect(failure.code == code && failure.message.contains(field), "\(method) \(params): \(failure)")
        }
        // max_questions (5) counts deleted ones too.
        for n in 0..<4 { _ = try await Self.ask(stage.host, "more \(n)") }
        _ = try await stage.host.call("question-delete", ["question_id": .string(id)])
        let tooMany = try await stage.guest.failure("question-add", ["text": "sixth"])
        #expect(tooMany.code == 40907 && tooMany.message.contains("max_questions"), "\(tooMany)")
    }

    @Test func moderatorsAnswerHideAndPinAndAskersMayOnlyWithdraw() async throws {
        let stage = try await Self.stage()
        let (restricted, _) = try await stage.daemon.join("r", as: "viewer", restrictions: "view_and_polls_only")
        let mine = try await Self.ask(stage.guest, "mine")
        let other = try await Self.ask(stage.viewer, "other")

        // The asker may hide (withdraw) its own, nothing else.
        #expect(
            try await stage.guest.errorCode("question-update", ["question_id": .string(mine), "state": "answered"])
                == 40300
        )
        #expect(
            try await stage.guest.errorCode("question-update", ["question_id": .string(mine), "pinned": true]) == 40300
        )
        #expect(
            try await stage.guest.errorCode("question-update", ["question_id": .string(other), "state": "hidden"])
                == 40300
        )
        #expect(try await stage.guest.errorCode("question-delete", ["question_id": .string(other)]) == 40300)
        let withdrawn = try await stage.guest.call(
            "question-update",
            ["question_id": .string(mine), "state": "hidden"]
        )
        #expect(withdrawn["state"] == "hidden")
        // Hidden: 40406 for everyone without moderateChat, the listing too.
        #expect(
            try await stage.viewer.errorCode("question-vote", ["question_id": .string(mine), "vote": "up"]) == 40406
        )
        #expect(try await stage.viewer.errorCode("question-list", ["state": "hidden"]) == 40300)
        #expect(try await stage.viewer.call("question-list", [:])["total"] == 1)
        let hidden = try await stage.moderator.call("question-list", ["state": "hidden"])
        #expect(hidden["questions"]?[0]?["question_id"]?.stringValue == mine)

        // Pin one, then another: at most one pinned; answered questions leave "open".
        _ = try await stage.host.call(
            "question-update",
            ["question_id": .string(mine), "state": "open", "pinned": true]
        )
        let pinned = try await stage.host.call("question-update", ["question_id": .string(other), "pinned": true])
        #expect(pinned["pinned"] == true)
        let list = try await stage.viewer.call("question-list", [:])
        #expect(
            list["questions"]?.arrayValue?.map { $0["pinned"] } == [true, false],
            "pinned first, the other unpinned"
        )
        _ = try await stage.host.call("question-update", ["question_id": .string(other), "state": "answered"])
        #expect(try await stage.viewer.call("question-list", ["state": "answered"])["total"] == 1)

        // view_and_polls_only: votes and reads, does not ask.
        #expect(try await restricted.errorCode("question-add", ["text": "?"]) == 40300)
        #expect(try await restricted.call("question-vote", ["question_id": .string(mine), "vote": "up"])["up"] == 1)
        // The asker, and a moderator, delete.
        #expect(try await stage.guest.call("question-delete", ["question_id": .string(mine)]) == [:])
        #expect(try await stage.moderator.call("question-delete", ["question_id": .string(other)]) == [:])
        #expect(try await stage.viewer.call("question-list", ["state": "answered"])["total"] == 0)
    }

    @Test func onQuestionsIsCoalescedAndHiddenOnesReachModeratorsOnly() async throws {
        let stage = try await Self.stage()
        try await stage.settle()
        let id = try await Self.ask(stage.guest, "coalesced?")
        for client in [stage.host, stage.viewer, stage.moderator] {
            for _ in 0..<5 { _ = try await client.call("question-vote", ["question_id": .string(id), "vote": "up"]) }
        }
        // One push per peer per interval, the asker's included, with the latest counts.
        for client in stage.all {
            let pushed = try await client.next("on-questions")
            #expect(pushed["changed"]?.arrayValue?.count == 1 && pushed["removed"] == [])
            let last = try await Self.latest(client, pushed)
            #expect(last["changed"]?[0]?["up"] == 3, "\(last)")
        }
        try await Task.sleep(for: .milliseconds(300))
        for client in stage.all { #expect(await Stage.methods(client).isEmpty, "nothing changed: no push") }

        // Hidden: moderators see the question, the others get its id in removed.
        _ = try await stage.moderator.call("question-update", ["question_id": .string(id), "state": "hidden"])
        for client in [stage.host, stage.moderator] {
            let pushed = try await client.next("on-questions")
            #expect(pushed["changed"]?[0]?["state"] == "hidden" && pushed["removed"] == [])
        }
        for client in [stage.guest, stage.viewer] {
            let pushed = try await client.next("on-questions")
            #expect(pushed == ["changed": [], "removed": [.string(id)]])
        }
        _ = try await stage.moderator.call("question-delete", ["question_id": .string(id)])
        for client in stage.all {
            #expect(try await client.next("on-questions")["removed"] == [.string(id)])
        }
    }

    /// Votes in flight can split over two intervals: the latest push holds the final counts.
    static func latest(_ client: RoomClient, _ first: JSON) async throws -> JSON {
        var last = first
        for push in await client.expectSilence(for: .milliseconds(250)) where push["method"] == "on-questions" {
            last = push["params"] ?? last
        }
        return last
    }

    @Test func theRoomClientKitAsksVotesAndHearsIt() async throws {
        let stage = try await Self.stage()
        let question = try await stage.guest.askQuestion("kit?")
        let voted = try await stage.viewer.voteQuestion(question.questionID, .up)
        #expect(voted.up == 1 && voted.score == 1)
        let page = try await stage.viewer.questions(order: .new)
        #expect(page.total == 1 && page.questions.map(\.text) == ["kit?"])
        let answered = try await stage.host.updateQuestion(question.questionID, state: .answered, pinned: true)
        #expect(answered.state == .answered && answered.pinned)
        let event = try await stage.viewer.next { event in
            if case .questions(let changed, _) = event, changed.first?.state == .answered { changed } else { nil }
        }
        #expect(event.first?.askedBy.userID == "g")
        try await stage.guest.deleteQuestion(question.questionID)
    }
}
