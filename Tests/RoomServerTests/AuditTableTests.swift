import RoomModel
import RoomWire
import Testing

@testable import RoomServer

/// The two tables of section 32's recording (Audit/AuditTable.swift): the
/// parity routes of section 32 that other work adds map to their actions
/// by path, and a call's params split into target and details.
@Suite struct AuditTableTests {
    private func action(_ method: HTTPRequest.Method, _ path: String, _ body: JSON = [:]) -> (String?, JSON) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard let (rule, captured) = AuditTable.route(method, parts[...]) else { return (nil, [:]) }
        let (target, _) = rule.entry(body)
        return (rule.actions(body).map(\.rawValue).joined(separator: ","), .object(captured + target))
    }

    @Test func everyParityRouteOfSection32IsAnAct() {
        #expect(action(.delete, "chat/m1") == ("message.delete", ["message_id": "m1"]))
        #expect(action(.post, "chat/pin", ["message_id": "m1"]) == ("message.pin", ["message_id": "m1"]))
        #expect(action(.post, "chat/clear").0 == "chat.clear")
        #expect(action(.post, "chat/state", ["paused": true]).0 == "chat.state")
        #expect(action(.post, "chat-bans", ["user_id": "u", "shadow": true]) == ("chat.ban", ["user_id": "u"]))
        #expect(action(.delete, "chat-bans/u") == ("chat.unban", ["user_id": "u"]))
        #expect(action(.post, "held/m2/approve") == ("message.approve", ["message_id": "m2"]))
        #expect(action(.post, "held/m2/reject") == ("message.reject", ["message_id": "m2"]))
        #expect(
            action(.post, "peers/p1/mute", ["track_id": "t"]) == ("track.mute", ["peer_id": "p1", "track_id": "t"])
        )
        #expect(action(.post, "reports/r1/resolve") == ("report.resolve", ["report_id": "r1"]))
        #expect(action(.post, "end-room", ["reason": "x", "lock": true]).0 == "room.end,room.lock")
        #expect(action(.post, "peers/p1", ["name": "Ada"]).0 == "", "a rename is no act")
        #expect(action(.get, "chat").0 == nil, "a read is no act")
        #expect(action(.post, "send-message", ["message": "hi"]).0 == nil)
    }

    @Test func aCallsParamsSplitIntoTargetAndDetails() throws {
        let rule = try #require(AuditTable.calls["peer-ban"])
        let (target, details) = rule.entry(["peer_id": "p1", "duration_s": 60, "reason": "spam"])
        #expect(JSON.object(target) == ["peer_id": "p1"])
        #expect(JSON.object(details) == ["duration_s": 60, "reason": "spam"])
        #expect(AuditTable.calls["role-change-request"]?.actions(["role": "guest"]) == [], "polite: no act")
        #expect(AuditTable.calls["role-change-request"]?.actions(["role": "guest", "force": true]) == [.roleForce])
        #expect(AuditTable.calls["track-update-request"]?.actions(["mute": false]) == [], "an unmute request: no act")
        #expect(AuditTable.calls["report-resolve"]?.actions([:]) == [.reportResolve])
    }
}
