import Foundation
import RoomClient
import RoomWire
import RoomdTesting
import Testing

/// `roomd join` as a person at a terminal uses it (issue 25, items 4 and 7):
/// it notices the server closing, knows shorthands, lists the calls, and a
/// secret that does not verify names the secret it used.
@Suite struct JoinCommandTests {
    /// A running `roomd join` with its stdin and stdout.
    struct Bot {
        let process: ChildProcess
        let input: FileHandle
        let output: FileHandle
        var fd: Int32 { output.fileDescriptor }

        static func start(_ arguments: [String], environment: [String: String]? = nil) throws -> Bot {
            let input = try ChildPipe()
            let output = try ChildPipe()
            let process = try ChildProcess.spawn(
                Daemon.binary,
                ["join"] + arguments,
                environment: environment,
                stdin: .descriptor(input.read.fileDescriptor),
                stdout: .descriptor(output.write.fileDescriptor),
                stderr: .null
            )
            try input.read.close()
            try output.write.close()
            return Bot(process: process, input: input.write, output: output.read)
        }

        func type(_ line: String) { input.write(Data((line + "\n").utf8)) }
        func line() -> String? { readLine(fd, timeoutMillis: 5000) }

        /// The next line that is not a push of another method.
        func next(startingWith prefix: String) -> String? {
            while let line = line() {
                if line.hasPrefix(prefix) { return line }
                if !line.hasPrefix("< ") { return line }
            }
            return nil
        }

        /// Waits for the exit (at most 5 s); nil if it is still running.
        func finalStatus() -> Int32? {
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            guard let status = process.exitStatus else {
                process.terminate()
                return nil
            }
            return status
        }
    }

    @Test func shorthandsMeAndTheRoomEndingExitNonZeroWithTheCloseCode() async throws {
        let daemon = try await Daemon.start()
        let secret = daemon.directory.appendingPathComponent("secret").path
        let (host, _) = try await daemon.join("h", as: "host")
        let bot = try Bot.start([
            "--room", "room-1", "--role", "viewer", "--user", "bot-1", "--url", daemon.url, "--secret-file", secret,
        ])
        let joined = try #require(bot.line())
        let peerID = try #require(try JSON.parse(Array(joined.dropFirst(2).utf8))["peer"]?["peer_id"]?.stringValue)
        _ = try await host.next("on-peer-join")

        bot.type("help")
        #expect(bot.line()?.hasPrefix("Calls (type `method {json params}`") == true)
        var help: [String] = []
        while let line = bot.line(), line != "      this list" { help.append(line) }
        #expect(help.contains("  poll-response {poll_id, responses}") && help.contains("  invite PEER ROLE"))
        bot.type("me")
        #expect(bot.line() == #"= {"peer_id":"\#(peerID)","role":"viewer","room_id":"room-1"}"#)
        bot.type("accept")
        #expect(bot.line() == "! no invitation to accept: no on-role-change-request yet")
        bot.type("hand")
        #expect(bot.next(startingWith: "= ") == #"= {"groups":["_handraise"]}"#)
        _ = try await host.next("on-peer-update", where: { $0["peer"]?["groups"] == ["_handraise"] })
        _ = try await host.requestRoleChange(for: peerID, to: "guest")
        #expect(bot.next(startingWith: "< on-role-change-request")?.hasPrefix("< on-role-change-request {") == true)
        bot.type("accept")
        let accepted = try #require(bot.next(startingWith: "= "))
        #expect(accepted.hasPrefix(#"= {"peer":{"peer_id":"\#(peerID)""#) && accepted.contains(#""role":"guest""#))
        bot.type("unhand")
        #expect(bot.next(startingWith: "= ") == #"= {"groups":[]}"#)
        bot.type("chat hello from the bot")
        #expect(bot.next(startingWith: "= ")?.hasPrefix(#"= {"message_id":"#) == true)
        #expect(try await host.next("on-broadcast")["info"]?["message"] == "hello from the bot")
        bot.type("invite \(peerID)")
        #expect(bot.next(startingWith: "! ") == "! usage: invite PEER ROLE")
        bot.type("me")
        #expect(bot.next(startingWith: "= ") == #"= {"peer_id":"\#(peerID)","role":"guest","room_id":"room-1"}"#)

        try await host.endRoom(reason: "show over")
        #expect(bot.next(startingWith: "< on-peer-leave-request")?.contains(#""room_end":true"#) == true)
        #expect(bot.next(startingWith: "# closed") == "# closed 4002")
        #expect(bot.finalStatus() == 1, "a close the server chose is a failure, without waiting for stdin")
    }

