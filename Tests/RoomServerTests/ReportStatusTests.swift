import Foundation
import RoomClient
import RoomWire
import Testing

/// Reports with a status (1.3, PROTOCOL.md section 32): `report-resolve`
/// on the WebSocket and REST's `GET …/reports` and `POST
/// …/reports/{report_id}/resolve`; every `moderateChat` peer (host and
/// moderator of the shipped roles) gets `on-report-update`, nobody else.
@Suite struct ReportStatusTests {
    static func report(_ stage: Stage, _ reason: String = "spam") async throws -> String {
        let sent = try await stage.guest.call("broadcast", ["info": ["message": .string("buy now \(reason)")]])
        let message = try #require(sent["message_id"]?.stringValue)
        let reported = try await stage.viewer.call(
            "report",
            ["message_id": .string(message), "reason": .string(reason)]
        )
        return try #require(reported["report_id"]?.stringValue)
    }

    @Test func aModeratorResolvesAReportAndEveryModeratorHearsOfIt() async throws {
        let stage = try await Stage()
        let id = try await Self.report(stage)
        try await stage.settle()

        let answer = try await stage.moderator.call("report-resolve", ["report_id": .string(id), "note": "deleted"])
        let report = try #require(answer["report"])
        #expect(report["report_id"]?.stringValue == id)
        #expect(report["status"] == "resolved")
        #expect(report["note"] == "deleted")
        #expect(report["resolved_by"]?["peer_id"] == stage.id("moderator"))
        #expect(report["resolved_at"]?.intValue != nil)
        #expect(report["reason"] == "spam")
        #expect(report["reported_by"]?["peer_id"] == stage.id("viewer"))
        for client in [stage.host, stage.moderator] {
            let push = try await client.next("on-report-update")
            #expect(push["report"] == report)
        }
        for client in [stage.guest, stage.viewer] {
            _ = try await client.call("ping")
            #expect(!client.drain().contains { $0["method"] == "on-report-update" }, "not a moderator")
        }

        let twice = try await ChatModerationTests.error(stage.host, "report-resolve", ["report_id": .string(id)])
        #expect(twice.code == 40904)
        #expect(twice.message.contains("resolved"))
        #expect(try await stage.host.errorCode("report-resolve", ["report_id": "nope"]) == 40408)
        #expect(try await stage.host.errorCode("report-resolve", [:]) == -32602)
        let other = try await Self.report(stage, "other")
        #expect(try await stage.viewer.errorCode("report-resolve", ["report_id": .string(other)]) == 40300)
        let long = String(repeating: "n", count: 1025)
        let tooLong = try await ChatModerationTests.error(
            stage.host,
            "report-resolve",
            ["report_id": .string(other), "note": .string(long)]
        )
        #expect(tooLong.code == 41300)
        #expect(tooLong.message.contains("note"))
        // Still open after the refusals: a note of exactly the limit is fine, and no note at all.
        let atLimit = try await stage.host.resolveReport(other, note: String(repeating: "n", count: 1024))
        #expect(atLimit.status == .resolved)
        #expect(atLimit.resolvedBy?.peerID == stage.ids["host"])
    }

    @Test func restListsReportsByStatusAndResolvesThemAsTheServer() async throws {
        let stage = try await Stage()
        let first = try await Self.report(stage, "one")
        let second = try await Self.report(stage, "two")
        try await stage.settle()
        let admin = try stage.daemon.managementToken()
        let base = "/v2/active-rooms/room-1/reports"

        let open = try await http("GET", stage.daemon, base, token: admin)
        #expect(open.status == 200)
        #expect(open.body["reports"]?.arrayValue?.compactMap { $0["report_id"]?.stringValue } == [first, second])
        #expect(open.body["total"] == 2)
        #expect(open.body["reports"]?[0]?["status"] == "open")
        #expect(open.body["reports"]?[0]?["resolved_by"] == .null)
        #expect(open.body["reports"]?[0]?["target"]?["type"] == "message")

        let resolved = try await http("POST", stage.daemon, "\(base)/\(first)/resolve", token: admin, body: "{}")
        #expect(resolved.status == 200)
        #expect(resolved.body["report"]?["status"] == "resolved")
        #expect(resolved.body["report"]?["note"] == .null)
        #expect(RestShowTests.isServer(resolved.body["report"]?["resolved_by"]))
        for client in [stage.host, stage.moderator] {
            #expect(try await client.next("on-report-update")["report"] == resolved.body["report"])
        }

        let left = try await http("GET", stage.daemon, "\(base)?status=open", token: admin)
        #expect(left.body["reports"]?.arrayValue?.compactMap { $0["report_id"]?.stringValue } == [second])
        let done = try await http("GET", stage.daemon, "\(base)?status=resolved", token: admin)
        #expect(done.body["reports"]?.arrayValue?.compactMap { $0["report_id"]?.stringValue } == [first])
        let bad = try await http("GET", stage.daemon, "\(base)?status=closed", token: admin)
        #expect(bad.status == 400)
        #expect(bad.body["message"]?.stringValue?.contains("status") == true)

        let again = try await http("POST", stage.daemon, "\(base)/\(first)/resolve", token: admin, body: "{}")
        #expect(again.status == 409)
        #expect(again.body["code"] == 40904)
        let unknown = try await http("POST", stage.daemon, "\(base)/nope/resolve", token: admin, body: "{}")
        #expect(unknown.status == 404)
        #expect(unknown.body["code"] == 40408)
        let long = #"{"note":"\#(String(repeating: "n", count: 1025))"}"#
        let tooLong = try await http("POST", stage.daemon, "\(base)/\(second)/resolve", token: admin, body: long)
        #expect(tooLong.status == 413)
        #expect(tooLong.body["code"] == 41300)
        let noted = try await http(
            "POST",
            stage.daemon,
            "\(base)/\(second)/resolve",
            token: admin,
            body: #"{"note":"warned"}"#
        )
        #expect(noted.body["report"]?["note"] == "warned")
    }

