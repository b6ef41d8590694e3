import RoomConfig
import Testing

@testable import RoomModel

/// Q&A without sockets (PROTOCOL.md section 21): bounds and the saved state.
@Suite struct QuestionModelTests {
    /// 1.3: nothing is cut from the saved state — every count and who voted how.
    @Test func aSnapshotKeepsEveryCountAndEveryVote() throws {
        var settings = Settings()
        settings.qa.maxQuestions = 10
        let (registry, _) = Fixtures.registry(settings: settings)
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let asked = try registry.addQuestion(by: host, text: "popular?")
        // 10,000 voters: their ids take ~150 KB (before 1.3, over the votes' budget: left out).
        let voters = try (0..<10_000).map { n in try registry.join(Fixtures.request("voter-\(n)", role: "viewer")).peer
        }
        for (n, voter) in voters.enumerated() {
            _ = try registry.voteQuestion(by: voter, asked.id, n % 4 == 0 ? .down : .up)
        }
        let question = try #require(host.room.questions.question(asked.id))
        #expect(question.up == 7_500 && question.down == 2_500 && host.room.questions.votes == 10_000)
        let bytes = registry.snapshot(of: host.room).encodeJSON()
        let decoded = try RoomSnapshot(json: bytes)
        let restored = try #require(decoded.questions.first)
        #expect(restored.up == 7_500 && restored.down == 2_500, "the counts are kept")
        #expect(restored.votes.count == 10_000, "who voted how is kept")
        #expect(restored.votes.values.filter { $0 }.count == 7_500)
        #expect(decoded.questionsAdded == 1)
    }

    /// 500 questions all voted on in one interval: each push stays within the
    /// budget, an answer jumps ahead of the vote counts waiting, and every
    /// change arrives within a few pushes, oldest first.
    @Test func aPushCarriesAtMostItsBudgetAndAnswersGoFirst() throws {
        var template = Fixtures.template(settings: Settings())
        template.roles["host"]?.permissions.moderateChat = true
        let registry = RoomRegistry(template: template, clock: ManualClock(), ids: SequentialIDGenerator())
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        let asked = try (0..<500).map { n in
            try registry.addQuestion(by: viewer, text: "Question \(n): what would you ask the guest tonight?")
        }
        func push() -> [Question] {
            let deliveries = registry.tickQuestions()
            for delivery in deliveries {
                guard case .questions(let changed, _) = delivery.push else { continue }
                if delivery.audience.contains(where: { $0 === viewer }) { return changed }
            }
            return []
        }
        var additions = 0
        while case let batch = push(), !batch.isEmpty {
            #expect(batch.reduce(4) { $0 + $1.encodedSize + 1 } <= QuestionBoard.pushBudget)
            additions += batch.count
        }
        #expect(additions == 500, "every addition arrived, a budget at a time")

        for question in asked { _ = try registry.voteQuestion(by: viewer, question.id, .up) }
        let first = push()
        #expect(first.count > 1 && first.count < 500)
        #expect(first.map(\.id) == asked.prefix(first.count).map(\.id), "oldest vote first")
        _ = try registry.updateQuestion(by: host, asked[499].id, state: .answered, pinned: nil)
        let second = push()
        #expect(second.first?.id == asked[499].id && second.first?.state == .answered, "the answer goes first")
        #expect(second.dropFirst().first?.id == asked[first.count].id, "then the votes where the last push stopped")
        var seen = Set((first + second).map(\.id))
        var pushes = 2
        while case let batch = push(), !batch.isEmpty {
            seen.formUnion(batch.map(\.id))
            pushes += 1
        }
        #expect(seen.count == 500 && pushes < 20, "every change within \(pushes) pushes")
        #expect(push().isEmpty, "nothing pending is left")
    }

    /// The budget counts JSON as written: control characters take 6 bytes
    /// each, and deleted ids count too (before: raw text, and every id).
    @Test func aPushCountsEncodedBytesControlCharactersAndRemovedIDsIncluded() throws {
        var settings = Settings()
        settings.qa.maxQuestions = 2000
        let (registry, _) = Fixtures.registry(settings: settings)
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let text = String(repeating: "\u{01}", count: 1000)  // 6,000 bytes as JSON
        let asked = try (0..<20).map { _ in try registry.addQuestion(by: guest, text: text) }
        #expect(asked[0].encodedSize > 6000)
        var pushed = 0
        while case (let changed, let removed) = guest.room.questions.takeChanges(), !changed.isEmpty {
            #expect(removed.isEmpty)
            #expect(4 + changed.reduce(0) { $0 + $1.encodedSize + 1 } <= QuestionBoard.pushBudget)
            #expect(changed.count == 2, "two of 6 KB fit in 16 KiB")
            pushed += changed.count
        }
        #expect(pushed == 20)

        let more = try (0..<1980).map { n in try registry.addQuestion(by: guest, text: "q\(n)") }
        _ = guest.room.questions.takeChanges(budget: .max)
        for question in asked + more { try registry.deleteQuestion(by: guest, question.id) }
        var ids: [String] = []
        while case (let changed, let removed) = guest.room.questions.takeChanges(), !removed.isEmpty {
            #expect(changed.isEmpty)
            #expect(4 + removed.reduce(0) { $0 + QuestionBoard.encodedSize($1) + 1 } <= QuestionBoard.pushBudget)
            ids += removed
        }
        #expect(ids == (asked + more).map(\.id), "every deletion, in order, a budget at a time")
        #expect(!guest.room.questions.hasChanges)
    }

    @Test func maxQuestionsCountsDeletedOnesAndVotesAreBoundedPerRoom() throws {
        var settings = Settings()
        settings.qa.maxQuestions = 2
        let (registry, _) = Fixtures.registry(settings: settings)
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let first = try registry.addQuestion(by: guest, text: "1")
        try registry.deleteQuestion(by: guest, first.id)
        _ = try registry.addQuestion(by: guest, text: "2")
        #expect(code { _ = try registry.addQuestion(by: guest, text: "3") } == .tooMany)
        #expect(guest.room.questions.count == 1 && guest.room.questions.added == 2)
        #expect(QuestionBoard.maxVotes == 1_000_000)
    }
}