    /// The call-in queue's shorthands (1.3, section 26): a viewer bot asks
    /// with a note, a host bot reads the queue, invites one caller, declines
    /// another and blocks a third user, whose next ask is 40303.
    @Test func stageShorthandsAskQueueInviteDeclineAndBlock() async throws {
        let daemon = try await Daemon.start()
        let secret = daemon.directory.appendingPathComponent("secret").path
        func bot(_ user: String, _ role: String) throws -> Bot {
            try Bot.start([
                "--room", "room-1", "--role", role, "--user", user, "--url", daemon.url, "--secret-file", secret,
            ])
        }
        func answer(_ bot: Bot) throws -> JSON {
            let line = try #require(bot.next(startingWith: "= "))
            return try JSON.parse(Array(line.dropFirst(2).utf8))
        }
        let host = try bot("h", "host")
        #expect(host.line()?.hasPrefix("= {\"peer\":") == true)
        let viewer = try bot("v1", "viewer")
        #expect(viewer.line()?.hasPrefix("= {\"peer\":") == true)
        let (second, _) = try await daemon.join("v2", as: "viewer")
        let (troll, _) = try await daemon.join("t", as: "viewer")

        viewer.type("ask I have a question about the tour")
        let asked = try answer(viewer)["request"]
        #expect(asked?["note"] == "I have a question about the tour" && asked?["status"] == "waiting")
        let first = try #require(asked?["request_id"]?.stringValue)
        let other = try #require(try await second.call("stage-request", [:])["request"]?["request_id"]?.stringValue)
        _ = try await troll.call("stage-request", ["note": "let me on"])

        host.type("queue")
        let queue = try answer(host)
        #expect(queue["total"] == 3 && queue["requests"]?[0]?["request_id"]?.stringValue == first)
        host.type("invite-req \(first)")
        let invited = try answer(host)
        #expect(invited["request"]?["status"] == "invited" && invited["request"]?["role"] == "guest")
        #expect(viewer.next(startingWith: "< on-role-change-request")?.hasPrefix("< on-role-change-request {") == true)
        viewer.type("accept")
        #expect(try answer(viewer)["peer"]?["role"] == "guest")
        host.type("decline \(other)")
        #expect(try answer(host) == [:])
        _ = try await second.next("on-stage-status", where: { $0["request"]?["status"] == "declined" })
        host.type("block t")
        #expect(try answer(host) == [:])
        #expect(try await troll.errorCode("stage-request", [:]) == 40303)
        host.type("queue")
        #expect(try answer(host)["total"] == 0)

        host.type("invite-req")
        #expect(host.next(startingWith: "! ") == "! usage: invite-req ID")
        host.type("decline a b")
        #expect(host.next(startingWith: "! ") == "! usage: decline ID")
        host.type("block")
        #expect(host.next(startingWith: "! ") == "! usage: block USER")
        for bot in [host, viewer] {
            try bot.input.close()
            #expect(bot.next(startingWith: "# end of input")?.hasPrefix("# end of input") == true)
            #expect(bot.finalStatus() == 0)
        }
    }

