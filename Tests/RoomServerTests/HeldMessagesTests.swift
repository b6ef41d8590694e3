import Foundation
import RoomClient
import RoomWire
import Testing

/// Messages held for review (1.3, PROTOCOL.md section 31), over real
/// sockets: `settings.chat.hold` stops a viewer's first message, a link
/// or a word; the moderators see it and approve or reject it; the sender
/// hears the verdict. Shipped roles: host and moderator have
/// `moderateChat`, guest and viewer do not.
@Suite struct HeldMessagesTests {
    static let settings = #"{"chat":{"hold":{"first_message":true,"links":true,"words":["crypto"]}}}"#

    static func say(_ client: RoomClient, _ text: String) async throws -> JSON {
        try await client.call("broadcast", ["info": ["message": .string(text)]])
    }

    @Test func heldMessagesWaitForAModeratorAndTheSenderHearsTheVerdict() async throws {
        let stage = try await Stage(daemon: try await Daemon.start(settings: Self.settings))

        // The viewer's first message is held: answered held, seen by the moderators only.
        let first = try await Self.say(stage.viewer, "hello everyone")
        #expect(first["held"] == true, "\(first)")
        let firstID = try #require(first["message_id"]?.stringValue)
        for moderator in [stage.host, stage.moderator] {
            let held = try await moderator.next("on-message-held")
            #expect(held["message"]?["message_id"]?.stringValue == firstID, "\(held)")
            #expect(held["message"]?["info"]?["message"] == "hello everyone")
        }
        #expect(await Stage.methods(stage.guest).isEmpty, "nobody else sees it yet")

        // The second is not (first_message counts when sent); a link and a word are.
        #expect(try await Self.say(stage.viewer, "second").objectValue?.count == 2, "answered as usual")
        #expect(try await stage.guest.next("on-broadcast")["info"]?["message"] == "second")
        let link = try await Self.say(stage.viewer, "see www.example.com")
        let word = try await Self.say(stage.guest, "CRYPTO giveaway")  // the guest's first too
        #expect(link["held"] == true && word["held"] == true)
        #expect(try await Self.say(stage.host, "hosts are never held")["held"] == nil)

        let listed = try await stage.moderator.call("held-list")
        #expect(
            listed["messages"]?.arrayValue?.compactMap { $0["info"]?["message"]?.stringValue }
                == ["hello everyone", "see www.example.com", "CRYPTO giveaway"],
            "\(listed)"
        )
        #expect(try await stage.guest.errorCode("held-list") == 40300)
        try await stage.settle()

        // Approved: everyone but the sending peer gets it now, with the same id; it is in the history.
        _ = try await stage.moderator.call("message-approve", ["message_id": .string(firstID)])
        let approved = try await stage.guest.next("on-broadcast")
        #expect(approved["message_id"]?.stringValue == firstID)
        #expect((approved["timestamp"]?.intValue ?? 0) >= (first["timestamp"]?.intValue ?? .max))
        let verdict = try await stage.viewer.next("on-message-review")
        #expect(verdict == ["message_id": .string(firstID), "status": "approved", "reason": nil])
        #expect(!(await Stage.methods(stage.viewer)).contains("on-broadcast"), "not back to its sender")
        let history = try await stage.guest.call("chat-history", ["limit": 10])["messages"]?.arrayValue ?? []
        #expect(history.contains { $0["message_id"]?.stringValue == firstID })

        // Rejected: dropped, with the reason; a second verdict is 40405.
        let linkID = try #require(link["message_id"]?.stringValue)
        _ = try await stage.host.call("message-reject", ["message_id": .string(linkID), "reason": "no links, please"])
        let rejected = try await stage.viewer.next("on-message-review")
        #expect(rejected == ["message_id": .string(linkID), "status": "rejected", "reason": "no links, please"])
        #expect(try await stage.moderator.errorCode("message-approve", ["message_id": .string(linkID)]) == 40405)
        #expect(try await stage.guest.errorCode("message-reject", ["message_id": .string(linkID)]) == 40300)
        #expect(try await stage.moderator.call("held-list")["messages"]?.arrayValue?.count == 1)
        let after = try await stage.guest.call("chat-history", ["limit": 10])["messages"]?.arrayValue ?? []
        #expect(!after.contains { $0["message_id"]?.stringValue == linkID })
    }

    @Test func aShadowedMessageIsNeverHeld() async throws {
        let stage = try await Stage(daemon: try await Daemon.start(settings: Self.settings))
        _ = try await stage.moderator.call("chat-ban", ["user_id": "v", "shadow": true])
        let sent = try await Self.say(stage.viewer, "first, with https://example.com")
        #expect(sent["held"] == nil, "\(sent)")
        #expect(try await stage.moderator.next("on-broadcast")["shadowed"] == true)
        #expect(try await stage.moderator.call("held-list")["messages"] == [])
    }
}
