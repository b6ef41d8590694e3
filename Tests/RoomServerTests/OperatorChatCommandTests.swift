import Foundation
import RoomClient
import RoomWire
import RoomdTesting
import Testing

/// `roomd chat ROOM [--follow]` (1.3, PROTOCOL.md section 32) as an
/// operator runs it against a live daemon: the history with ISO 8601 times,
/// `--json`, and `--follow` printing new messages as they come until it is
/// stopped.
@Suite struct OperatorChatCommandTests {
    @Test func chatPrintsTheHistoryAndFollowsNewMessages() async throws {
        let daemon = try await Daemon.start()
        let env = OperatorCommandTests().environment(daemon)
        #expect(try await runCommand(Daemon.binary, ["chat", "show"], environment: env).err.contains("40001"))
        let (host, _) = try await daemon.join("ada", as: "host", room: "show", name: "Ada")
        #expect(try await runCommand(Daemon.binary, ["chat", "show"], environment: env).out == "no messages\n")
        let sent = try await host.call("broadcast", ["info": ["message": "hello"]])
        let time = try #require(sent["timestamp"]?.intValue)
        _ = try await host.call("broadcast", ["info": ["message": "second", "type": "note"]])

        let printed = try await runCommand(Daemon.binary, ["chat", "show"], environment: env)
        let lines = printed.out.split(separator: "\n").map(String.init)
        #expect(printed.status == 0)
        #expect(lines.count == 2, "\(printed)")
        #expect(lines.first == "\(Self.iso(time))  Ada (host): hello")
        #expect(lines.last?.hasSuffix("  Ada (host) [note]: second") == true)
        let json = try JSON.parse(
            Array(try await runCommand(Daemon.binary, ["chat", "show", "--json"], environment: env).out.utf8)
        )
        #expect(json["messages"]?.arrayValue?.count == 2)
        let limited = try await runCommand(Daemon.binary, ["chat", "show", "--limit", "1"], environment: env)
        #expect(limited.out.hasSuffix("second\n") && limited.out.split(separator: "\n").count == 1)
        #expect(try await runCommand(Daemon.binary, ["chat", "show", "--limit", "0"], environment: env).status == 64)

        // --follow: the history first, then each new message once, as it comes.
        let output = try ChildPipe()
        let follower = try ChildProcess.spawn(
            Daemon.binary,
            ["chat", "show", "--follow", "--interval", "1"],
            environment: env,
            stdin: .null,
            stdout: .descriptor(output.write.fileDescriptor),
            stderr: .null
        )
        try output.write.close()
        defer { follower.terminate() }
        let fd = output.read.fileDescriptor
        #expect(readLine(fd, timeoutMillis: 10_000)?.hasSuffix("Ada (host): hello") == true)
        #expect(readLine(fd, timeoutMillis: 10_000)?.hasSuffix("second") == true)
        _ = try await host.call("broadcast", ["info": ["message": "live one"]])
        #expect(readLine(fd, timeoutMillis: 10_000)?.hasSuffix("Ada (host): live one") == true)
        _ = try await host.call("broadcast", ["info": ["message": "live two"]])
        #expect(readLine(fd, timeoutMillis: 10_000)?.hasSuffix("Ada (host): live two") == true, "each message once")
        follower.signal(SIGINT)
        let deadline = Date().addingTimeInterval(5)
        while follower.isRunning && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!follower.isRunning, "Ctrl-C stops it")
    }

    static func iso(_ millis: Int) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: Double(millis / 1000)))
    }
}
