import Foundation
import RoomClient
import RoomWire
import Testing

/// `roomd reports [list]|resolve` (1.3, PROTOCOL.md section 32) as an
/// operator runs it against a live daemon.
@Suite struct OperatorReportsCommandTests {
    @Test func reportsAreListedByStatusAndResolved() async throws {
        let daemon = try await Daemon.start()
        let env = OperatorCommandTests().environment(daemon)
        let (host, _) = try await daemon.join("ada", as: "host", room: "show", name: "Ada")
        let (viewer, _) = try await daemon.join("bob", as: "viewer", room: "show", name: "Bob")
        let said = try await host.call("broadcast", ["info": ["message": "hi"]])
        let message = try #require(said["message_id"]?.stringValue)
        let reported = try await viewer.call("report", ["message_id": .string(message), "reason": "rude"])
        let id = try #require(reported["report_id"]?.stringValue)

        let open = try await runCommand(Daemon.binary, ["reports", "show"], environment: env)
        #expect(open.status == 0)
        #expect(
            open.out.hasPrefix("\(id)  20") && open.out.hasSuffix("  message \(message)  by Bob (viewer)  \"rude\"\n")
        )
        #expect(
            try await runCommand(Daemon.binary, ["reports", "show", "--status", "resolved"], environment: env).out
                == "no resolved reports\n"
        )
        #expect(
            try await runCommand(Daemon.binary, ["reports", "show", "--status", "gone"], environment: env).status == 64
        )

        let resolved = try await runCommand(
            Daemon.binary,
            ["reports", "resolve", "show", id, "--note", "warned"],
            environment: env
        )
        #expect(resolved.status == 0)
        #expect(resolved.out.hasPrefix("resolved \(id)") && resolved.out.hasSuffix(": warned\n"), "\(resolved)")
        #expect(resolved.out.contains("resolved by server at 20"))
        #expect(try await host.next("on-report-update")["report"]?["note"] == "warned")
        let again = try await runCommand(Daemon.binary, ["reports", "resolve", "show", id], environment: env)
        #expect(again.status == 1 && again.err.contains("409 40904"), "\(again)")
        let json = try await runCommand(
            Daemon.binary,
            ["reports", "list", "show", "--status", "resolved", "--json"],
            environment: env
        )
        #expect(try JSON.parse(Array(json.out.utf8))["reports"]?[0]?["status"] == "resolved")
        #expect(
            try await runCommand(Daemon.binary, ["reports", "resolve", "show", "a/b"], environment: env).status == 64
        )
    }
}
