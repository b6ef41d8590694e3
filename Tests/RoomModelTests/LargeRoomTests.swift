import RoomConfig
import Testing

@testable import RoomModel

@Suite struct LargeRoomTests {
    let registry: RoomRegistry
    let host: Peer
    var viewers: [Peer] = []

    init() throws {
        var settings = Settings()
        settings.room.largeRoomThreshold = 5
        (registry, _) = Fixtures.registry(settings: settings)
        host = try registry.join(Fixtures.request("h", role: "host")).peer
        for index in 0..<4 { viewers.append(try registry.join(Fixtures.request("v\(index)", role: "viewer")).peer) }
    }

    @Test func aboveTheThresholdNonPublishersJoinAndLeaveQuietly() throws {
        // The 6th peer makes the room large: its join is batched.
        let sixth = try registry.join(Fixtures.request("v4", role: "viewer"))
        #expect(sixth.deliveries.isEmpty)
        let seventh = try registry.join(Fixtures.request("v5", role: "viewer")).peer
        #expect(registry.leave(viewers[0], reason: .clientRequest).isEmpty)
        let state = registry.tickRoomState()
        let audience = host.room.peersInJoinOrder.filter { $0 !== host }.map(\.id)
        #expect(
            state.sent == [
                Sent(push: "room-state:6", to: audience),
                Sent(push: "room-state:6:+2:-1", to: [host.id]),
            ],
            "the count to everyone, the lists only to the moderating host"
        )
        guard case .roomState(_, let joined?, let left?) = state.last?.push else { return }
        #expect(joined.map(\.id) == [sixth.peer.id, seventh.id])
        #expect(left == [viewers[0].id])
        #expect(registry.tickRoomState().isEmpty, "nothing pending, nothing sent")
        // Came and went between two ticks: not mentioned by id.
        let brief = try registry.join(Fixtures.request("brief", role: "viewer")).peer
        _ = registry.leave(brief, reason: .websocketClosed)
        #expect(registry.tickRoomState().isEmpty, "the count did not change either")
    }

    @Test func theListsComeInPagesOf100AndTotalBytesStayLinear() throws {
        var joined: [Peer] = []
        for index in 0..<250 { joined.append(try registry.join(Fixtures.request("n\(index)", role: "viewer")).peer) }
        let first = registry.tickRoomState()
        #expect(first.sent.map(\.push) == ["room-state:255", "room-state:255:+100:-0"])
        #expect(first[0].recipients.count == 254, "every viewer gets the count only")
        let second = registry.tickRoomState()
        #expect(second.sent == [Sent(push: "room-state:255:+100:-0", to: [host.id])], "the next page, to the host only")
        guard case .roomState(_, let page?, _) = second[0].push else { return }
        #expect(page.map(\.id) == joined[100..<200].map(\.id), "in join order")
        #expect(registry.tickRoomState().sent.map(\.push) == ["room-state:255:+50:-0"])
        #expect(registry.tickRoomState().isEmpty)
    }

    @Test func aPendingJoinPromotedThenGoneIsNeverInRoomState() throws {
        let newcomer = try registry.join(Fixtures.request("v4", role: "viewer")).peer
        _ = try registry.requestRoleChange(
            by: .peer(host),
            in: host.room,
            targetID: newcomer.id,
            role: "guest",
            force: true
        )
        #expect(!registry.leave(newcomer, reason: .clientRequest).isEmpty, "a publisher leaves loudly")
        #expect(registry.tickRoomState().isEmpty, "and is not announced as joined afterwards")
    }

    @Test func resumeListsLikeAJoin() throws {
        var settings = Settings()
        settings.room.largeRoomThreshold = 10
        let (registry, _) = Fixtures.registry(settings: settings)
        for index in 0..<120 { _ = try registry.join(Fixtures.request("v\(index)", role: "viewer")) }
        let moderator = try registry.join(Fixtures.request("m", role: "moderator")).peer
        var resume = Fixtures.request("m", role: "moderator")
        resume.resumePeerID = moderator.id
        #expect(try registry.join(resume).others.isEmpty, "no publishers, no other moderators: nothing listed")
    }

    @Test func publishersAreStillAnnouncedOneByOne() throws {
        _ = try registry.join(Fixtures.request("v4", role: "viewer"))
        let guest = try registry.join(Fixtures.request("g", role: "guest"))
        #expect(guest.deliveries.flatMap(\.to).count == 6)
        #expect(registry.leave(guest.peer, reason: .clientRequest).flatMap(\.to).count == 6)
    }

    @Test func joinListsPublishersAndUpTo100OfTheOwnRole() throws {
        var settings = Settings()
        settings.room.largeRoomThreshold = 10
        let (registry, _) = Fixtures.registry(settings: settings)
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        for index in 0..<150 { _ = try registry.join(Fixtures.request("v\(index)", role: "viewer")) }
        let moderator = try registry.join(Fixtures.request("m", role: "moderator")).peer
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let late = try registry.join(Fixtures.request("late", role: "viewer"))
        let listed = late.others.map(\.peer)
        #expect(listed.prefix(2).map(\.id) == [host.id, guest.id], "publishers first, in join order")
        #expect(listed.count == 2 + 100)
        #expect(listed.dropFirst(2).allSatisfy { $0.role.name == "viewer" })
        #expect(!listed.contains { $0 === moderator }, "other non-publishing roles are left to find-peer")
        let asGuest = try registry.join(Fixtures.request("g2", role: "guest"))
        #expect(asGuest.others.map(\.peer.id) == [host.id, guest.id], "a publisher lists the publishers")
    }
}
