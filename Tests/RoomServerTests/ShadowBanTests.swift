import Foundation
import RoomClient
import RoomWire
import Testing

/// Shadow chat bans (1.3, PROTOCOL.md section 31), over real sockets: the
/// user is not told; its messages reach its own peers (unmarked) and the
/// moderators (marked `shadowed`), nobody else, in pushes and in the
/// history; its reports go nowhere; `chat-unban` ends it. Shipped roles:
/// host and moderator have `moderateChat`, guest and viewer do not.
@Suite struct ShadowBanTests {
    @Test func aShadowBannedUserIsHeardOnlyByItselfAndTheModerators() async throws {
        let stage = try await Stage()
        let (viewer2, joined2) = try await stage.daemon.join("v", as: "viewer")  // the same user, a second peer
        #expect(joined2["chat"]?["state"]?["chat_banned"] == false)
        try await stage.settle()

        _ = try await stage.moderator.call("chat-ban", ["user_id": "v", "shadow": true])
        #expect(await Stage.methods(stage.viewer).isEmpty, "the user is not told")
        #expect(await Stage.methods(viewer2).isEmpty)

        let sent = try await ChatModerationTests.say(stage.viewer, "buy followers at my site")
        let id = try #require(sent["message_id"]?.stringValue, "answered as success")
        for moderator in [stage.host, stage.moderator] {
            let heard = try await moderator.next("on-broadcast")
            #expect(heard["message_id"]?.stringValue == id && heard["shadowed"] == true, "\(heard)")
        }
        let own = try await viewer2.next("on-broadcast")
        #expect(own["message_id"]?.stringValue == id && own["shadowed"] == nil, "its own peers see it, unmarked")
        #expect(await Stage.methods(stage.guest).isEmpty, "nobody else hears it")

        // The history, as each reads it.
        func history(_ client: RoomClient) async throws -> [JSON] {
            try await client.call("chat-history", ["limit": 10])["messages"]?.arrayValue ?? []
        }
        #expect(try await history(stage.guest).isEmpty)
        #expect(try await history(viewer2).map { $0["shadowed"] } == [nil])
        #expect(try await history(stage.moderator).map { $0["shadowed"] } == [true])
        let (late, lateJoin) = try await stage.daemon.join("g2", as: "guest")
        #expect(lateJoin["chat"]?["messages"]?.arrayValue?.isEmpty == true, "a later join does not get it")
        try await stage.settle()  // the late join's on-peer-join

        // Its questions: its own peers (unmarked) and the moderators (marked) only.
        let asked = try await stage.viewer.call("question-add", ["text": "is this legit?"])
        let questionID = try #require(asked["question_id"]?.stringValue, "\(asked)")
        #expect(asked["shadowed"] == nil, "the asker is not told")
        let moderated = try await stage.moderator.next("on-questions")
        #expect(moderated["changed"]?[0]?["shadowed"] == true, "\(moderated)")
        let mine = try await viewer2.next("on-questions")
        #expect(
            mine["changed"]?[0]?["question_id"]?.stringValue == questionID && mine["changed"]?[0]?["shadowed"] == nil
        )
        #expect(await Stage.methods(stage.guest).isEmpty, "no on-questions for the others")
        #expect(try await stage.guest.call("question-list")["total"] == 0)
        #expect(try await viewer2.call("question-list")["total"] == 1)
        #expect(
            try await stage.guest.errorCode("question-vote", ["question_id": .string(questionID), "vote": "up"])
                == 40406
        )
        try await stage.settle()

        // Its report is answered and goes nowhere; its chat state says nothing.
        let report = try await stage.viewer.call(
            "report",
            ["peer_id": stage.id("guest"), "reason": "x"]
        )
        #expect(report["report_id"]?.stringValue?.isEmpty == false)
        #expect(await Stage.methods(stage.moderator).isEmpty, "no on-report from a shadowed user")

        // chat-unban: nothing to tell; its next message is normal again.
        _ = try await stage.moderator.call("chat-unban", ["user_id": "v"])
        #expect(await Stage.methods(stage.viewer).isEmpty)
        _ = try await ChatModerationTests.say(stage.viewer, "sorry")
        #expect(try await stage.guest.next("on-broadcast")["info"]?["message"] == "sorry")
        #expect(try await late.next("on-broadcast")["shadowed"] == nil)
    }

    @Test func aVisibleChatBanTurnedShadowLooksLiftedToTheUser() async throws {
        let stage = try await Stage()
        _ = try await stage.moderator.call("chat-ban", ["user_id": "v"])
        #expect(try await stage.viewer.next("on-chat-state")["chat_banned"] == true)
        _ = try await stage.moderator.call("chat-ban", ["user_id": "v", "shadow": true])
        #expect(try await stage.viewer.next("on-chat-state")["chat_banned"] == false)
        #expect(try await stage.viewer.errorCode("broadcast", ["info": ["message": "hi"]]) == nil)
        #expect(
            try await stage.moderator.errorCode("chat-ban", ["user_id": "v", "shadow": "yes"]) == -32602,
            "shadow: a boolean"
        )
    }
}
