import RoomConfig
import RoomProtocol
import Testing

@testable import RoomModel

/// Reports with a status in the model (1.3, section 32): the bound on kept
/// reports, resolving, and the reports in the saved state.
@Suite struct ReportModelTests {
    static func report(_ n: Int) -> Report {
        Report(
            id: "report-\(n)",
            target: .message("m-\(n)"),
            reason: "r",
            reportedBy: PeerRef(peerID: "p", role: "viewer", name: "v", userID: "u-\(n)"),
            at: Int64(n)
        )
    }

    @Test func theNewest1000ReportsAreKeptOldestOutFirst() {
        var log = ReportLog()
        for n in 0...ReportLog.keptCapacity { log.add(Self.report(n)) }
        #expect(log.all.count == ReportLog.keptCapacity)
        #expect(log.report("report-0") == nil, "the oldest went")
        #expect(log.all.first?.id == "report-1")
        #expect(log.earlier(user: "u-5", target: .message("m-5")) == "report-5", "its pair is remembered")
        var resolved = Self.report(7)
        resolved.status = .resolved
        log.update(resolved)
        #expect(log.report("report-7")?.status == .resolved)
        log.update(Self.report(0))
        #expect(log.report("report-0") == nil, "an update keeps nothing that is not kept")
    }

    @Test func resolvingNeedsModerateChatTellsTheModeratorsAndIsSaved() throws {
        let roles = [
            Role(name: "host", priority: 1, permissions: Permissions(moderateChat: true)),
            Role(name: "viewer", priority: 2),
        ]
        let clock = ManualClock()
        let template = RoleTemplate(name: "reports", roles: roles, settings: Settings())
        let registry = RoomRegistry(template: template, clock: clock, ids: SequentialIDGenerator())
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        let room = host.room
        let said = try registry.broadcast(from: viewer, message: "hi", type: "chat", to: .everyone).message
        let (id, _) = try registry.report(.message(said.id), reason: "spam", by: viewer)
        #expect(
            code { _ = try registry.resolveReport(id, note: nil, by: .peer(viewer), in: room) } == .permissionDenied
        )
        #expect(code { _ = try registry.resolveReport("nope", note: nil, by: .server, in: room) } == .reportNotFound)
        let long = String(repeating: "n", count: RoomRegistry.maxNoteBytes + 1)
        #expect(code { _ = try registry.resolveReport(id, note: long, by: .peer(host), in: room) } == .tooLarge)
        clock.advance(byMillis: 5)
        let (report, deliveries) = try registry.resolveReport(id, note: "done", by: .peer(host), in: room)
        #expect(report.status == .resolved && report.note == "done" && report.resolvedBy == PeerRef(host))
        #expect(deliveries.names(for: host) == ["on-report-update:\(id):resolved"])
        #expect(deliveries.names(for: viewer) == [])
        #expect(code { _ = try registry.resolveReport(id, note: nil, by: .server, in: room) } == .wrongState)
        #expect(registry.reports(in: room, status: .open).isEmpty)

        let snapshot = registry.snapshot(of: room)
        let decoded = try RoomSnapshot(json: snapshot.encodeJSON())
        #expect(decoded.moderation.reports == [report])
        let other = RoomRegistry(template: template, clock: clock, ids: SequentialIDGenerator())
        let restored = try #require(other.restore(decoded, graceMillis: 5000))
        #expect(other.reports(in: restored, status: .resolved) == [report])
        #expect(restored.reports.earlier(user: "v", target: .message(said.id)) == id)
    }
}
