import Foundation
import RoomClient
import RoomWire
import Testing

/// Bounds at every input and moderation rules that hold (issue 34, items 5, 6
/// and 8), over real sockets: `user_id` at most 256 bytes wherever a call or a
/// REST body names a user; the word filter after NFKC, case folding, removed
/// format characters, a homoglyph fold and folded separators, on messages,
/// questions and names; a chat ban that also stops renames, metadata and group
/// joins; a moderator that cannot act on a moderating peer who ranks above it;
/// and `roomd replay` refusing a journal it cannot check.
@Suite struct InputRulesTests {
    // MARK: user_id bounds (item 5)

    @Test func aUserIDOverTheClaimsBoundIsRefusedWhereverAUserIsNamed() async throws {
        let stage = try await Stage()
        let long = JSON.string(String(repeating: "u", count: 257))
        let multiByte = JSON.string(String(repeating: "é", count: 129))  // 258 bytes, 129 characters
        for method in ["peer-ban", "peer-unban", "chat-ban", "chat-unban"] {
            for id in [long, multiByte] {
                let refused = try await stage.host.failure(method, ["user_id": id])
                #expect(refused.code == 41300, "\(method)")
                #expect(refused.message.hasPrefix("user_id: ") && refused.message.contains("over the limit of 256"))
            }
        }
        let fits = JSON.string(String(repeating: "u", count: 256))
        #expect(try await stage.host.call("peer-ban", ["user_id": fits]) == [:], "256 bytes is a user id")
        #expect(try await stage.host.call("chat-ban", ["user_id": fits]) == [:])
        let admin = try stage.daemon.managementToken()
        let body = #"{"user_id":"\#(String(repeating: "r", count: 60_000))"}"#
        for path in ["ban", "unban"] {
            let rest = try await http("POST", stage.daemon, "/v2/active-rooms/room-1/\(path)", token: admin, body: body)
            #expect(rest.status == 413 && rest.body["code"] == 41300, "\(path): \(rest.body)")
            #expect(rest.body["message"]?.stringValue?.hasPrefix("user_id: 60000 bytes") == true)
        }
        let bans = try await http("GET", stage.daemon, "/v2/active-rooms/room-1/bans", token: admin)
        #expect(bans.body["bans"]?.arrayValue?.map { $0["user_id"] } == [fits], "only the one that fits")
    }

    // MARK: the word filter's tricks (item 6a)

    static let filtered = #"{"chat":{"blocked_words":["darn","ass","фигня"]}}"#