    /// The Swift kit decodes `on-report-update` and `report-resolve`'s answer.
    @Test func theSwiftKitResolvesAndDecodesTheUpdate() async throws {
        let stage = try await Stage()
        let id = try await Self.report(stage)
        try await stage.settle()
        let report = try await stage.host.resolveReport(id, note: "ok")
        #expect(report.reportID == id)
        #expect(report.status == .resolved)
        #expect(report.note == "ok")
        #expect(report.resolvedAt != nil)
        let push = try await stage.moderator.next("on-report-update")
        guard case .reportUpdate(let update) = RoomEvent.decode(["method": "on-report-update", "params": push]) else {
            Issue.record("expected .reportUpdate from \(push)")
            return
        }
        #expect(update == report)
    }
}

/// A report's status is saved with the room's state: it survives a kill of
/// the room's home (three nodes on a real nats-server).
@Suite(.serialized) struct ReportTakeoverTests {
    typealias Cluster = ClusterRoutingTests.Cluster

    @Test func reportsAndTheirStatusSurviveATakeover() async throws {
        let cluster = try await Cluster()
        defer { cluster.nats.remove() }
        let (host, hostID) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (viewer, _) = try await cluster.join("v", as: "viewer", on: 1)
        let (moderator, _) = try await cluster.join("m", as: "moderator", on: 2)
        defer { _ = host }
        let sent = try await viewer.call("broadcast", ["info": ["message": "look"]])
        let message = try #require(sent["message_id"]?.stringValue)
        let first = try #require(
            try await viewer.call("report", ["message_id": .string(message), "reason": "one"])["report_id"]?.stringValue
        )
        let second = try #require(
            try await viewer.call("report", ["peer_id": .string(hostID), "reason": "two"])["report_id"]?.stringValue
        )
        _ = try await moderator.call("report-resolve", ["report_id": .string(first), "note": "handled-mark"])
        try await cluster.waitUntilSaved(containing: "handled-mark")
        _ = await cluster.nodes[0].stop(signal: SIGKILL)

        let admin = try cluster.nodes[2].managementToken()
        var listed: JSON = .null
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let reply = try await http(
                "GET",
                cluster.nodes[2],
                "/v2/active-rooms/room-1/reports?status=resolved",
                token: admin
            )
            if reply.status == 200 {
                listed = reply.body
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        let resolved = try #require(listed["reports"]?.arrayValue)
        #expect(resolved.count == 1)
        #expect(resolved.first?["report_id"]?.stringValue == first)
        #expect(resolved.first?["note"] == "handled-mark")
        #expect(resolved.first?["resolved_by"]?["info"]?["user_id"] == "m")
        // The open one is still open, and can be resolved on the new home; a repeat is the same report.
        let answer = try await ClusterRoutingTests.eventually(
            moderator,
            "report-resolve",
            ["report_id": .string(second)],
            within: 15
        )
        #expect(answer["report"]?["status"] == "resolved")
        // The viewer's node may still be finding the new home: 5003 says "send it again".
        let repeated = try await ClusterRoutingTests.eventually(
            viewer,
            "report",
            ["message_id": .string(message), "reason": "again"]
        )
        #expect(repeated["report_id"]?.stringValue == first, "the saved reports keep one report per user per target")
    }
}
