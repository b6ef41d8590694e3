import Foundation
import RoomClient
import RoomWire
import RoomdTesting
import Testing

/// `roomd` as an operator runs it: config errors, secrets, `token`, `check-config`.
/// A class so that each test's scratch directory is removed when the test ends (`deinit`).
@Suite final class CommandLineTests {
    private var scratches: [URL] = []

    deinit {
        for directory in scratches { try? FileManager.default.removeItem(at: directory) }
    }

    func scratch() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roomd-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        scratches.append(directory)
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
        let run = try runCommand(
            Daemon.binary,
            ["--config", config.path, "--port", "0"],
            environment: cleanEnvironment
        )
        #expect(run.status == 2)
        #expect(
            run.err.split(separator: "\n").contains("roles.guest.priority: must be between 1 and 5, got 9"),
            "exactly PATH: PROBLEM on its own line"
        )
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
        let daemon = try await Daemon.start(template: #"{"roles":{"host":{"colour":"red"}},"extra":1}"#)
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
        let fromFile = try runCommand(
            Daemon.binary,
            ["--config", Daemon.shippedConfig, "--port", "0", "--secret-file", secret.path],
            environment: cleanEnvironment
        )
        #expect(fromFile.status == 2)
        #expect(fromFile.err.contains("at least 32 bytes"))
        var env = cleanEnvironment
        env["ROOMD_SECRET"] = "short"
        let fromEnv = try runCommand(
            Daemon.binary,
            ["--config", Daemon.shippedConfig, "--port", "0"],
            environment: env
        )
        #expect(fromEnv.status == 2)
    }

    @Test func withoutASecretANonLoopbackHostIsRefused() throws {
        let run = try runCommand(
            Daemon.binary,
            ["--config", Daemon.shippedConfig, "--host", "0.0.0.0", "--port", "0"],
            environment: cleanEnvironment
        )
        #expect(run.status == 2)
        #expect(run.err.contains("no secret"))
    }

    @Test func loopbackWithoutASecretWritesAPrivateDevSecretThatTokenUses() async throws {
        let dir = try scratch()
        var env = cleanEnvironment
        env["XDG_RUNTIME_DIR"] = dir.path
        let out = try ChildPipe()
        let process = try ChildProcess.spawn(
            Daemon.binary,
            ["--config", Daemon.shippedConfig, "--port", "0"],
            environment: env,
            stdout: .descriptor(out.write.fileDescriptor),
            stderr: .null
        )
        try out.write.close()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        let line = try #require(readLine(out.read.fileDescriptor, timeoutMillis: 10_000))
        let port = try #require(Int(line.split(separator: ":").last!.dropLast(3)))
        let secretPath = dir.appendingPathComponent("roomd/dev-\(port).secret").path
        let attributes = try FileManager.default.attributesOfItem(atPath: secretPath)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)

        let minted = try await runCommand(
            Daemon.binary,
            ["token", "--port", "\(port)", "--room", "demo", "--user", "ada", "--role", "host"],
            environment: env
        )
        #expect(minted.status == 0)
        let client = try await RoomClient.connect(to: "ws://127.0.0.1:\(port)/ws", defaultTimeout: Daemon.waitTimeout)
        let joined = try await client.call(
            "join",
            ["token": .string(minted.out.trimmingCharacters(in: .whitespacesAndNewlines))]
        )
        #expect(joined["room"]?["room_id"] == "demo")
    }

    @Test func secretFileIgnoresOneTrailingNewlineAndWinsOverTheEnvironment() async throws {
        let dir = try scratch()
        let secret = "an-operator-secret-of-at-least-32-bytes"
        let file = dir.appendingPathComponent("secret")
        try Data((secret + "\n").utf8).write(to: file)
        var env = cleanEnvironment
        env["ROOMD_SECRET"] = "a-different-environment-secret-32-bytes-long"
        let minted = try await runCommand(
            Daemon.binary,
            [
                "token", "--room", "r", "--user", "u", "--role", "host", "--secret-file", file.path,
                "--avatar", "https://example.com/u.png", "--attribute", "seat=12", "--attribute", "team=a=b",
            ],
            environment: env
        )
        #expect(minted.status == 0)
        // The daemon gets the same secret without the newline; section 27's claims come along.
        let daemon = try await Daemon.start(secret: Array(secret.utf8))
        let client = try await daemon.client()
        let token = minted.out.trimmingCharacters(in: .whitespacesAndNewlines)
        let joined = try await client.call("join", ["token": .string(token)])
        #expect(joined["room"]?["room_id"] == "r")
        #expect(joined["peer"]?["info"]?["avatar"] == "https://example.com/u.png")
        #expect(joined["peer"]?["attributes"] == ["seat": "12", "team": "a=b"])
        let management = try await runCommand(
            Daemon.binary,
            ["token", "--management", "--secret-file", file.path],
            environment: env
        )
        #expect(management.status == 0)
        #expect(management.out.split(separator: ".").count == 3)
        // A management token cannot join.
        let other = try await daemon.client()
        #expect(
            try await other.errorCode(
                "join",
                ["token": .string(management.out.trimmingCharacters(in: .whitespacesAndNewlines))]
            ) == 40100
        )
    }

    @Test func localhostIsALoopbackHostToo() async throws {
        let daemon = try await Daemon.start(arguments: ["--host", "localhost"], listeningHost: "localhost")
        let client = try await RoomClient.connect(
            to: "ws://127.0.0.1:\(daemon.port)/ws",
            defaultTimeout: Daemon.waitTimeout
        )
        _ = try await client.call("ping")
    }

    @Test func checkConfigPrintsTheShippedRoles() throws {
        let run = try runCommand(Daemon.binary, ["check-config", Daemon.shippedConfig])
        #expect(run.status == 0)
        for role in ["host", "guest", "viewer", "moderator"] { #expect(run.out.contains("  \(role):")) }
        #expect(run.out.contains("guest-call-in"))
    }

    /// A port that was free a moment ago.
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Starts `roomd serve` with `arguments`; returns it once it listens.
    func serve(_ arguments: [String], environment: [String: String]) throws -> ChildProcess {
        let out = try ChildPipe()
        let process = try ChildProcess.spawn(
            Daemon.binary,
            ["--config", Daemon.shippedConfig] + arguments,
            environment: environment,
            stdout: .descriptor(out.write.fileDescriptor),
            stderr: .null
        )
        try out.write.close()
        guard readLine(out.read.fileDescriptor, timeoutMillis: 10_000) != nil else {
            process.signal(SIGKILL)
            process.waitUntilExit()
            throw DaemonError(description: "roomd \(arguments) printed no listening line")
        }
        return process
    }

    @Test func theDevSecretOfAFixedPortSurvivesARestart() async throws {
        let dir = try scratch()
        var env = cleanEnvironment
        env["XDG_RUNTIME_DIR"] = dir.path
        let port = Self.freePort()
        var first = try serve(["--port", "\(port)"], environment: env)
        let minted = try await runCommand(
            Daemon.binary,
            ["token", "--port", "\(port)", "--room", "demo", "--user", "ada", "--role", "host"],
            environment: env
        )
        let token = minted.out.trimmingCharacters(in: .whitespacesAndNewlines)
        first.terminate()
        first.waitUntilExit()
        let secretPath = dir.appendingPathComponent("roomd/dev-\(port).secret").path
        #expect(FileManager.default.fileExists(atPath: secretPath), "kept across restarts")
        first = try serve(["--port", "\(port)"], environment: env)
        defer {
            first.terminate()
            first.waitUntilExit()
        }
        let client = try await RoomClient.connect(to: "ws://127.0.0.1:\(port)/ws", defaultTimeout: Daemon.waitTimeout)
        let joined = try await client.call("join", ["token": .string(token)])
        #expect(joined["room"]?["room_id"] == "demo", "a token minted before the restart still joins")
    }

    @Test func aBusyPortIsOneRoomdLineSuggestingPort0() throws {
        let port = Self.freePort()
        let holder = try serve(
            ["--port", "\(port)", "--secret-file", try secretFile()],
            environment: cleanEnvironment
        )
        defer {
            holder.terminate()
            holder.waitUntilExit()
        }
        let run = try runCommand(
            Daemon.binary,
            ["--config", Daemon.shippedConfig, "--port", "\(port)", "--secret-file", try secretFile()],
            environment: cleanEnvironment
        )
        #expect(run.status == 1)
        let lines = run.err.split(separator: "\n")
        #expect(lines.count == 1, "only roomd's own line, no libwebsockets lines: \(run.err)")
        #expect(lines.first?.hasPrefix("roomd: cannot listen on 127.0.0.1:\(port)") == true)
        #expect(run.err.contains("--port 0"))
    }

    func secretFile() throws -> String {
        let file = try scratch().appendingPathComponent("secret")
        try Data(Daemon.defaultSecret).write(to: file)
        return file.path
    }

    @Test func versionIsNotAUsageError() throws {
        for arguments in [["--version"], ["serve", "--version"]] {
            let run = try runCommand(Daemon.binary, arguments)
            #expect(run.status == 0)
            #expect(run.out.hasPrefix("roomd 0."))
        }
    }

    @Test func checkConfigStrictListsEveryProblemWithADidYouMean() throws {
        let config = try scratch().appendingPathComponent("typo.json")
        try #"{"roles":{"host":{"priority":9,"permissions":{"endroom":true}},"guest":{"maxPeerCount":-5}}}"#
            .write(to: config, atomically: true, encoding: .utf8)
        let strict = try runCommand(Daemon.binary, ["check-config", "--strict", config.path])
        #expect(strict.status == 2)
        #expect(
            strict.err.split(separator: "\n").map(String.init) == [
                "roles.guest.maxPeerCount: must be at least -1, got -5",
                "roles.host.priority: must be between 1 and 5, got 9",
                "roles.host.permissions.endroom: unknown permission, did you mean endRoom?",
            ]
        )
        try #"{"roles":{"host":{"permissions":{"endroom":true}}}}"#.write(to: config, atomically: true, encoding: .utf8)
        let lenient = try runCommand(Daemon.binary, ["check-config", config.path])
        #expect(lenient.status == 0)
        #expect(
            lenient.err.contains("roles.host.permissions.endroom: unknown permission ignored, did you mean endRoom?")
        )
        let serveStrict = try runCommand(
            Daemon.binary,
            ["--config", config.path, "--strict", "--port", "0"],
            environment: cleanEnvironment
        )
        #expect(serveStrict.status == 2)
    }

    @Test func tokenRefusesIdsThatJoinWouldRefuse() throws {
        let tooLong = String(repeating: "u", count: 257)  // a user_id claim over 256 bytes is 41300
        for arguments in [
            ["--room", "my room", "--user", "u"], ["--room", "r", "--user", ""], ["--room", "r", "--user", tooLong],
        ] {
            let run = try runCommand(
                Daemon.binary,
                ["token", "--role", "host", "--secret-file", try secretFile()] + arguments
            )
            #expect(run.status == 64, "\(arguments)")
            #expect(run.out.isEmpty)
        }
    }

    @Test func joinIsABotThatPrintsPushesAndReadsCalls() async throws {
        let daemon = try await Daemon.start()
        let secret = daemon.directory.appendingPathComponent("secret").path
        let (host, _) = try await daemon.join("h", as: "host")
        let kept = try await host.call("broadcast", ["info": ["message": "before the bot"]])
        try await host.pinMessage(kept["message_id"]?.stringValue)
        let input = try ChildPipe()
        let output = try ChildPipe()
        let bot = try ChildProcess.spawn(
            Daemon.binary,
            [
                "join", "--room", "room-1", "--role", "viewer", "--name", "Bot", "--url", daemon.url, "--secret-file",
                secret,
            ],
            stdin: .descriptor(input.read.fileDescriptor),
            stdout: .descriptor(output.write.fileDescriptor),
            stderr: .null
        )
        try input.read.close()
        try output.write.close()
        let fd = output.read.fileDescriptor
        let joined = try #require(readLine(fd, timeoutMillis: 5000))
        #expect(joined.hasPrefix("= {\"peer\":"))
        #expect(
            joined.contains(#""policy":{"name":"viewer","known_roles":["host","guest","moderator","viewer"]}"#),
            "the policy is abbreviated"
        )
        #expect(
            joined.contains(
                #""chat":{"messages":1,"pinned":\#(kept["message_id"]!.text),"state":{"paused":false,"slow_mode_s":0,"chat_banned":false,"until":null}}"#
            ),
            "the chat backfill is its count, pinned id and chat state"
        )
        _ = try await host.next("on-peer-join")
        _ = try await host.call("broadcast", ["info": ["message": "hello bot"]])
        let push = try #require(readLine(fd, timeoutMillis: 5000))
        #expect(push.hasPrefix("< on-broadcast {") && push.contains("hello bot"))
        _ = try await host.setChatState(slowModeSeconds: 60)
        #expect(
            readLine(fd, timeoutMillis: 5000)
                == #"< on-chat-state {"paused":false,"slow_mode_s":60,"chat_banned":false,"until":null}"#
        )
        let say = #"broadcast {"info":{"message":"hi"}}"#
        input.write.write(
            Data("ping {\"timestamp\":7}\ngroup-join {\"name\":\"bad name\"}\n\(say)\n\(say)\nleave\n".utf8)
        )
        #expect(readLine(fd, timeoutMillis: 5000)?.hasPrefix("= {\"timestamp\":7,") == true)
        #expect(readLine(fd, timeoutMillis: 5000)?.hasPrefix("! -32602 ") == true)
        #expect(readLine(fd, timeoutMillis: 5000)?.hasPrefix("= {\"message_id\":") == true)
        let slow = try #require(readLine(fd, timeoutMillis: 5000))
        #expect(
            slow.hasPrefix("! 42901 slow mode") && slow.contains(#"{"retry_after_ms":"#),
            "an error's data is printed"
        )
        #expect(readLine(fd, timeoutMillis: 5000) == "= {}")
        #expect(try await host.next("on-peer-leave")["reason"] == "client request")
        #expect(bot.waitUntilExit() == 0)
    }
}
