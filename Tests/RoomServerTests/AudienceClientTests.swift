import Foundation
import RoomClient
import RoomWire
import Testing

/// The typed RoomClient calls of sections 13–15 decode what roomd sends.
@Suite struct AudienceClientTests {
    @Test func typedSessionStoreAndPollReads() async throws {
        let daemon = try await Daemon.start()
        let host = try await daemon.client()
        let preview = try await host.preview(token: try daemon.token(user: "h", role: "host"))
        #expect(preview.room == nil && preview.peerCount == 0 && preview.policy.name == "host")
        let joined = try await host.join(token: try daemon.token(user: "h", role: "host", name: "Hana"))
        let viewer = try await daemon.client()
        try await viewer.join(token: try daemon.token(user: "v", role: "viewer"))

        #expect(try await viewer.listenMetadata(["b", "a", "a"]) == ["a", "b"])
        let set = try await host.setMetadata("a", value: ["n": 1])
        #expect(set.version == 1 && set.updatedBy?.peerID == joined.peer.peerID && set.updatedAt != nil)
        let change = try await viewer.next { if case .metadataChanged(let entries) = $0 { entries } else { nil } }
        #expect(change == [set])
        #expect(try await viewer.metadata("a") == set)
        #expect(try await viewer.metadata("zzz") == MetadataEntry(key: "zzz", value: .null, version: 0))
        #expect(try await viewer.allMetadata().map(\.key) == ["a"])

        let id = try await host.setPollInfo(
            pollID: "p1",
            title: "Lunch?",
            type: .poll,
            visibility: true,
            vote: ["viewer"],
            responses: ["host"]
        )
        #expect(id == "p1")
        #expect(
            try await host.setPollQuestions(
                pollID: id,
                [
                    PollQuestionDraft("Where?", type: .multipleChoice, options: ["here", "there", "anywhere"]),
                    PollQuestionDraft("Why?", type: .longAnswer, skippable: true, answerMinLen: 2, answerMaxLen: 50),
                ]
            ) == 2
        )
        let draft = try await host.pollInfo(id)
        #expect(draft.state == .created && draft.vote == ["viewer"] && draft.responses == ["host"] && draft.visibility)
        #expect(draft.createdBy == joined.peer.peerID && draft.startedAt == nil && draft.questionsCount == 2)
        try await host.startPoll(id)
        let started = try await viewer.next { if case .pollStarted(let polls) = $0 { polls } else { nil } }
        #expect(started.first?.questions?.map(\.type) == [.multipleChoice, .longAnswer])
        #expect(started.first?.questions?[1].answerMaxLen == 50)
        let outcomes = try await viewer.respondToPoll(
            pollID: id,
            [
                PollAnswer(question: 1, options: [1, 3]), PollAnswer(question: 2, text: "x"),
            ]
        )
        #expect(outcomes.map(\.errorCode) == [nil, -32602], "answer_min_len 2")
        #expect(outcomes[0].correct == nil)

        let (questions, last) = try await viewer.pollQuestions(id, index: 2)
        #expect(questions.map(\.index) == [2] && last)
        #expect(try await viewer.polls(state: .started).map(\.pollID) == [id])
        let result = try await viewer.pollResult(id)
        #expect(result.userCount == 1 && result.maxUser == 1 && result.totalResponse == 1)
        #expect(result.questions[0].options == [1, 0, 1] && result.questions[0].correct == nil)
        let stats = try await viewer.next { if case .pollStats(let r) = $0 { r } else { nil } }
        #expect(stats == result)
        let (mine, _) = try await viewer.pollResponses(id, own: true)
        #expect(mine.first?.options == [1, 3] && mine.first?.peer?.userID == "v")
        let (all, allLast) = try await host.pollResponses(id, count: 1)
        #expect(all.count == 1 && allLast)
        try await host.stopPoll(id)
        let stopped = try await viewer.next { if case .pollStopped(let polls) = $0 { polls } else { nil } }
        #expect(
            stopped.first?.stoppedBy == joined.peer.peerID && stopped.first?.questions == nil,
            "a poll's stop carries no questions"
        )
    }
}
