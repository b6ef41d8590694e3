import Foundation
import RoomConfig
import RoomWire
import Testing

@testable import RoomModel

/// The saved room state, pinned byte for byte: other nodes read it during a
/// rolling upgrade, and a node saves a room only when its bytes change. The
/// literal was captured before the snapshot sections moved next to their
/// features (RoomSnapshotGoldens.swift).
@Suite struct RoomSnapshotGoldenTests {
    /// `RoomSnapshotTests.everythingRoom` with every other section filled:
    /// RTMP out and a recording, bans, chat bans, paused chat and slow mode,
    /// a guest's attributes (section 27).
    static func fullRoom() throws -> (RoomRegistry, Room) {
        let (registry, room) = try RoomSnapshotTests.everythingRoom()
        let host = room.peersInJoinOrder[0]
        _ = try registry.setAttributes(
            of: room.peersInJoinOrder[1],
            set: [("seat", "4"), ("a.b", "é \"x\"")],
            delete: [],
            by: .server
        )
        _ = try registry.startRTMP(
            by: .peer(host),
            in: room,
            meetingURL: "https://meet.example.com/r1",
            urls: ["rtmp://a/key1", "rtmp://b/key2"],
            record: true
        )
        _ = try registry.stopRecording(by: .server, in: room)
        _ = try registry.ban("mallory", in: room, by: .peer(host), durationSeconds: 600, reason: "spam \"links\"")
        _ = try registry.ban("trent", in: room, by: .server, durationSeconds: nil, reason: "")
        _ = try registry.chatBan("v", in: room, by: .peer(host), durationSeconds: 60)
        _ = try registry.chatBan("eve", in: room, by: .server, durationSeconds: nil)
        _ = try registry.setChatState(in: room, by: .peer(host), paused: true, slowModeSeconds: 30)
        return (registry, room)
    }

    @Test func aFullRoomSavesTheSameBytes() throws {
        let (registry, room) = try Self.fullRoom()
        var snapshot = registry.snapshot(of: room)
        snapshot.locked = true
        let bytes = String(decoding: snapshot.encodeJSON(), as: UTF8.self)
        if let dir = ProcessInfo.processInfo.environment["ROOMD_WRITE_GOLDENS"] {
            try? bytes.write(toFile: "\(dir)/snapshot.txt", atomically: true, encoding: .utf8)
        }
        #expect(bytes == RoomSnapshotGoldens.full)
        // Read back, it saves the same bytes again (bans come back without their serials).
        let decoded = try RoomSnapshot(json: Array(RoomSnapshotGoldens.full.utf8))
        #expect(decoded.peers == snapshot.peers && decoded.polls == snapshot.polls)
        #expect(String(decoding: decoded.encodeJSON(), as: UTF8.self) == RoomSnapshotGoldens.full)
    }

    @Test func anEndedLockedRoomSavesTheSameBytes() {
        let bytes = String(decoding: RoomSnapshot.lockedOnly("gone").encodeJSON(), as: UTF8.self)
        #expect(bytes == RoomSnapshotGoldens.lockedOnly)
    }

    /// Older formats still read: format 1 (1.1: no chat, questions, reactions,
    /// moderation, RTMP or recording) and format 2 as saved before reactions
    /// and moderation, and before RTMP and recording.
    @Test func olderFormatsStillRead() throws {
        let full = try JSON.parse(Array(RoomSnapshotGoldens.full.utf8))
        func without(_ keys: Set<String>, format: Int) throws -> RoomSnapshot {
            guard case .object(let members) = full else { throw RoomSnapshotError(path: "", problem: "not an object") }
            var kept = members.filter { !keys.contains($0.key) }
            kept[0] = JSON.Member("format", .number("\(format)"))
            return try RoomSnapshot(json: JSON.object(kept).bytes)
        }
        let complete = try RoomSnapshot(json: Array(RoomSnapshotGoldens.full.utf8))
        let v1 = try without(["chat", "qa", "reactions", "moderation", "rtmp", "recording"], format: 1)
        #expect(v1.peers == complete.peers && v1.polls == complete.polls && v1.liveStream == complete.liveStream)
        #expect(v1.chatMessages.isEmpty && v1.questions.isEmpty && v1.reactions.isEmpty)
        #expect(v1.moderation == ModerationSnapshot() && v1.rtmp == nil && v1.recording == nil)
        let v2 = try without(["reactions", "moderation", "rtmp", "recording"], format: 2)
        #expect(v2.chatMessages == complete.chatMessages && v2.questions == complete.questions)
        #expect(v2.reactions.isEmpty && v2.moderation == ModerationSnapshot() && v2.rtmp == nil)
        let noRuns = try without(["rtmp", "recording"], format: 2)
        #expect(noRuns.reactions == complete.reactions && noRuns.moderation == complete.moderation)
        #expect(noRuns.rtmp == nil && noRuns.recording == nil)
    }
}
