import Foundation
import RoomClient
import RoomWire
import Testing

/// Chat history, deletion and pinning (PROTOCOL.md section 19): what is
/// kept, what a join and `chat-history` return, who may delete, clear and
/// pin, and who hears of it. Shipped roles: host and moderator have
/// `moderateChat`, guest and viewer do not.
@Suite struct ChatHistoryTests {
    /// Sends `text` to everyone from `client`; returns its message id.
    static func say(_ client: RoomClient, _ text: String) async throws -> String {
        try await client.call("broadcast", ["info": ["message": .string(text)]])["message_id"]!.stringValue!
    }

    static func texts(_ messages: JSON?) -> [String] {
        (messages?.arrayValue ?? []).compactMap { $0["info"]?["message"]?.stringValue }
    }

    @Test func messagesToEveryoneAreKeptAndAJoinGetsTheNewest() async throws {
        let stage = try await Stage()
        let first = try await Self.say(stage.guest, "hello")
        _ = try await stage.host.call("broadcast", ["info": ["message": "direct"], "peer_id": stage.id("guest")])
        _ = try await stage.host.call("broadcast", ["info": ["message": "to hosts"], "roles": ["host"]])
        let token = try stage.daemon.managementToken()
        let rest = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/send-message",
            token: token,
            body: #"{"message":"from the operator","type":"notice"}"#
        )
        #expect(rest.status == 200, "\(rest.body)")
        try await stage.settle()

