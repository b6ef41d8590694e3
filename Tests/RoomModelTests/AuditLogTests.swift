import RoomConfig
import RoomProtocol
import RoomWire
import Testing

@testable import RoomModel

/// The audit log of a room session (PROTOCOL.md section 32): its bound,
/// seq, paging, the cut of long details, and the saved state.
@Suite struct AuditLogTests {
    private static let target = [JSON.Member("user_id", "eve")]

    @Test func keepsTheNewest10000EntriesWithSeqGrowingByOne() {
        let log = AuditLog()
        for i in 1...10_005 {
            log.record(at: Int64(i), actor: .rest, action: .peerBan, target: Self.target, details: [])
        }
        #expect(log.count == 10_000)
        #expect(log.firstSeq == 6, "the oldest five went out first")
        #expect(log.lastSeq == 10_005)
        let first = log.page(after: nil, limit: 500, maxBytes: 1 << 20)
        #expect(first.entries.map(\.seq) == Array(6...505))
        #expect(first.next == 505)
        let last = log.page(after: 9_999, limit: 500, maxBytes: 1 << 20)
        #expect(last.entries.map(\.seq) == Array(10_000...10_005))
        #expect(last.next == nil, "null at the end")
        #expect(log.page(after: 10_005, limit: 100, maxBytes: 1 << 20).entries.isEmpty)
    }

    @Test func aPageCutByBytesStillGivesTheRightNext() {
        let log = AuditLog()
        for _ in 1...10 { log.record(at: 1, actor: .hook, action: .hookDeny, target: Self.target, details: []) }
        let size = log.page(after: nil, limit: 1, maxBytes: 1 << 20).entries[0].bytes.count
        let page = log.page(after: 2, limit: 100, maxBytes: size * 3 + size / 2)
        #expect(page.entries.map(\.seq) == [3, 4, 5])
        #expect(page.next == 5)
        let tiny = log.page(after: nil, limit: 100, maxBytes: 1)
        #expect(tiny.entries.map(\.seq) == [1], "at least one entry")
        #expect(tiny.next == 1)
    }

    @Test func anEntryIsBoundedAndEncodedAsTheWireHasIt() throws {
        let log = AuditLog()
        let host = PeerRef(peerID: "p1", role: "host", name: "Ada", userID: "u1")
        let entry = log.record(
            at: 1_795_951_080_000,
            actor: .peer(host),
            action: .chatBan,
            target: Self.target,
            details: [
                JSON.Member("shadow", .bool(true)), JSON.Member("reason", .string(String(repeating: "x", count: 5000))),
            ]
        )
        let json = try JSON.parse(entry.bytes)
        #expect(json["seq"] == 1)
        #expect(json["action"] == "chat.ban")
        #expect(json["actor"]?["peer_id"] == "p1")
        #expect(json["target"]?["user_id"] == "eve")
        #expect(json["details"]?["shadow"] == .bool(true))
        #expect(json["details"]?["reason"]?.stringValue?.count == AuditLog.maxStringCharacters)
        let many = (0..<40).map { JSON.Member("k\($0)", .string(String(repeating: "y", count: 200))) }
        let cut = log.record(at: 2, actor: .rest, action: .chatState, target: [], details: many)
        #expect(cut.bytes.count <= AuditLog.maxEntryBytes)
        #expect(try JSON.parse(cut.bytes)["details"] == ["cut": true])
        #expect(try JSON.parse(cut.bytes)["actor"] == ["type": "rest"])
    }

    @Test func theLogIsSavedWithTheRoomAndGoesOnAfterARestore() throws {
        let (registry, _) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let room = host.room
        registry.recordAudit(in: room.audit, actor: .peer(PeerRef(host)), action: .peerBan, target: Self.target)
        registry.recordAudit(in: room.audit, actor: .rest, action: .roomUnlock, target: [])
        let snapshot = registry.snapshot(of: room)
        let decoded = try RoomSnapshot(json: snapshot.encodeJSON())
        #expect(decoded == snapshot)
        #expect(decoded.audit.entries.map(\.seq) == [1, 2])
        let (other, _) = Fixtures.registry()
        let restored = try #require(other.restore(decoded, graceMillis: 5000))
        #expect(restored.audit.all == room.audit.all)
        let next = other.recordAudit(in: restored.audit, actor: .hook, action: .hookDeny, target: [])
        #expect(next.seq == 3, "seq goes on within the session")
    }

    @Test func theLogIsReadableAfterTheSessionEnded() throws {
        let (registry, _) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let room = host.room
        registry.recordAudit(in: room.audit, actor: .peer(PeerRef(host)), action: .roomEnd, target: [])
        _ = try registry.endRoom(by: .peer(host), room, reason: "done", lock: false)
        #expect(registry.room(room.id) == nil)
        guard
            case .page(let session, let page) = registry.auditPage(
                room.id,
                session: nil,
                after: nil,
                limit: 10,
                maxBytes: 1 << 20
            )
        else {
            Issue.record("the ended session's log is gone")
            return
        }
        #expect(session == room.sessionID)
        #expect(page.entries.map(\.seq) == [1])
        if case .page = registry.auditPage(room.id, session: "other", after: nil, limit: 10, maxBytes: 1 << 20) {
            Issue.record("an unknown session was found")
        }
    }
}
