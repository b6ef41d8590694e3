import Foundation
import RoomClient
import RoomWire
import RoomdTesting
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

    /// `--follow`: what the log holds, then each new act once, as it comes,
    /// until Ctrl-C.
    @Test func auditFollowPrintsNewActsAsTheyCome() async throws {
        let daemon = try await Daemon.start()
        let (host, _) = try await daemon.join("ada", as: "host", room: "late")
        _ = try await host.call("chat-ban", ["user_id": "troll"])
        let output = try ChildPipe()
        let follower = try ChildProcess.spawn(
            Daemon.binary,
            ["audit", "late", "--follow"],
            environment: environment(daemon),
            stdin: .null,
            stdout: .descriptor(output.write.fileDescriptor),
            stderr: .null
        )
        try output.write.close()
        defer { follower.terminate() }
        let fd = output.read.fileDescriptor
        #expect(readLine(fd, timeoutMillis: 10_000)?.contains("chat.ban") == true)
        _ = try await host.call("stage-block", ["user_id": "troll"])
        #expect(readLine(fd, timeoutMillis: 10_000)?.hasPrefix("#2  ") == true)
        _ = try await host.call("chat-unban", ["user_id": "troll"])
        let third = readLine(fd, timeoutMillis: 10_000)
        #expect(
            third?.hasPrefix("#3  ") == true && third?.contains("chat.unban") == true,
            "each act once: \(third ?? "")"
        )
        follower.signal(SIGINT)
        let deadline = Date().addingTimeInterval(5)
        while follower.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!follower.isRunning, "Ctrl-C stops it")
    }
}
