import Foundation
import RoomClient
import RoomWire
import Testing

/// `roomd audit ROOM` (PROTOCOL.md section 32), as an operator runs it.
extension OperatorCommandTests {
    @Test func auditPrintsOneLinePerActWithISOTimes() async throws {
        let daemon = try await Daemon.start()
        let env = environment(daemon)
        let (host, _) = try await daemon.join("ada", as: "host", room: "night")
        _ = try await host.call("chat-ban", ["user_id": "troll", "shadow": true])
        _ = try await host.call("stage-block", ["user_id": "troll", "duration_s": 60])
        let printed = try await cli(["audit", "night"], env)
        #expect(printed.status == 0, "\(printed)")
        let lines = printed.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(printed.out)")
        #expect(lines.first?.hasPrefix("#1  ") == true)
        #expect(lines.first?.contains("chat.ban  user_id=\"troll\"  (shadow=true)") == true, "\(lines)")
        #expect(lines.first.flatMap { Self.millis(iso: $0.dropFirst(4).prefix(20)) } != nil, "\(lines)")
        #expect(lines.last?.contains("ada (host)  stage.block") == true, "\(lines)")
        let after = try await cli(["audit", "night", "--after", "1", "--json"], env)
        #expect(after.status == 0)
        let json = try JSON.parse(after.out.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(json["entries"]?.arrayValue?.count == 1)
        let bad = try await cli(["audit", "night", "--limit", "0"], env)
        #expect(bad.status != 0)
    }
}
