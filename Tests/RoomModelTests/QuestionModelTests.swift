import RoomConfig
import Testing

@testable import RoomModel

/// Q&A without sockets (PROTOCOL.md section 21): bounds and the saved state.
@Suite struct QuestionModelTests {
    @Test func aSnapshotKeepsEveryCountAndTheVotesThatFit() throws {
        var settings = Settings()
        settings.qa.maxQuestions = 10
        let (registry, _) = Fixtures.registry(settings: settings)
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let asked = try registry.addQuestion(by: host, text: "popular?")
        // 10,000 voters: their ids take ~150 KB, over the votes budget (64 KiB).
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
        #expect(restored.votes.isEmpty, "who voted does not fit: left out")
        #expect(decoded.questionsAdded == 1)
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
