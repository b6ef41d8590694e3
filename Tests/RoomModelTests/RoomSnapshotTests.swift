import Foundation
import RoomConfig
import Testing
@testable import RoomModel

/// A room's saved state (cluster takeover, docs/CLUSTER.md): what a snapshot
/// restores on another node, and how its peers' graces end there.
@Suite struct RoomSnapshotTests {
    /// A room with a track, a group, a session-store key, a started poll with a vote and a lock.
    static func busyRoom() throws -> (RoomRegistry, ManualClock, Room) {
        var roles = Fixtures.template().roles
        roles["host"]!.permissions.pollWrite = true
        roles["viewer"]!.permissions.pollRead = true
        let clock = ManualClock()
        let registry = RoomRegistry(template: RoleTemplate(name: "t", roles: Array(roles.values), settings: Settings()),
                                    clock: clock, ids: SequentialIDGenerator())
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        _ = try registry.addTrack(host, id: "mic", kind: .audio)
        _ = try registry.addToGroup(by: .peer(host), host, group: "stage")
        _ = try registry.setMetadata(by: .peer(host), in: host.room, key: "topic", value: .string("snapshots"))
        let poll = try registry.setPollInfo(by: host, PollInfoInput(title: "Q", type: .poll))
        _ = try registry.setPollQuestions(by: host, pollID: poll.id, [
            QuestionInput(text: "?", type: .singleChoice, options: ["a", "b"]),
        ])
        _ = try registry.startPoll(by: host, pollID: poll.id)
        _ = try registry.respond(viewer, pollID: poll.id, [ResponseInput(question: 1, option: 2)])
        return (registry, clock, host.room)
    }

    @Test func aRestoredRoomHasTheSameStateAndItsEncodingRoundTrips() throws {
        let (registry, _, room) = try Self.busyRoom()
        let snapshot = registry.snapshot(of: room)
        let bytes = try JSONEncoder().encode(snapshot)
        let decoded = try JSONDecoder().decode(RoomSnapshot.self, from: bytes)
        #expect(decoded == snapshot)

        let (other, _) = Fixtures.registry()
        let restored = try #require(other.restore(decoded, graceMillis: 5000))
        #expect(other.snapshot(of: restored) == snapshot, "nothing lost or added")
        #expect(restored.sessionID == room.sessionID)
        let host = try #require(restored.peer(room.peersInJoinOrder[0].id))
        #expect(host.tracks.map(\.id) == ["mic"])
        #expect(host.groups == ["stage"])
        #expect(restored.sessionStore.entry("topic").version == 1)
        #expect(restored.polls.ordered.first?.tallies.first?.optionCounts == [0, 1])
        // A later join continues the sequence: no two peers share a place in the join order.
        let late = try other.join(Fixtures.request("late", role: "viewer")).peer
        #expect(restored.peersInJoinOrder.last === late)
    }

    @Test func restoredPeersLeaveWhenTheirGraceEndsUnlessReattached() throws {
        let (registry, _, room) = try Self.busyRoom()
        let (other, clock) = Fixtures.registry()
        let restored = try #require(other.restore(registry.snapshot(of: room), graceMillis: 5000))
        let (host, viewer) = (restored.peersInJoinOrder[0], restored.peersInJoinOrder[1])
        #expect(host.graceDeadline != nil && viewer.graceDeadline != nil, "every peer waits for its client")
        other.reattach(viewer)
        clock.advance(byMillis: 4999)
        #expect(other.expireGraces().isEmpty)
        clock.advance(byMillis: 1)
        let leaves = other.expireGraces()
        #expect(leaves.map(\.push.name) == ["on-peer-leave"])
        #expect(leaves.first?.to == [viewer.id])
        #expect(restored.peer(host.id) == nil && restored.peer(viewer.id) === viewer)
    }

    @Test func aShorterGraceStartedAfterARestoreEndsOnTime() throws {
        let (registry, _, room) = try Self.busyRoom()
        var settings = Settings()
        settings.room.reconnectGraceS = 1
        let (other, clock) = Fixtures.registry(settings: settings)
        let restored = try #require(other.restore(registry.snapshot(of: room), graceMillis: 5000))
        let local = try other.join(Fixtures.request("x", role: "viewer", room: "r2")).peer
        let witness = try other.join(Fixtures.request("w", role: "viewer", room: "r2")).peer
        #expect(other.startGrace(local))
        clock.advance(byMillis: 1000)
        let leaves = other.expireGraces()
        #expect(leaves.first?.to == [witness.id], "the 1-s grace ends at 1 s, not behind the restored 5-s ones")
        #expect(restored.peerCount == 2, "the restored peers still wait")
    }

    @Test func aLockedRoomThatEndedRestoresItsLockAlone() throws {
        let (registry, _) = Fixtures.registry()
        #expect(registry.restore(.lockedOnly("r9"), graceMillis: 5000) == nil)
        #expect(registry.lockedRoomIDs.contains("r9"))
        #expect(throws: RoomError.self) { try registry.join(Fixtures.request("a", role: "host", room: "r9")) }
    }
}
