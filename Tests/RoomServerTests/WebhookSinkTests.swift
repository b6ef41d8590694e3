import Foundation
import RoomClient
import RoomdTesting
import Testing

/// RoomdTesting's WebhookSink as a harness uses it (issue 25, item 6): a
/// daemon started with `webhooks: sink` reports to it; the sink verifies
/// every request and hands the events out in order.
@Suite struct WebhookSinkTests {
    @Test func aScenariosWebhooksArriveVerifiedAndInOrder() async throws {
        let sink = try WebhookSink()
        let roomd = try RoomdProcess.start(binary: Daemon.binary, template: Daemon.patientTemplate(), webhooks: sink)
        defer {
            _ = roomd.stop()
            sink.close()
        }
        #expect(sink.secret == roomd.secret)
        let host = try await RoomClient.connect(to: roomd.url, defaultTimeout: Daemon.waitTimeout)
        let joined = try await host.join(token: try roomd.tokens.appToken(room: "show", user: "ada", role: "host"))
        let opened = try await sink.next()
        #expect(opened["type"] == "session.open.success" && opened["data"]?["room_id"] == "show")
        let join = try await sink.next("peer.join.success")
        #expect(join["data"]?["user_id"] == "ada" && join["data"]?["peer_id"]?.stringValue == joined.peer.peerID)
        try await host.endRoom(reason: "show over")
        let ended = try await sink.next("room.end.success")
        #expect(ended["data"]?["reason"] == "show over")
        #expect(
            try sink.events().compactMap { $0["type"]?.stringValue } == [
                "session.open.success", "peer.join.success", "peer.leave.success", "session.close.success",
                "room.end.success",
            ]
        )
        #expect(sink.requests.allSatisfy { $0.path == "/hooks" })
        do {
            _ = try await sink.next("peer.banned", timeout: .milliseconds(200))
            Issue.record("no ban happened")
        } catch let error as RoomdProcessError {
            #expect(
                error.description.contains("waiting for webhook peer.banned; received so far: session.open.success")
            )
        }
        sink.secret = Array(String(repeating: "w", count: 40).utf8)
        #expect(throws: RoomdProcessError.self, "a request that does not verify is an error") { try sink.events() }
    }
}
