import Foundation
import RoomClient
import RoomWire
import RoomdTesting
import Testing

/// Issue 36's operator tools, tried as an operator would against a live
/// daemon: `roomd rooms create`, `roomd bans`, `roomd stream`, `roomd feed`,
/// and times printed as ISO 8601 in UTC (`--json` keeps the numbers).
extension OperatorCommandTests {
    /// `roomd ARGUMENTS` off the test pool.
    func cli(
        _ arguments: [String],
        _ environment: [String: String]
    ) async throws -> (
        status: Int32, out: String, err: String
    ) {
        try await runCommand(Daemon.binary, arguments, environment: environment)
    }

    /// `2026-11-29T10:31:08Z` as ms since 1970 (nil when not that form).
    static func millis(iso text: Substring) -> Int? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard text.count == 20, text.hasSuffix("Z"), let date = formatter.date(from: String(text)) else { return nil }
        return Int(date.timeIntervalSince1970 * 1000)
    }

    /// The ISO time following `label` in `line` (`… started 2026-…Z …`), in ms.
    static func time(after label: String, in line: String) -> Int? {
        guard let range = line.range(of: label + " ") else { return nil }
        return millis(iso: line[range.upperBound...].prefix(20))
    }

    @Test func roomsCreateOpensASessionWithMetadataAndDraftPolls() async throws {
        let daemon = try await Daemon.start()
        let env = environment(daemon)
        let polls = daemon.directory.appendingPathComponent("polls.json")
        try
            #"[{"title":"Who wins?","type":"poll","questions":[{"question":{"text":"Pick one","type":"single-choice"},"options":[{"text":"Ada"},{"text":"Cy"}]}]}]"#
            .write(to: polls, atomically: true, encoding: .utf8)
        let before = Int(Date().timeIntervalSince1970) * 1000
        let created = try await cli(
            [
                "rooms", "create", "friday", "--set", "topic=Pilots", "--set", #"lineup=["Ada","Cy"]"#,
                "--polls", polls.path,
            ],
            env
        )
        #expect(created.status == 0, "\(created)")
        #expect(created.out.hasPrefix("created friday  0 peers  session "), "\(created)")
        let started = try #require(Self.time(after: "started", in: created.out), "\(created.out)")
        #expect(started >= before && started < before + 60_000, "started is the creation, as ISO 8601 UTC")

        let (host, joined) = try await daemon.join("ada", as: "host", room: "friday")
        #expect(joined["room"]?["started_at"]?.intValue.map { $0 / 1000 * 1000 } == started, "the same session")
        #expect(try await host.call("get-metadata", ["key": "topic"])["value"] == "Pilots")
        #expect(
            try await host.call("get-metadata", ["key": "lineup"])["value"] == ["Ada", "Cy"],
            "JSON when it parses"
        )
        let drafts = try await host.call("poll-list", [:])["polls"]?.arrayValue ?? []
        #expect(drafts.count == 1 && drafts.first?["title"] == "Who wins?" && drafts.first?["state"] == "created")

        let again = try await cli(["rooms", "create", "friday"], env)
        #expect(again.status == 1 && again.err.hasPrefix("roomd: 409 40904 "), "\(again)")
        let bad = try await cli(["rooms", "create", "x", "--set", "novalue"], env)
        #expect(bad.status == 64 && bad.err.contains("--set: expected KEY=VALUE"), "\(bad)")
        let json = try JSON.parse(Array(try await cli(["rooms", "list", "--json"], env).out.utf8))
        #expect(json["rooms"]?[0]?["started_at"]?.intValue == joined["room"]?["started_at"]?.intValue, "--json: ms")
    }

    @Test func bansListAddAndRemove() async throws {
        let daemon = try await Daemon.start()
        let env = environment(daemon)
        _ = try await daemon.join("ada", as: "host", room: "show", name: "Ada")
        let (troll, _) = try await daemon.join("eve", as: "viewer", room: "show", name: "Eve")
        #expect(try await cli(["bans", "list", "show"], env).out == "no bans\n")

        let before = Int(Date().timeIntervalSince1970) * 1000
        let banned = try await cli(["bans", "add", "show", "eve", "--duration", "600", "--reason", "spam"], env)
        #expect(banned.status == 0 && banned.out == "banned eve for 600 s\n", "\(banned)")
        #expect(try await troll.closeCode() == 4001)
        let refused = try await daemon.client()
        let rejoin = try await refused.errorCode(
            "join",
            ["token": .string(try daemon.token(room: "show", user: "eve", role: "viewer"))]
        )
        #expect(rejoin == 40301)
        _ = try await cli(["bans", "add", "show", "mallory"], env)

        let list = try await cli(["bans", "show"], env)  // list is the default
        let lines = list.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && lines[0].hasPrefix("eve  until "), "\(list)")
        #expect(lines[0].hasSuffix("  by server  \"spam\""), "\(list)")
        let until = try #require(Self.time(after: "until", in: lines[0]), "\(lines)")
        #expect(until >= before + 599_000 && until <= before + 660_000, "until is now + 600 s, readable")
        #expect(lines[1] == "mallory  for the session  by server", "\(lines)")
        let json = try JSON.parse(Array(try await cli(["bans", "list", "show", "--json"], env).out.utf8))
        #expect(json["bans"]?[0]?["until"]?.intValue.map { $0 / 1000 * 1000 } == until, "--json keeps the ms")

        #expect(try await cli(["bans", "remove", "show", "eve"], env).out == "unbanned eve\n")
        _ = try await daemon.join("eve", as: "viewer", room: "show")
        #expect(try await cli(["bans", "show"], env).out == "mallory  for the session  by server\n")
        #expect(try await cli(["bans", "add", "show", "eve", "--duration", "0"], env).status == 64)
        let missing = try await cli(["bans", "list", "nope"], env)
        #expect(missing.status == 1 && missing.err.hasPrefix("roomd: 404 40001 "), "\(missing)")
    }

    @Test func streamShowsAndMovesTheStreamState() async throws {
        let daemon = try await Daemon.start()
        let env = environment(daemon)
        let (host, _) = try await daemon.join("ada", as: "host", room: "show", name: "Ada")
        #expect(try await cli(["stream", "show"], env).out == "no stream in this session\n")

        let scheduled = try await cli(
            ["stream", "set", "show", "scheduled", "--starts-at", "2030-01-01T20:00:00Z"],
            env
        )
        #expect(scheduled.status == 0 && scheduled.out == "scheduled  starts 2030-01-01T20:00:00Z\n", "\(scheduled)")
        #expect(try await host.next("on-hls-update")["starts_at"]?.intValue == 1_893_528_000_000)
        #expect(try await cli(["stream", "get", "show"], env).out == scheduled.out)

        _ = try await host.call("hls-start")
        let live = try await cli(["stream", "show"], env).out.split(separator: "\n").map(String.init)
        #expect(live.count == 2, "\(live)")
        #expect(live[0].hasPrefix("live  starts 2030-01-01T20:00:00Z  started "), "\(live)")
        #expect(live[0].hasSuffix(" by Ada (host)") && Self.time(after: "started", in: live[0]) != nil, "\(live)")
        #expect(live[1].hasPrefix("  variant /hls/show/"), "\(live)")
        let json = try JSON.parse(Array(try await cli(["stream", "show", "--json"], env).out.utf8))
        #expect(json["state"] == "live" && json["starts_at"]?.intValue == 1_893_528_000_000)

        let early = try await cli(["stream", "set", "show", "vod", "--vod-url", "https://cdn.example/show.m3u8"], env)
        #expect(early.status == 1 && early.err.hasPrefix("roomd: 409 40904 "), "a live stream must end first: \(early)")
        let ended = try await cli(["stream", "set", "show", "ended"], env)
        #expect(ended.out.hasPrefix("ended  starts 2030-01-01T20:00:00Z  started ") && ended.out.contains(" by server"))
        let vod = try await cli(["stream", "set", "show", "vod", "--vod-url", "https://cdn.example/show.m3u8"], env)
        #expect(
            vod.status == 0 && vod.out.hasPrefix("vod  ") && vod.out.hasSuffix("  vod https://cdn.example/show.m3u8\n")
        )
        #expect(try await cli(["stream", "set", "show", "vod"], env).status == 64, "vod needs --vod-url")
        let badTime = try await cli(["stream", "set", "show", "scheduled", "--starts-at", "friday"], env)
        #expect(badTime.status == 64 && badTime.err.contains("--starts-at: expected an ISO 8601 time"), "\(badTime)")
    }

    /// The feed on test mode's manual clock: the seconds are the test's.
    @Test func feedPrintsASpanReadably() async throws {
        // The clock starts 2 minutes back: the CLI mints its 60-s management
        // token on real time, and the test moves the daemon's 61 s on.
        let start = Int64(Date().timeIntervalSince1970) - 120
        let daemon = try await Daemon.start(arguments: [
            "--test-mode", "--clock", "manual", "--clock-start", "\(start * 1000)",
        ])
        let env = environment(daemon)
        let (host, _) = try await daemon.join("ada", as: "host", name: "Ada")
        let sent = try await host.call("broadcast", ["info": ["message": "hello", "type": "chat"]])
        _ = try await host.call("hls-start")
        try await TestModeTests.advanceAll(daemon, by: 61_000)

        let span = try await cli(["feed", "room-1", "--from", "\(start)", "--to", "\(start + 3)"], env)
        #expect(span.status == 0, "\(span)")
        let lines = span.out.split(separator: "\n").map(String.init)
        let from = OperatorCommandTests.iso(start)
        #expect(
            lines.first == "room-1  \(from) to \(OperatorCommandTests.iso(start + 3))  1 peer  stream live",
            "\(lines)"
        )
        let time = try #require(sent["timestamp"]?.intValue)
        #expect(
            lines.count == 2 && lines[1] == "  \(OperatorCommandTests.iso(Int64(time / 1000)))  Ada (host): hello",
            "\(lines)"
        )
        let byISO = try await cli(["feed", "room-1", "--from", from, "--to", "\(start + 3)"], env)
        #expect(byISO.out == span.out, "--from takes ISO 8601 too")

        // 61 s: asked in two pieces (the route answers at most 60), printed in order.
        let long = try await cli(["feed", "room-1", "--from", "\(start)", "--to", "\(start + 61)", "--json"], env)
        let pieces = long.out.split(separator: "\n").map { try? JSON.parse(Array($0.utf8)) }
        #expect(pieces.count == 2, "\(long)")
        #expect(pieces.first??["to"]?.intValue == Int(start) + 60 && pieces.last??["from"]?.intValue == Int(start) + 60)
        #expect(pieces.first??["chat"]?[0]?["timestamp"]?.intValue == time, "--json keeps the ms")

        let ahead = try await cli(["feed", "room-1", "--from", "\(start + 100)", "--to", "\(start + 110)"], env)
        #expect(ahead.status == 1 && ahead.err.hasPrefix("roomd: 400 -32602 to: "), "\(ahead)")
        let backwards = try await cli(["feed", "room-1", "--from", "\(start + 3)", "--to", "\(start)"], env)
        #expect(backwards.status == 64 && backwards.err.contains("--from: must be before --to"), "\(backwards)")
    }

    /// Seconds since 1970 as the CLI prints them.
    static func iso(_ seconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: Date(timeIntervalSince1970: Double(seconds)))
    }

    @Test func roomsSendAndStageShowTimesReadably() async throws {
        let daemon = try await Daemon.start()
        let env = environment(daemon)
        let (_, joined) = try await daemon.join("ada", as: "host", room: "show", name: "Ada")
        let startedAt = try #require(joined["room"]?["started_at"]?.intValue)
        let list = try await cli(["rooms", "list"], env).out
        #expect(list.hasSuffix("  started \(Self.iso(Int64(startedAt / 1000)))\n"), "\(list)")
        let sent = try await cli(["send", "show", "doors close in 5"], env).out
        #expect(Self.time(after: " at", in: sent) != nil, "\(sent)")
        _ = try await cli(["stage", "block", "show", "eve", "--duration", "600"], env)
        let blocked = try await cli(["stage", "list", "show"], env).out
        #expect(blocked.contains("  eve until ") && Self.time(after: "eve until", in: blocked) != nil, "\(blocked)")
    }
}