        let (late, joined) = try await stage.daemon.join("late", as: "viewer")
        defer { _ = late }
        let chat = try #require(joined["chat"])
        #expect(
            Self.texts(chat["messages"]) == ["hello", "from the operator"],
            "direct and role messages are not kept"
        )
        #expect(chat["pinned"] == .null)
        let hello = try #require(chat["messages"]?[0])
        #expect(hello["message_id"]?.stringValue == first)
        #expect(hello["sender"]?["peer_id"] == stage.id("guest"))
        #expect(hello["sender"]?["info"]?["user_id"] == "g")
        #expect(hello["info"] == ["message": "hello", "type": "chat"])
        #expect(hello["recipient"] == nil, "a kept message has no recipient")
        #expect(hello["timestamp"]?.intValue != nil)
        let notice = try #require(chat["messages"]?[1])
        #expect(notice["sender"] == ["peer_id": nil, "role": nil, "info": ["name": "server"]])
        #expect(notice["info"]?["type"] == "notice")
        // The client kit decodes it.
        let decoded = try JoinResult(json: joined)
        #expect(decoded.chat.messages.map(\.messageID) == [first, rest.body["message_id"]!.stringValue!])
        #expect(decoded.chat.pinned == nil)
    }

    @Test func aJoinGetsAtMostFiftyAndChatHistoryPagesBackwards() async throws {
        let stage = try await Stage()
        var ids: [String] = []
        for n in 0..<120 { ids.append(try await Self.say(stage.host, "m\(n)")) }
        let (late, joined) = try await stage.daemon.join("late", as: "guest")
        defer { _ = late }
        #expect(Self.texts(joined["chat"]?["messages"]) == (70..<120).map { "m\($0)" })

        let newest = try await late.chatHistory(limit: 30)
        #expect(newest.messages.map(\.message) == (90..<120).map { "m\($0)" })
        #expect(newest.more)
        let older = try await late.chatHistory(before: newest.messages[0].messageID, limit: 200)
        #expect(older.messages.map(\.message) == (0..<90).map { "m\($0)" })
        #expect(!older.more, "nothing older remains")
        let defaultPage = try await late.call("chat-history", [:])
        #expect(Self.texts(defaultPage["messages"]).count == 50, "limit defaults to 50")
        #expect(defaultPage["more"] == true)
        let oldest = try await late.chatHistory(before: ids[0])
        #expect(oldest.messages.isEmpty && !oldest.more)

        // Bad input: the documented code, the field named.
        let unknown = try await late.failure("chat-history", ["before": "no-such-message"])
        #expect(unknown.code == 40405 && unknown.message.contains("before"), "\(unknown)")
        for limit: JSON in [0, 201, -1, .number("9223372036854775807"), .number("1e400"), "5"] {
            let bad = try await late.failure("chat-history", ["limit": limit])
            #expect(bad.code == -32602 && bad.message.contains("limit"), "\(limit): \(bad)")
        }
        #expect(try await late.errorCode("chat-history", ["before": 3]) == -32602)
    }

    @Test func theSenderOrAModeratorDeletesAndEveryoneHearsIt() async throws {
        let stage = try await Stage()
        let guests = try await Self.say(stage.guest, "mine")
        let hosts = try await Self.say(stage.host, "the host's")
        try await stage.settle()

        let denied = try await stage.guest.failure("message-delete", ["message_id": .string(hosts)])
        #expect(denied.code == 40300 && denied.message.contains("moderateChat"), "\(denied)")
        #expect(try await stage.guest.call("message-delete", ["message_id": .string(guests)]) == [:])
        for client in stage.all {
            let pushed = try await client.next("on-message-delete")
            #expect(pushed["message_id"]?.stringValue == guests)
            #expect(pushed["deleted_by"]?["peer_id"] == stage.id("guest"))
        }
        #expect(try await stage.guest.errorCode("message-delete", ["message_id": .string(guests)]) == 40405)
        try await stage.moderator.deleteMessage(hosts)
        let event = try await stage.viewer.nextEvent()
        guard case .messageDeleted(hosts, let by) = event else {
            Issue.record("expected on-message-delete, got \(event)")
            return
        }
        #expect(by.peerID == stage.ids["moderator"] && by.role == "moderator")
        #expect(try await stage.viewer.chatHistory().messages.isEmpty, "both left the history")
        #expect(try await stage.host.errorCode("message-delete", [:]) == -32602)
        #expect(try await stage.host.errorCode("message-delete", ["message_id": "nope"]) == 40405)

        // The same user on another connection may delete what it sent.
        let again = try await Self.say(stage.guest, "again")
        let (second, _) = try await stage.daemon.join("g", as: "guest")
        defer { _ = second }
        try await second.deleteMessage(again)
    }

    @Test func viewAndPollsOnlyPeersReadTheHistoryAndNothingMore() async throws {
        let stage = try await Stage()
        let id = try await Self.say(stage.host, "welcome")
        let (restricted, joined) = try await stage.daemon.join(
            "r",
            as: "moderator",
            restrictions: "view_and_polls_only"
        )
        defer { _ = restricted }
        #expect(Self.texts(joined["chat"]?["messages"]) == ["welcome"])
        #expect(try await restricted.chatHistory().messages.map(\.messageID) == [id])
        #expect(try await restricted.errorCode("message-delete", ["message_id": .string(id)]) == 40300)
        #expect(try await restricted.errorCode("message-pin", ["message_id": .string(id)]) == 40300)
        #expect(try await restricted.errorCode("chat-clear") == 40300)
    }

    @Test func onePinnedMessageAndDeletingItUnpins() async throws {
        let stage = try await Stage()
        let first = try await Self.say(stage.guest, "pin me")
        let second = try await Self.say(stage.guest, "no, me")
        try await stage.settle()

        #expect(try await stage.guest.errorCode("message-pin", ["message_id": .string(first)]) == 40300)
        #expect(try await stage.host.errorCode("message-pin", [:]) == -32602, "absent is not null")
        #expect(try await stage.host.errorCode("message-pin", ["message_id": 1]) == -32602)
        #expect(try await stage.host.errorCode("message-pin", ["message_id": "nope"]) == 40405)
        #expect(try await stage.host.call("message-pin", ["message_id": .string(first)]) == [:])
        for client in stage.all {
            let pushed = try await client.next("on-message-pin")
            #expect(pushed["message"]?["message_id"]?.stringValue == first)
            #expect(pushed["message"]?["info"]?["message"] == "pin me")
            #expect(pushed["pinned_by"]?["peer_id"] == stage.id("host"))
        }
        try await stage.moderator.pinMessage(second)
        let event = try await stage.guest.nextEvent()
        guard case .messagePinned(let pinned?, let by) = event else {
            Issue.record("expected on-message-pin, got \(event)")
            return
        }
        #expect(pinned.messageID == second && by.peerID == stage.ids["moderator"])
        let (late, joined) = try await stage.daemon.join("late", as: "viewer")
        defer { _ = late }
        #expect(joined["chat"]?["pinned"]?["message_id"]?.stringValue == second, "one pinned message")
        try await stage.settle()

        // Deleting the pinned message: on-message-delete, then on-message-pin null by the deleter.
        try await stage.guest.deleteMessage(second)
        for client in stage.all + [late] {
            let methods = [try await client.nextMessage(), try await client.nextMessage()]
            #expect(methods.map { $0["method"]?.stringValue } == ["on-message-delete", "on-message-pin"])
            #expect(methods[1]["params"]?["message"] == .null)
            #expect(methods[1]["params"]?["pinned_by"]?["peer_id"] == stage.id("guest"))
        }
        #expect(try await stage.daemon.join("later", as: "viewer").result["chat"]?["pinned"] == .null)
        // null unpins (and says so even when nothing is pinned).
        try await stage.host.pinMessage(nil)
        #expect(try await late.next("on-message-pin")["message"] == .null)
    }

    @Test func aModeratorClearsTheChatAndThePinGoesWithIt() async throws {
        let stage = try await Stage()
        let id = try await Self.say(stage.guest, "soon gone")
        _ = try await Self.say(stage.host, "me too")
        try await stage.host.pinMessage(id)
        try await stage.settle()

        #expect(try await stage.guest.errorCode("chat-clear") == 40300)
        #expect(try await stage.moderator.call("chat-clear") == [:])
        for client in stage.all {
            let methods = [try await client.nextMessage(), try await client.nextMessage()]
            #expect(methods.map { $0["method"]?.stringValue } == ["on-chat-clear", "on-message-pin"])
            #expect(methods[0]["params"]?["cleared_by"]?["peer_id"] == stage.id("moderator"))
            #expect(methods[1]["params"]?["message"] == .null)
        }
        #expect(try await stage.guest.chatHistory().messages.isEmpty)
        #expect(try await stage.guest.errorCode("message-delete", ["message_id": .string(id)]) == 40405)
        // Nothing pinned: a clear is one push.
        try await stage.host.clearChat()
        #expect(await Stage.methods(stage.guest) == ["on-chat-clear"])
        // The history goes on after a clear.
        _ = try await Self.say(stage.guest, "after")
        #expect(try await stage.viewer.chatHistory().messages.map(\.message) == ["after"])
    }

    @Test func theHistoryKeepsHistorySizeMessagesAndZeroKeepsNone() async throws {
        let daemon = try await Daemon.start(settings: #"{"chat":{"history_size":3}}"#)
        let (host, _) = try await daemon.join("h", as: "host")
        var ids: [String] = []
        for n in 0..<5 { ids.append(try await Self.say(host, "m\(n)")) }
        #expect(try await host.chatHistory(limit: 200).messages.map(\.message) == ["m2", "m3", "m4"])
        #expect(try await host.errorCode("message-pin", ["message_id": .string(ids[0])]) == 40405, "dropped")
        // A deleted message's slot stays empty until newer ones take it.
        try await host.deleteMessage(ids[3])
        #expect(try await host.chatHistory().messages.map(\.message) == ["m2", "m4"])
        _ = try await Self.say(host, "m5")
        #expect(try await host.chatHistory().messages.map(\.message) == ["m4", "m5"])

        let none = try await Daemon.start(settings: #"{"chat":{"history_size":0}}"#)
        let (solo, _) = try await none.join("h", as: "host")
        let id = try await Self.say(solo, "not kept")
        let (late, joined) = try await none.join("late", as: "viewer")
        defer { _ = late }
        #expect(joined["chat"]?["messages"] == [] && joined["chat"]?["pinned"] == .null)
        #expect(try await solo.errorCode("message-delete", ["message_id": .string(id)]) == 40405)

    }

    /// An answer counts against `max_outbound_bytes` like a push: the
    /// messages of one answer are bounded by a quarter of it (newest first,
    /// at least one), and `more` says there is more to page.
    @Test func anAnswerOfMessagesNeverMakesItsCallerASlowConsumer() async throws {
        let daemon = try await Daemon.start(
            settings: #"{"limits":{"max_outbound_bytes":65536,"messages_per_second":1000,"message_burst":1000}}"#
        )
        let (host, _) = try await daemon.join("h", as: "host")
        let noisy = String(repeating: "\u{1}", count: 4000)  // 24 KB of JSON each
        var ids: [String] = []
        for n in 0..<20 { ids.append(try await Self.say(host, "\(n)\(noisy)")) }
        let (late, joined) = try await daemon.join("late", as: "viewer")
        let backfill = joined["chat"]?["messages"]?.arrayValue ?? []
        #expect(backfill.count == 1 && backfill.last?["message_id"]?.stringValue == ids[19], "\(backfill.count)")
        var seen = 0
        var before: String? = nil
        var more = true
        while more {
            let page = try await late.chatHistory(before: before, limit: 200)
            #expect(!page.messages.isEmpty)
            seen += page.messages.count
            before = page.messages.first?.messageID
            more = page.more
        }
        #expect(seen == 20, "every message reached by paging")
        #expect(!late.isClosed && !host.isClosed)
    }

    @Test func aResumedPeerGetsTheHistoryToo() async throws {
        let stage = try await Stage()
        _ = try await Self.say(stage.host, "while you were away")
        let guestID = try #require(stage.ids["guest"])
        let client = try await stage.daemon.client()
        let token = try stage.daemon.token(user: "g", role: "guest")
        let resumed = try await client.call("join", ["token": .string(token), "peer_id": .string(guestID)])
        #expect(resumed["resumed"] == true)
        #expect(Self.texts(resumed["chat"]?["messages"]) == ["while you were away"])
    }
}
