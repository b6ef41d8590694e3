import Foundation
import RoomClient
import RoomWire
import RoomdTesting
import Testing

/// `roomd rooms|peers|send` as an operator runs them against a live daemon
/// (issue 25, item 5): the daemon from `$ROOMD_URL`, the secret from
/// `$ROOMD_SECRET_FILE`, lines for people and `--json` for scripts.
@Suite struct OperatorCommandTests {
    /// The environment an operator would export: where the daemon is and its secret file.
    func environment(_ daemon: Daemon) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "ROOMD_SECRET")
        environment["ROOMD_URL"] = "http://127.0.0.1:\(daemon.port)"
        environment["ROOMD_SECRET_FILE"] = daemon.directory.appendingPathComponent("secret").path
        return environment
    }

    func roomd(
        _ arguments: [String],
        _ environment: [String: String]
    ) throws -> (status: Int32, out: String, err: String) {
        try runCommand(Daemon.binary, arguments, environment: environment)
    }

    @Test func roomsListGetEndAndUnlock() async throws {
        let daemon = try await Daemon.start()
        let env = environment(daemon)
        #expect(try roomd(["rooms", "list"], env).out == "no live rooms\n")
        let (host, joined) = try await daemon.join("ada", as: "host", room: "show", name: "Ada")
        let session = try #require(joined["room"]?["session_id"]?.stringValue)
        let peerID = try #require(joined["peer"]?["peer_id"]?.stringValue)

        let list = try roomd(["rooms", "list"], env)
        #expect(list.status == 0 && list.out.hasPrefix("show  1 peer  session \(session)  started "), "\(list)")
        let json = try JSON.parse(Array(try roomd(["rooms", "list", "--json"], env).out.utf8))
        #expect(json["rooms"]?[0]?["room_id"] == "show" && json["last"] == .null)
        let get = try roomd(["rooms", "get", "show"], env).out.split(separator: "\n")
        #expect(get.count == 2 && get[1] == "  \(peerID)  host  Ada  (user ada)")
        let missing = try roomd(["rooms", "get", "nope"], env)
        #expect(missing.status == 1 && missing.err == "roomd: 404 40001 room \"nope\" is not active\n", "\(missing)")
        let badID = try roomd(["rooms", "get", "no/such"], env)
        #expect(badID.status == 64 && badID.err.contains("is not a room id"))

        let end = try roomd(["rooms", "end", "show", "--reason", "show over", "--lock"], env)
        #expect(end.status == 0 && end.out == "ended show (locked)\n")
        #expect(try await host.closeCode() == 4002)
        let refused = try await daemon.client()
        let again = try await refused.errorCode(
            "join",
            ["token": .string(try daemon.token(room: "show", user: "b", role: "host"))]
        )
        #expect(again == 40003, "the id is locked")
        #expect(try roomd(["rooms", "unlock", "show", "--json"], env).out == "{}\n")
        let (_, rejoined) = try await daemon.join("ada", as: "host", room: "show")
        #expect(rejoined["room"]?["room_id"] == "show")
    }

    @Test func peersListGetUpdateRemoveAndSend() async throws {
        let daemon = try await Daemon.start()
        let env = environment(daemon)
        let (host, _) = try await daemon.join("ada", as: "host", room: "show", name: "Ada")
        let (viewer, joined) = try await daemon.join("bob", as: "viewer", room: "show", name: "Bob")
        let bob = try #require(joined["peer"]?["peer_id"]?.stringValue)
        _ = try await host.next("on-peer-join")

        let list = try roomd(["peers", "list", "show"], env).out.split(separator: "\n")
        #expect(list.count == 2 && list[1] == "\(bob)  viewer  Bob  (user bob)", "\(list)")
        let got = try JSON.parse(Array(try roomd(["peers", "get", "show", bob, "--json"], env).out.utf8))
        #expect(got["peer_id"]?.stringValue == bob && got["info"]?["name"] == "Bob")

        let updated = try roomd(["peers", "update", "show", bob, "--role", "guest", "--name", "Robert"], env)
        #expect(updated.status == 0 && updated.out == "\(bob)  guest  Robert  (user bob)\n", "\(updated)")
        #expect(try await viewer.next("on-policy-change")["name"] == "guest")
        #expect(try roomd(["peers", "update", "show", bob], env).status == 64, "nothing to update is a usage error")

        let sent = try roomd(["send", "show", "doors close in 5", "--role", "guest"], env)
        #expect(sent.status == 0 && sent.out.hasPrefix("sent "))
        let message = try await viewer.next("on-broadcast")
        #expect(message["info"]?["message"] == "doors close in 5" && message["sender"]?["peer_id"] == .null)

        #expect(try roomd(["peers", "remove", "show"], env).status == 64, "--peer or --role is required")
        let removed = try roomd(["peers", "remove", "show", "--peer", bob, "--reason", "spam"], env)
        #expect(removed.status == 0 && removed.out == "removed peer \(bob)\n")
        #expect(try await viewer.next("on-peer-leave-request")["reason"] == "spam")
        #expect(try await viewer.closeCode() == 4001)
        let gone = try roomd(["peers", "get", "show", bob], env)
        #expect(gone.status == 1 && gone.err.hasPrefix("roomd: 404 40400 "), "\(gone)")
    }

    /// `roomd stage`: a producer runs the call-in queue from a shell
    /// (issue 36's operator CLI): the queue with notes and positions,
    /// invite (the caller gets the token), decline, block (40303), unblock.
    @Test func stageListInviteDeclineBlockAndUnblock() async throws {
        let daemon = try await Daemon.start()
        let env = environment(daemon)
        _ = try await daemon.join("ada", as: "host", room: "show", name: "Ada")
        let (bob, _) = try await daemon.join("bob", as: "viewer", room: "show", name: "Bob")
        let (eve, _) = try await daemon.join("eve", as: "viewer", room: "show", name: "Eve")
        let asked = try #require(try await bob.call("stage-request", ["note": "about the tour"])["request"])
        let bobRequest = try #require(asked["request_id"]?.stringValue)
        let eveRequest = try #require(try await eve.call("stage-request", [:])["request"]?["request_id"]?.stringValue)

        let list = try roomd(["stage", "list", "show"], env)
        #expect(list.status == 0, "\(list)")
        #expect(
            list.out == "2 waiting\n  \(bobRequest)  waiting  #1  Bob (user bob)  \"about the tour\"\n"
                + "  \(eveRequest)  waiting  #2  Eve (user eve)\n",
            "\(list)"
        )
        #expect(try roomd(["stage", "show"], env).out == list.out, "list is the default: roomd stage ROOM")
        let invited = try roomd(["stage", "invite", "show", bobRequest], env)
        #expect(invited.status == 0 && invited.out.hasPrefix("invited:   \(bobRequest)  invited  "), "\(invited)")
        #expect(try await bob.next("on-role-change-request")["role"] == "guest")

        let declined = try roomd(["stage", "decline", "show", eveRequest, "--reason", "full"], env)
        #expect(declined.status == 0 && declined.out == "declined \(eveRequest)\n", "\(declined)")
        _ = try await eve.next("on-stage-status", where: { $0["request"]?["status"] == "declined" })

        #expect(
            try roomd(["stage", "block", "show", "eve", "--duration", "600"], env).out == "blocked eve for 600 s\n"
        )
        #expect(try await eve.errorCode("stage-request", [:]) == 40303)
        let blocked = try roomd(["stage", "list", "show", "--status", "declined"], env).out
        #expect(blocked.contains("blocked (1):\n  eve until "), "\(blocked)")
        #expect(try roomd(["stage", "unblock", "show", "eve"], env).out == "unblocked eve\n")
        _ = try await eve.call("stage-request", [:])

        let json = try JSON.parse(Array(try roomd(["stage", "list", "show", "--json"], env).out.utf8))
        #expect(json["total"] == 1 && json["blocked_total"] == 0)
        let unknown = try roomd(["stage", "decline", "show", "nope"], env)
        #expect(unknown.status == 1 && unknown.err.hasPrefix("roomd: 404 40407 "), "\(unknown)")
        #expect(try roomd(["stage", "invite", "show", "no/such"], env).status == 64)
    }

    @Test func aWrongSecretOrUrlSaysWhichOneWasUsed() async throws {
        let daemon = try await Daemon.start()
        var env = environment(daemon)
        let wrong = daemon.directory.appendingPathComponent("wrong").path
        try String(repeating: "x", count: 40).write(toFile: wrong, atomically: true, encoding: .utf8)
        env["ROOMD_SECRET_FILE"] = wrong
        let refused = try roomd(["rooms", "list"], env)
        #expect(refused.status == 1)
        #expect(refused.err.contains("401 40100 ") && refused.err.contains("signed with $ROOMD_SECRET_FILE \(wrong)"))
        let flag = try roomd(
            ["rooms", "list", "--secret-file", daemon.directory.appendingPathComponent("secret").path],
            env
        )
        #expect(flag.status == 0, "--secret-file wins over the environment")
        let viaWebSocketURL = try roomd(
            [
                "rooms", "list", "--url", "ws://127.0.0.1:\(daemon.port)/ws", "--secret-file",
                daemon.directory.appendingPathComponent("secret").path,
            ],
            env
        )
        #expect(viaWebSocketURL.status == 0 && viaWebSocketURL.out == "no live rooms\n")
        let badURL = try roomd(["rooms", "list", "--url", "ftp://x"], env)
        #expect(badURL.status == 64 && badURL.err.contains("expected http://HOST:PORT"))
    }
}
