import Foundation
import RoomClient
import RoomWire
import Testing

/// `roomd` as an operator runs it: config errors, secrets, `token`, `check-config`.
@Suite struct CommandLineTests {
    func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roomd-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    var cleanEnvironment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "ROOMD_SECRET")
        env.removeValue(forKey: "ROOMD_ACCESS_KEY")
        return env
    }

    @Test func invalidTemplateExits2NamingThePath() throws {
        let dir = try scratch()
        let config = dir.appendingPathComponent("bad.json")
        try #"{"roles":{"guest":{"priority":9},"host":{"subscribeParams":{"subscribeToRoles":["host","hots"]}}}}"#
            .write(to: config, atomically: true, encoding: .utf8)
        let run = try runCommand(Daemon.binary, ["--config", config.path, "--port", "0"], environment: cleanEnvironment)
        #expect(run.status == 2)
        #expect(run.err.split(separator: "\n").contains("roles.guest.priority: must be between 1 and 5, got 9"),
                "exactly PATH: PROBLEM on its own line")
        #expect(run.out.isEmpty, "nothing on stdout: it never listened")

        try #"{"roles":{"host":{"subscribeParams":{"subscribeToRoles":["host","hots"]}}}}"#
            .write(to: config, atomically: true, encoding: .utf8)
        let typo = try runCommand(Daemon.binary, ["check-config", config.path])
        #expect(typo.status == 2)
        #expect(typo.err.contains(#"roles.host.subscribeParams.subscribeToRoles[1]: no role named "hots""#))

        let missing = try runCommand(Daemon.binary, ["--config", dir.appendingPathComponent("none.json").path])
        #expect(missing.status == 2)
    }

    @Test func unknownKeysAreWarningsAndTheDaemonStillStarts() async throws {
        let daemon = try Daemon.start(template: #"{"roles":{"host":{"colour":"red"}},"extra":1}"#)
        #expect(daemon.stderr.contains("roles.host.colour"))
        #expect(daemon.stderr.contains("extra"))
        let (peer, _) = try await daemon.join("a", as: "host")
        #expect(peer.isClosed == false)
    }

    @Test(arguments: [
        ["--config", Daemon.shippedConfig, "--port", "99999999999"],
        ["--config", Daemon.shippedConfig, "--port", "65536"],
        ["--config", Daemon.shippedConfig, "--port", "-1"],
        ["token", "--room", "r", "--user", "u", "--role", "host", "--port", "70000"],
        ["token", "--room", "r", "--user", "u", "--role", "host", "--ttl", "1e308d"],
        ["token", "--room", "r", "--user", "u", "--role", "host", "--ttl", "0s"],
    ])
    func numericFlagsOutOfRangeAreUsageErrors(arguments: [String]) throws {
        let run = try runCommand(Daemon.binary, arguments, environment: cleanEnvironment)
        #expect(run.status == 64, "\(arguments): \(run.err)")
        #expect(run.err.contains("--port") || run.err.contains("--ttl"), "names the flag: \(run.err)")
        #expect(run.out.isEmpty)
    }

    @Test func secretsShorterThan32BytesExit2() throws {
        let dir = try scratch()
        let secret = dir.appendingPathComponent("short")
        try Data("too-short\n".utf8).write(to: secret)
        let fromFile = try runCommand(Daemon.binary, ["--config", Daemon.shippedConfig, "--port", "0", "--secret-file", secret.path],
                                      environment: cleanEnvironment)
        #expect(fromFile.status == 2)
        #expect(fromFile.err.contains("at least 32 bytes"))
        var env = cleanEnvironment
        env["ROOMD_SECRET"] = "short"
        let fromEnv = try runCommand(Daemon.binary, ["--config", Daemon.shippedConfig, "--port", "0"], environment: env)
        #expect(fromEnv.status == 2)
    }

    @Test func withoutASecretANonLoopbackHostIsRefused() throws {
        let run = try runCommand(Daemon.binary, ["--config", Daemon.shippedConfig, "--host", "0.0.0.0", "--port", "0"],
                                 environment: cleanEnvironment)
        #expect(run.status == 2)
        #expect(run.err.contains("no secret"))
    }

    @Test func loopbackWithoutASecretWritesAPrivateDevSecretThatTokenUses() async throws {
        let dir = try scratch()
        var env = cleanEnvironment
        env["TMPDIR"] = dir.path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Daemon.binary)
        process.arguments = ["--config", Daemon.shippedConfig, "--port", "0"]
        process.environment = env
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { process.terminate(); process.waitUntilExit() }
        let line = try #require(readLine(out.fileHandleForReading.fileDescriptor, timeoutMillis: 10_000))
        let port = try #require(Int(line.split(separator: ":").last!.dropLast(3)))
        let secretPath = dir.appendingPathComponent("roomd-dev-\(port).secret").path
        let attributes = try FileManager.default.attributesOfItem(atPath: secretPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        let minted = try runCommand(Daemon.binary, ["token", "--port", "\(port)", "--room", "demo", "--user", "ada", "--role", "host"],
                                    environment: env)
        #expect(minted.status == 0)
        let client = try await RoomClient.connect(to: "ws://127.0.0.1:\(port)/ws")
        let joined = try await client.call("join", ["token": .string(minted.out.trimmingCharacters(in: .whitespacesAndNewlines))])
        #expect(joined["room"]?["room_id"] == "demo")
    }

    @Test func secretFileIgnoresOneTrailingNewlineAndWinsOverTheEnvironment() async throws {
        let dir = try scratch()
        let secret = "an-operator-secret-of-at-least-32-bytes"
        let file = dir.appendingPathComponent("secret")
        try Data((secret + "\n").utf8).write(to: file)
        var env = cleanEnvironment
        env["ROOMD_SECRET"] = "a-different-environment-secret-32-bytes-long"
        let minted = try runCommand(Daemon.binary, ["token", "--room", "r", "--user", "u", "--role", "host", "--secret-file", file.path],
                                    environment: env)
        #expect(minted.status == 0)
        // The daemon gets the same secret without the newline.
        let daemon = try Daemon.start(secret: Array(secret.utf8))
        let client = try await daemon.client()
        let token = minted.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await client.call("join", ["token": .string(token)])["room"]?["room_id"] == "r")
        let management = try runCommand(Daemon.binary, ["token", "--management", "--secret-file", file.path], environment: env)
        #expect(management.status == 0)
        #expect(management.out.split(separator: ".").count == 3)
        // A management token cannot join.
        let other = try await daemon.client()
        #expect(try await other.errorCode("join", ["token": .string(management.out.trimmingCharacters(in: .whitespacesAndNewlines))]) == 40100)
    }

    @Test func localhostIsALoopbackHostToo() async throws {
        let daemon = try Daemon.start(arguments: ["--host", "localhost"], listeningHost: "localhost")
        let client = try await RoomClient.connect(to: "ws://127.0.0.1:\(daemon.port)/ws")
        _ = try await client.call("ping")
    }

    @Test func checkConfigPrintsTheShippedRoles() throws {
        let run = try runCommand(Daemon.binary, ["check-config", Daemon.shippedConfig])
        #expect(run.status == 0)
        for role in ["host", "guest", "viewer", "moderator"] { #expect(run.out.contains("  \(role):")) }
        #expect(run.out.contains("guest-call-in"))
    }
}
