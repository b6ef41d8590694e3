import RoomConfig
import RoomWire
import Testing

@testable import RoomModel

/// The chat history's ring and rules (PROTOCOL.md section 19), without sockets.
@Suite struct ChatHistoryModelTests {
    static func registry(historySize: Int = 200) -> (RoomRegistry, ManualClock) {
        var settings = Settings()
        settings.chat.historySize = historySize
        return Fixtures.registry(settings: settings)
    }

    static func say(_ registry: RoomRegistry, _ peer: Peer, _ text: String) throws -> String {
        try registry.broadcast(from: peer, message: text, type: "chat", to: .everyone).message.id
    }

    @Test func theRingKeepsTheNewestAndPagesSkipDeletedSlots() throws {
        let (registry, _) = Self.registry(historySize: 5)
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let room = host.room
        var ids: [String] = []
        for n in 0..<12 { ids.append(try Self.say(registry, host, "m\(n)")) }
        #expect(room.chat.messages.map(\.message) == ["m7", "m8", "m9", "m10", "m11"])
        #expect(room.chat.count == 5)
        #expect(room.chat.message(ids[6]) == nil, "dropped from the ring")
        _ = try registry.deleteMessage(ids[9], by: .peer(host), in: room)
        let page = try registry.chatHistory(in: room, before: ids[11], limit: 2)
        #expect(page.messages.map(\.message) == ["m8", "m10"] && page.more)
        let rest = try registry.chatHistory(in: room, before: ids[8], limit: 2)
        #expect(rest.messages.map(\.message) == ["m7"] && !rest.more)
        #expect(code { _ = try registry.chatHistory(in: room, before: ids[9], limit: 2) } == .messageNotFound)
        #expect(code { _ = try registry.chatHistory(in: room, before: ids[0], limit: 2) } == .messageNotFound)
        // Memory is the ring: thousands of messages later it still holds 5.
        for n in 0..<5000 { _ = try Self.say(registry, host, "x\(n)") }
        #expect(room.chat.count == 5 && room.chat.messages.last?.message == "x4999")
    }

    @Test func directAndRoleMessagesAreNeverKept() throws {
        let (registry, _) = Self.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        _ = try registry.broadcast(from: host, message: "direct", type: "chat", to: .peer(guest.id.rawValue))
        _ = try registry.broadcast(from: host, message: "roles", type: "chat", to: .roles(["guest"]))
        #expect(host.room.chat.count == 0)
        _ = try registry.send(from: .server, in: host.room, message: "rest", type: "chat", to: .everyone)
        #expect(host.room.chat.messages.map(\.sender) == [.server])
    }

    @Test func aPinOutlivesTheRingAndDeletingThePinnedUnpins() throws {
        var settings = Settings()
        settings.chat.historySize = 2
        var template = Fixtures.template(settings: settings)
        template.roles["host"]?.permissions.moderateChat = true
        let registry = RoomRegistry(template: template, clock: ManualClock(), ids: SequentialIDGenerator())
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let room = host.room
        let pinned = try Self.say(registry, guest, "pin")
        #expect(code { _ = try registry.pinMessage(pinned, by: .peer(guest), in: room) } == .permissionDenied)
        #expect(
            try registry.pinMessage(pinned, by: .peer(host), in: room).sent.map(\.push) == ["on-message-pin:\(pinned)"]
        )
        _ = try Self.say(registry, guest, "a")
        _ = try Self.say(registry, guest, "b")
        #expect(room.chat.message(pinned) == nil && room.chat.pinned?.id == pinned, "still pinned once dropped")
        #expect(registry.chatOnJoin(room).pinned?.message == "pin")

        let second = try Self.say(registry, guest, "c")
        _ = try registry.pinMessage(second, by: .server, in: room)
        let deleted = try registry.deleteMessage(second, by: .peer(guest), in: room)
        #expect(deleted.sent.map(\.push) == ["on-message-delete:\(second)", "on-message-pin:null"])
        #expect(deleted.sent.allSatisfy { $0.to == [host.id, guest.id] }, "every peer, the caller included")
        #expect(room.chat.pinned == nil)
        // A clear unpins too; without a pin it is one push.
        _ = try registry.pinMessage(try Self.say(registry, guest, "d"), by: .peer(host), in: room)
        #expect(
            try registry.clearChat(by: .peer(host), in: room).deliveries.sent.map(\.push) == [
                "on-chat-clear", "on-message-pin:null",
            ]
        )
        #expect(try registry.clearChat(by: .server, in: room).deliveries.sent.map(\.push) == ["on-chat-clear"])
        #expect(code { _ = try registry.clearChat(by: .peer(guest), in: room) } == .permissionDenied)
    }

    /// 1.3: nothing is cut from a room's saved state, however large.
    @Test func aSnapshotKeepsTheWholeHistory() throws {
        var settings = Settings()
        settings.chat.historySize = 10000
        var template = Fixtures.template(settings: settings)
        template.roles["host"]?.permissions.moderateChat = true
        let registry = RoomRegistry(template: template, clock: ManualClock(), ids: SequentialIDGenerator())
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        // Control bytes take 6 bytes each in JSON: 1,000 such messages would be 24 MB.
        let noisy = String(repeating: "\u{1}", count: 4000)
        for n in 0..<1000 { _ = try Self.say(registry, host, "\(n)" + noisy) }
        let bytes = registry.snapshot(of: host.room).encodeJSON()
        #expect(bytes.count > 24_000_000, "\(bytes.count) bytes")
        let decoded = try RoomSnapshot(json: bytes)
        #expect(decoded.chatMessages.count == 1000)
        #expect(decoded.chatMessages.map { String($0.message.prefix(while: \.isNumber)) } == (0..<1000).map { "\($0)" })
        let (other, _) = Fixtures.registry(settings: settings)
        let restored = try #require(other.restore(decoded, graceMillis: 1000))
        #expect(restored.chat.messages == decoded.chatMessages)
    }

    @Test func aFormatOneSnapshotIsReadWithAnEmptyHistory() throws {
        let (registry, _) = Self.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        _ = try Self.say(registry, host, "new")
        var text = String(decoding: registry.snapshot(of: host.room).encodeJSON(), as: UTF8.self)
        let chat = try #require(text.firstRange(of: #","chat":{"#))
        text = String(text[..<chat.lowerBound]) + "}"
        text = text.replacing(#""format":2"#, with: #""format":1"#)
        let decoded = try RoomSnapshot(json: Array(text.utf8))
        #expect(decoded.chatMessages.isEmpty && decoded.pinned == nil)
    }
}