    @Test func theWordFilterSeesThroughFullwidthZeroWidthHomoglyphsAndSeparators() async throws {
        let stage = try await Stage(daemon: try await Daemon.start(settings: Self.filtered))
        let tricks: [(String, String)] = [
            ("fullwidth", "ｄａｒｎ"),
            ("fullwidth capitals", "well, ＤＡＲＮ it"),
            ("mathematical letters", "𝐝𝐚𝐫𝐧"),
            ("zero-width space", "da\u{200B}rn"),
            ("zero-width joiner", "d\u{200D}arn"),
            ("soft hyphen", "da\u{00AD}rn"),
            ("word joiner and BOM", "d\u{2060}ar\u{FEFF}n"),
            ("Cyrillic a", "d\u{0430}rn"),
            ("Cyrillic capitals", "D\u{0410}RN"),
            ("Greek alpha", "d\u{03B1}rn"),
            ("Greek capital alpha", "\u{0391}ss"),
            ("dots", "d.a.r.n"),
            ("spaces", "d a r n"),
            ("underscores", "d_a_r_n"),
            ("hyphens", "d-a-r-n"),
            ("mixed separators", "so d . a _ r - n !"),
            ("emoji between", "d🙂a🙂r🙂n"),
            ("punctuation inside", "da.rn"),
            ("ideographic spaces", "d\u{3000}a\u{3000}r\u{3000}n"),
        ]
        for (trick, text) in tricks {
            let refused = try await stage.guest.failure("broadcast", ["info": ["message": .string(text)]])
            #expect(refused.code == 40302, "\(trick): \(text)")
            #expect(refused.message.contains("blocked_words"), "\(trick)")
        }
        #expect(try await stage.guest.errorCode("question-add", ["text": "Ф И Г Н Я"]) == 40302, "Cyrillic spelled out")
        #expect(try await stage.guest.errorCode("question-add", ["text": "ｄａｒｎ?"]) == 40302, "questions too")
        // The matching rule is still whole words: folding never makes a longer word match.
        let clean = [
            "class", "c l a s s", "classy glass, bass and brass", "a s s e t s", "darning socks, undarn",
            "pass-word", "m.a.s.s", "I was a sad b a n d", "ＣＬＡＳＳ", "d a r n s", "a.s.s.e.t", "нет",
        ]
        for text in clean {
            #expect(
                try await stage.guest.errorCode("broadcast", ["info": ["message": .string(text)]]) == nil,
                "\(text)"
            )
        }
    }

    @Test func theWordFilterAppliesToTheJoinNameParamAndToPeerUpdate() async throws {
        let daemon = try await Daemon.start(settings: Self.filtered)
        let stage = try await Stage(daemon: daemon)
        let client = try await daemon.client()
        let token = JSON.string(try daemon.token(user: "n", role: "guest"))
        for name in ["ｄａｒｎ", "d.a.r.n", "Mr D\u{0410}RN", "da\u{200B}rn"] {
            let refused = try await Self.failure(client, "join", ["token": token, "name": .string(name)])
            #expect(refused.code == 40302, "\(name)")
            #expect(refused.message.hasPrefix("name: ") && refused.message.contains("blocked_words"), "\(name)")
            let update = try await stage.guest.failure("peer-update", ["name": .string(name)])
            #expect(update.code == 40302 && update.message.hasPrefix("name: "), "\(name)")
        }
        #expect(
            try await client.call("join", ["token": token, "name": "Classy"])["peer"]?["info"]?["name"] == "Classy"
        )
        #expect(try await stage.guest.call("peer-update", ["name": "Glass"])["peer"]?["info"]?["name"] == "Glass")
        // The token's name claim is the app's word (as is a REST rename).
        let (named, joined) = try await daemon.join("c", as: "viewer", name: "darn")
        defer { _ = named }
        #expect(joined["peer"]?["info"]?["name"] == "darn")
    }

    // MARK: a chat ban stops renames, metadata and group joins (item 6b)

    @Test func aChatBanAlsoStopsRenamesMetadataAndGroupJoins() async throws {
        let stage = try await Stage()
        _ = try await stage.guest.call("group-join", ["name": "fans"])
        #expect(try await stage.moderator.call("chat-ban", ["user_id": "g"]) == [:])
        _ = try await stage.guest.next("on-chat-state")
        for (method, params) in [
            ("peer-update", ["name": "Troll"] as JSON),
            ("peer-update", ["data": #"{"bio":"spam"}"#]),
            ("group-join", ["name": "vip"]),
            ("group-join", ["name": "_handraise"]),
        ] {
            let refused = try await stage.guest.failure(method, params)
            #expect(refused.code == 40302, "\(method) \(params)")
            #expect(refused.message.contains("chat-banned"), "\(method)")
        }
        #expect(try await stage.guest.call("group-leave", ["name": "fans"])["groups"] == [], "leaving is fine")
        #expect(try await stage.host.call("group-add", ["peer_id": stage.id("guest"), "name": "vip"]) != [:])
        _ = try await stage.moderator.call("chat-unban", ["user_id": "g"])
        #expect(try await stage.guest.call("peer-update", ["name": "Gus"])["peer"]?["info"]?["name"] == "Gus")
        #expect(try await stage.guest.call("group-join", ["name": "fans"])["groups"] == ["vip", "fans"])
    }

    // MARK: rank (item 6c)

    @Test func aModeratorCannotBanRemoveOrChatBanAModeratingPeerWhoRanksAboveIt() async throws {
        let stage = try await Stage()
        let (otherModerator, otherJoin) = try await stage.daemon.join("m2", as: "moderator")
        defer { _ = otherModerator }
        for (method, params) in [
            ("peer-ban", ["peer_id": stage.id("host")] as JSON),
            ("peer-ban", ["user_id": "h"]),
            ("peer-leave-request", ["requested_for": stage.id("host")]),
            ("chat-ban", ["peer_id": stage.id("host")]),
            ("chat-ban", ["user_id": "h"]),
        ] {
            let refused = try await stage.moderator.failure(method, params)
            #expect(refused.code == 40300, "\(method) \(params)")
            #expect(refused.message.contains("ranks above"), "\(refused.message)")
        }
        #expect(!stage.host.isClosed)
        #expect(try await stage.host.call("broadcast", ["info": ["message": "still here"]])["message_id"] != nil)
        let admin = try stage.daemon.managementToken()
        let bans = try await http("GET", stage.daemon, "/v2/active-rooms/room-1/bans", token: admin)
        #expect(bans.body["bans"] == [], "nothing was banned")
        // A user with no peer in the room, a guest (no moderating role), a peer of the same rank: allowed.
        #expect(try await stage.moderator.call("peer-ban", ["user_id": "absent"]) == [:])
        #expect(try await stage.moderator.call("chat-ban", ["peer_id": stage.id("guest")]) == [:])
        let peerOfSameRank = try #require(otherJoin["peer"]?["peer_id"])
        #expect(try await stage.moderator.call("chat-ban", ["peer_id": peerOfSameRank]) == [:])
        #expect(try await stage.moderator.call("peer-leave-request", ["requested_for": peerOfSameRank]) == [:])
        // Down the ranks: the host removes the moderator.
        #expect(try await stage.host.call("peer-ban", ["peer_id": stage.id("moderator")]) == [:])
        #expect(try await stage.moderator.closeCode() == 4001)
    }

    @Test func theOperatorIsNotRanked() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        let ban = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/ban",
            token: admin,
            body: #"{"user_id":"h"}"#
        )
        #expect(ban.status == 200, "\(ban.body)")
        #expect(try await stage.host.closeCode() == 4001)
    }

    // MARK: replay (item 8)

    /// A journal `roomd replay` cannot check (a push to a peer that never
    /// joined, a call of one, a line that is not an object, a line of no
    /// known kind, a truncated journal) is exit 2 naming the line; the
    /// journal as written still replays (exit 0).
    @Test func replayRefusesAJournalItCannotCheckAndNamesTheLine() async throws {
        let original = try await TestModeTests.manual(seed: 21)
        let (host, _) = try await original.join("h", as: "host", room: "show")
        let (guest, _) = try await original.join("g", as: "guest", room: "show")
        _ = try await host.call("broadcast", ["info": ["message": "hi"]])
        _ = try await guest.call("ping")
        let journal = try await httpText(
            "GET",
            original,
            "/v2/test/journal?room_id=show",
            token: original.managementToken()
        ).text
        let lines = journal.split(separator: "\n").map(String.init)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomd-replay-\(UUID())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let secret = dir.appendingPathComponent("secret")
        try Data(Daemon.defaultSecret).write(to: secret)
        func replay(_ name: String, _ lines: [String]) async throws -> (status: Int32, out: String, err: String) {
            let file = dir.appendingPathComponent(name)
            try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
            let daemon = try await TestModeTests.manual(seed: 21)
            let (binary, url, secretPath) = (Daemon.binary, daemon.url, secret.path)
            return try await onThread {
                try runCommand(
                    binary,
                    ["replay", file.path, "--against", url, "--secret-file", secretPath],
                    timeout: 30
                )
            }
        }
        let same = try await replay("same.jsonl", lines)
        #expect(same.status == 0 && same.out.contains("every push matched"), "\(same)")
        let t = #""t":1767225600000"#
        let bad: [(String, String, String)] = [
            ("ghost", #"{\#(t),"kind":"push","to":["ghost"],"method":"on-broadcast","params":{}}"#, "never joined"),
            ("call", #"{\#(t),"kind":"call","peer_id":"ghost","id":9,"method":"ping","params":{}}"#, "never joined"),
            ("array", #"[1,2,3]"#, "not a JSON object"),
            ("number", #"42"#, "not a JSON object"),
            ("kind", #"{\#(t),"kind":"gossip"}"#, "kind"),
            ("truncated", #"{"kind":"truncated","lines_dropped":7}"#, "truncated"),
        ]
        for (name, line, why) in bad {
            let at = lines.count / 2
            var edited = lines
            edited.insert(line, at: at)
            let result = try await replay("\(name).jsonl", edited)
            #expect(result.status == 2, "\(name): \(result)")
            #expect(result.err.contains("\(name).jsonl:\(at + 1): "), "\(name): \(result.err)")
            #expect(result.err.contains(why), "\(name): \(result.err)")
        }
    }

    static func failure(
        _ client: RoomClient,
        _ method: String,
        _ params: JSON
    ) async throws -> (
        code: Int, message: String
    ) {
        do {
            let result = try await client.call(method, params)
            throw DaemonError(description: "\(method) succeeded unexpectedly: \(result)")
        } catch RoomClientError.rpc(let code, let message, _) {
            return (code, message)
        }
    }
}