    /// The review queue's shorthands (1.3, section 31): a host bot lists
    /// the held messages, approves one and rejects another with a reason.
    @Test func heldShorthandsListApproveAndReject() async throws {
        let daemon = try await Daemon.start(settings: #"{"chat":{"hold":{"first_message":true}}}"#)
        let secret = daemon.directory.appendingPathComponent("secret").path
        let host = try Bot.start([
            "--room", "room-1", "--role", "host", "--user", "h", "--url", daemon.url, "--secret-file", secret,
        ])
        #expect(host.line()?.hasPrefix("= {\"peer\":") == true)
        func answer() throws -> JSON {
            let line = try #require(host.next(startingWith: "= "))
            return try JSON.parse(Array(line.dropFirst(2).utf8))
        }
        let (one, _) = try await daemon.join("v1", as: "viewer")
        let (two, _) = try await daemon.join("v2", as: "viewer")
        let first = try #require(
            try await one.call("broadcast", ["info": ["message": "hi"]])["message_id"]?.stringValue
        )
        let second = try #require(
            try await two.call("broadcast", ["info": ["message": "yo"]])["message_id"]?.stringValue
        )
        host.type("held")
        #expect(try answer()["messages"]?.arrayValue?.count == 2)
        host.type("approve \(first)")
        #expect(try answer() == [:])
        #expect(try await one.next("on-message-review")["status"] == "approved")
        host.type("reject \(second) not on topic")
        #expect(try answer() == [:])
        #expect(try await two.next("on-message-review")["reason"] == "not on topic")
        host.type("approve")
        #expect(host.next(startingWith: "! ") == "! usage: approve MESSAGE_ID")
        try host.input.close()
        #expect(host.finalStatus() == 0)
    }

    @Test func aDaemonThatStopsEndsTheSessionWithItsCode() async throws {
        let daemon = try await Daemon.start(singleProcess: true)  // a cluster's node drains (1012: ClusterDrainTests)
        let secret = daemon.directory.appendingPathComponent("secret").path
        let bot = try Bot.start(["--room", "room-1", "--role", "host", "--url", daemon.url, "--secret-file", secret])
        #expect(bot.line()?.hasPrefix("= {\"peer\":") == true)
        _ = await daemon.stop()
        let closed = try #require(bot.next(startingWith: "# closed"))
        #expect(closed.hasPrefix("# closed 1001") || closed.hasPrefix("# closed 1006"), "\(closed)")
        #expect(bot.finalStatus() == 1)
    }

    @Test func leaveAndEndOfInputAreNotFailures() async throws {
        let daemon = try await Daemon.start()
        let secret = daemon.directory.appendingPathComponent("secret").path
        let bot = try Bot.start(["--room", "room-1", "--role", "host", "--url", daemon.url, "--secret-file", secret])
        #expect(bot.line()?.hasPrefix("= {\"peer\":") == true)
        bot.type("leave")
        #expect(bot.next(startingWith: "= ") == "= {}")
        #expect(bot.finalStatus() == 0)

        let other = try Bot.start(["--room", "room-1", "--role", "host", "--url", daemon.url, "--secret-file", secret])
        #expect(other.line()?.hasPrefix("= {\"peer\":") == true)
        try other.input.close()
        #expect(other.next(startingWith: "# end of input")?.hasPrefix("# end of input") == true)
        #expect(other.finalStatus() == 0)
    }

    @Test func aSignatureMismatchNamesTheSecretFileItUsed() async throws {
        let daemon = try await Daemon.start()
        let wrong = daemon.directory.appendingPathComponent("wrong-secret").path
        try String(repeating: "w", count: 40).write(toFile: wrong, atomically: true, encoding: .utf8)
        let url = daemon.url  // one node's, in a cluster
        let bot = try Bot.start(["--room", "room-1", "--role", "host", "--url", url, "--secret-file", wrong])
        #expect(bot.line() == "! 40109 token signature does not verify")
        let hint = try #require(bot.line())
        #expect(hint.hasPrefix("# the token was signed with --secret-file \(wrong); the roomd at \(url) uses another"))
        #expect(bot.finalStatus() == 1)

        var environment = ProcessInfo.processInfo.environment
        environment["ROOMD_SECRET_FILE"] = wrong
        environment.removeValue(forKey: "ROOMD_SECRET")
        let fromEnvironment = try Bot.start(
            ["--room", "room-1", "--role", "host", "--url", daemon.url],
            environment: environment
        )
        #expect(fromEnvironment.line() == "! 40109 token signature does not verify")
        #expect(fromEnvironment.line()?.hasPrefix("# the token was signed with $ROOMD_SECRET_FILE \(wrong);") == true)
        #expect(fromEnvironment.finalStatus() == 1)
    }

    /// `help` and `--help` list every call of docs/openrpc.json with its
    /// params: a method added to the protocol fails here until `roomd join` lists it.
    @Test func helpListsEveryCallOfTheOpenRPCDocument() throws {
        let document = try JSON.parse(
            Array(try Data(contentsOf: Daemon.packageRoot.appendingPathComponent("docs/openrpc.json")))
        )
        let calls = (document["methods"]?.arrayValue ?? []).filter { $0["x-roomd-push"] != true }
        #expect(calls.count > 50)
        let help = try runCommand(Daemon.binary, ["join", "--help"], environment: ProcessInfo.processInfo.environment)
        for call in calls {
            let name = try #require(call["name"]?.stringValue)
            let required = (call["params"]?.arrayValue ?? []).filter { $0["required"] == true }
                .compactMap { $0["name"]?.stringValue }
            let line = help.out.split(separator: "\n").first { $0.hasPrefix("  \(name) {") || $0 == "  \(name)" }
            #expect(line != nil, "roomd join --help does not list \(name): run scripts/join-methods.py")
            for param in required {
                #expect(line?.contains(param) == true, "\(name)'s usage lacks its param \(param)")
            }
        }
        for shorthand in [
            "hand", "invite PEER ROLE", "accept", "chat TEXT", "me", "ask NOTE", "queue", "invite-req ID", "decline ID",
            "block USER",
        ] {
            #expect(help.out.contains("\n  \(shorthand)\n"), "--help lacks the shorthand \(shorthand)")
        }
    }

    /// `make cluster` (scripts/cluster.sh) prints `roomd join` lines with the
    /// cluster's secret file: pasted as printed, one joins node 2.
    @Test(.enabled(if: (try? NatsServerProcess.locateBinary()) != nil, "needs nats-server"))
    func theClusterScriptPrintsJoinLinesThatWork() async throws {
        let (port, natsPort) = try #require(Self.fixedPorts(), "no 4 free ports below the ephemeral range")
        var environment = ProcessInfo.processInfo.environment
        environment["ROOMD_BIN"] = Daemon.binary
        environment["PORT"] = "\(port)"
        environment["NATS_PORT"] = "\(natsPort)"
        environment.removeValue(forKey: "ROOMD_SECRET")
        environment.removeValue(forKey: "ROOMD_SECRET_FILE")
        environment["READY_TIMEOUT"] = "60"  // 3 nodes and a nats-server beside 23 other tests
        let output = try ChildPipe()
        let errors = try ChildPipe()
        let script = try ChildProcess.spawn(
            "/bin/sh",
            [Daemon.packageRoot.appendingPathComponent("scripts/cluster.sh").path],
            environment: environment,
            stdout: .descriptor(output.write.fileDescriptor),
            stderr: .descriptor(errors.write.fileDescriptor)
        )
        try output.write.close()
        try errors.write.close()
        defer {
            script.signal(SIGINT)
            script.waitUntilExit()
        }
        var printed: [String] = []
        while let line = readLine(output.read.fileDescriptor, timeoutMillis: 70_000) {
            printed.append(line)
            if line == "Ctrl-C stops everything." { break }
        }
        let joins = printed.filter { $0.contains(" join --url ws://127.0.0.1:") }
        #expect(joins.count == 3, "stdout: \(printed)")
        if joins.isEmpty {
            script.signal(SIGINT)
            script.waitUntilExit()
            Issue.record(
                "cluster.sh: \(String(decoding: errors.read.readDataToEndOfFile(), as: UTF8.self))"
            )
            return
        }
        let second = try #require(joins.first { $0.contains(":\(port + 1)/ws") }, "a line for node 2")
        let words = second.split(separator: " ").map(String.init)
        #expect(words.first == Daemon.binary && words.contains("--secret-file"))
        let bot = try Bot.start(Array(words.dropFirst(2)), environment: environment)  // `ROOMD join …`: the rest
        #expect(bot.line()?.hasPrefix("= {\"peer\":") == true, "the printed line joins with the cluster's secret")
        bot.type("leave")
        #expect(bot.next(startingWith: "= ") == "= {}")
        #expect(bot.finalStatus() == 0)
    }

    /// `make cluster` while something holds one of its ports (`make run` on
    /// 7880) fails at once and names the port and its holder (issue 36: it
    /// waited 15 s, then said only "the cluster did not come up").
    @Test func theClusterScriptFailsFastOnATakenPort() throws {
        let (port, natsPort) = try #require(Self.fixedPorts(), "no 4 free ports below the ephemeral range")
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port + 1).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(holder, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0 && listen(holder, 1) == 0)
        var environment = ProcessInfo.processInfo.environment
        environment["ROOMD_BIN"] = Daemon.binary
        environment["PORT"] = "\(port)"
        environment["NATS_PORT"] = "\(natsPort)"
        let run = try runTool(
            "/bin/sh",
            [Daemon.packageRoot.appendingPathComponent("scripts/cluster.sh").path],
            environment: environment,
            timeout: 30
        )
        let said = String(decoding: run.stderr, as: UTF8.self)
        #expect(run.status == 1, "\(said)")
        #expect(said.hasPrefix("port \(port + 1) is taken"), "\(said)")
        #expect(said.contains("PORT=7890 NATS_PORT=4333 make cluster"), "\(said)")
    }

    /// cluster.sh's nodes take PORT, PORT+1, PORT+2: fixed ports, so ones below the
    /// ephemeral range (32768 and up), where the other tests' port-0 daemons never
    /// land; each checked free by binding it. And one more for nats-server.
    static func fixedPorts() -> (nodes: Int, nats: Int)? {
        func free(_ port: Int) -> Bool {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
        }
        for _ in 0..<50 {
            let base = Int.random(in: 20_000...32_000)
            if (base...(base + 3)).allSatisfy(free) { return (base, base + 3) }
        }
        return nil
    }
}
