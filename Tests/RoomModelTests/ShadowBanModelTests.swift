import RoomConfig
import RoomWire
import Testing

@testable import RoomModel

/// Shadow chat bans in the model (1.3, PROTOCOL.md section 31): who a
/// shadowed message reaches, and that the flags survive a takeover.
@Suite struct ShadowBanModelTests {
    @Test func aShadowedMessageReachesItsUserAndTheModeratorsAndSurvivesARestore() throws {
        let roles = [
            Role(name: "host", priority: 1, permissions: Permissions(moderateChat: true)),
            Role(name: "viewer", priority: 2),
        ]
        let registry = RoomRegistry(
            template: RoleTemplate(name: "shadow", roles: roles, settings: Settings()),
            clock: ManualClock(),
            ids: SequentialIDGenerator()
        )
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let guest = try registry.join(Fixtures.request("g", role: "viewer")).peer
        let troll = try registry.join(Fixtures.request("t", role: "viewer")).peer
        let trollAgain = try registry.join(Fixtures.request("t", role: "viewer")).peer
        let room = host.room
        let told = try registry.chatBan(troll.userID, in: room, by: .peer(host), durationSeconds: nil, shadow: true)
        #expect(told.isEmpty, "the user is not told")
        #expect(registry.chatState(for: troll).chatBanned == false && registry.isShadowed(troll))

        let (chat, deliveries) = try registry.broadcast(from: troll, message: "spam", type: "chat", to: .everyone)
        #expect(chat.shadowed)
        #expect(deliveries.map(\.push.name) == ["on-broadcast:shadowed", "on-broadcast"])
        #expect(deliveries.map { $0.recipients.map(\.id) } == [[host.id], [trollAgain.id]])
        #expect(try registry.chatHistory(for: guest, before: nil, limit: 10).messages.isEmpty)
        #expect(try registry.chatHistory(for: trollAgain, before: nil, limit: 10).messages.map(\.id) == [chat.id])
        #expect(try registry.chatHistory(for: host, before: nil, limit: 10).messages.map(\.shadowed) == [true])

        let decoded = try RoomSnapshot(json: registry.snapshot(of: room).encodeJSON())
        #expect(decoded.moderation.chatBans.map(\.shadow) == [true])
        #expect(decoded.chatMessages.map(\.shadowed) == [true])
        #expect(try registry.chatUnban(troll.userID, in: room, by: .peer(host)).isEmpty, "nothing to tell")
        #expect(!registry.isShadowed(troll))
    }
}
