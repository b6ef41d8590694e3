import Foundation
import RoomClient
import RoomWire
import Testing

/// Reactions and tap votes (PROTOCOL.md section 20) over real sockets: the
/// coalesced `on-reactions` (one per peer per interval, to every peer, only
/// when something changed), the rules and codes of `react`, `unreact` and
/// `reactions-get`, what deleting and clearing drop, the bounds and REST.
/// A 100-ms interval keeps them fast.
@Suite struct ReactionTests {
    static let settings =
        #"{"reactions":{"interval_ms":100},"limits":{"messages_per_second":1000,"message_burst":1000}}"#

    static func stage() async throws -> Stage {
        try await Stage(daemon: try await Daemon.start(settings: settings))
    }

    /// One batch of `calls` JSON-RPC calls, answered in one piece: every
    /// call is handled before the next reactions tick. Pushes that arrive
    /// before the answer (of what was done before) are dropped.
    static func batch(_ client: RoomClient, _ calls: [String]) async throws -> [JSON] {
        let entries = calls.enumerated().map { #"{"jsonrpc":"2.0","id":\#($0.offset + 1),\#($0.element)}"# }
        client.send(text: "[" + entries.joined(separator: ",") + "]")
        while true {
            if let answer = try await client.nextMessage().arrayValue { return answer }
        }
    }

    static func tap(_ target: String, _ type: String, _ count: Int) -> String {
        #""method":"react","params":{"target":"\#(target)","type":"\#(type)","count":\#(count)}"#
    }

    static func say(_ client: RoomClient, _ text: String) async throws -> String {
        try await client.call("broadcast", ["info": ["message": .string(text)]])["message_id"]!.stringValue!
    }

    @Test func manyTapsMakeOnePushToEveryPeerAndNothingChangedMakesNone() async throws {
        let stage = try await Self.stage()
        let (elsewhere, _) = try await stage.daemon.join("x", as: "viewer", room: "room-2")
        // 50 calls of 50 taps in one batch: 2,500 taps, one push each.
        let answers = try await Self.batch(stage.viewer, Array(repeating: Self.tap("stream", "fire", 50), count: 50))
        #expect(answers.map { $0["result"]?["total"]?.intValue } == (1...50).map { $0 * 50 })
        #expect(answers.last?["result"] == ["target": "stream", "type": "fire", "total": 2500])
        for client in stage.all {
            let counts = try await client.next("on-reactions")["counts"]
            #expect(counts == [["target": "stream", "type": "fire", "total": 2500]], "the reactor's too")
        }
        for client in stage.all {
            #expect(await Stage.methods(client, within: .milliseconds(400)) == [], "one push, then nothing changed")
        }
        #expect(await Stage.methods(elsewhere) == [], "another room hears nothing")

        // Several pairs in one interval: one push holding each pair that changed.
        let id = try await Self.say(stage.host, "vote now")
        try await stage.settle()
        let calls = [
            #""method":"react","params":{"target":"\#(id)","type":"like"}"#,
            Self.tap("contestant:red", "clap", 3),
            #""method":"react","params":{"target":"\#(id)","type":"love"}"#,
            #""method":"unreact","params":{"target":"\#(id)","type":"love"}"#,
        ]
        let results = try await Self.batch(stage.host, calls).map { $0["result"]?["total"]?.intValue }
        #expect(results == [1, 3, 1, 0])
        for client in stage.all {
            let counts = try await client.next("on-reactions")["counts"]
            #expect(
                counts == [
                    ["target": .string(id), "type": "like", "total": 1],
                    ["target": "contestant:red", "type": "clap", "total": 3],
                ],
                "a total that changed and came back is not pushed"
            )
        }
        // A repeated reaction changes nothing: no push.
        #expect(try await stage.guest.call("react", ["target": .string(id), "type": "like"])["total"] == 2)
        _ = try await stage.host.call("react", ["target": .string(id), "type": "like"])
        for client in stage.all {
            #expect(try await client.next("on-reactions")["counts"]?.arrayValue?.count == 1)
            #expect(await Stage.methods(client, within: .milliseconds(300)) == [])
        }
    }

    @Test func reactingFollowsTheRulesAndBadInputNamesTheField() async throws {
        let stage = try await Self.stage()
        let id = try await Self.say(stage.guest, "hello")
        let (restricted, _) = try await stage.daemon.join("r", as: "viewer", restrictions: "view_and_polls_only")
        let like: JSON = ["target": .string(id), "type": "like"]
        #expect(try await restricted.call("react", like) == ["target": .string(id), "type": "like", "total": 1])
        #expect(try await restricted.call("react", like)["total"] == 1, "a repeat changes nothing")
        #expect(try await stage.host.call("react", like)["total"] == 2)
        let (second, _) = try await stage.daemon.join("r", as: "viewer")  // the same user, another peer
        #expect(try await second.call("react", like)["total"] == 2, "per user, not per peer")
        #expect(try await restricted.call("react", ["target": "stream", "type": "fire", "count": 50])["total"] == 50)
        #expect(try await second.call("react", ["target": "stream", "type": "fire"])["total"] == 51)
        #expect(try await second.call("unreact", like) == ["target": .string(id), "type": "like", "total": 1])
        #expect(try await restricted.call("unreact", like)["total"] == 1, "not there: no-op")
        #expect(try await restricted.call("unreact", ["target": .string(id), "type": "wow"])["total"] == 0)

        let cases: [(JSON, Int, String)] = [
            (["target": .string(id), "type": "like", "count": 2], -32602, "count"),
            (["target": .string(id), "type": "boo"], -32602, "type"),
            (["type": "like"], -32602, "target"),
            (["target": .string(id)], -32602, "type"),
            (["target": 5, "type": "like"], -32602, "target"),
            (["target": "nope", "type": "like"], 40405, "target"),
            (["target": "contestant:no way", "type": "clap"], -32602, "target"),
            (["target": "stream", "type": "clap", "count": 0], -32602, "count"),
            (["target": "stream", "type": "clap", "count": 51], -32602, "count"),
            (["target": "stream", "type": "clap", "count": -1], -32602, "count"),
            (["target": "stream", "type": "clap", "count": .number("9223372036854775807")], -32602, "count"),
            (["target": "stream", "type": "clap", "count": .number("9223372036854775808")], -32602, "count"),
            (["target": "stream", "type": "clap", "count": .number("1e400")], -32602, "count"),
            (["target": "stream", "type": "clap", "count": .number("1.5")], -32602, "count"),
            (["target": "stream", "type": "clap", "count": "5"], -32602, "count"),
        ]
        for (params, code, field) in cases {
            let failure = try await restricted.failure("react", params)
            #expect(failure.code == code && failure.message.hasPrefix(field + ":"), "\(params): \(failure)")
        }
        let tap = try await restricted.failure("unreact", ["target": "stream", "type": "fire"])
        #expect(tap.code == -32602 && tap.message.hasPrefix("target:"), "taps cannot be taken back: \(tap)")
        #expect(try await restricted.errorCode("unreact", ["target": "contestant:red", "type": "fire"]) == -32602)
        #expect(try await restricted.errorCode("unreact", ["target": "nope", "type": "like"]) == 40405)
        #expect(try await restricted.errorCode("unreact", ["target": .string(id), "type": "boo"]) == -32602)
        #expect(try await restricted.errorCode("unreact", ["target": .string(id)]) == -32602)
        #expect(!restricted.isClosed)
    }

    @Test func theTemplateNamesTheTypes() async throws {
        let daemon = try await Daemon.start(settings: #"{"reactions":{"types":["up","down"],"interval_ms":100}}"#)
        let (host, _) = try await daemon.join("h", as: "host")
        #expect(try await host.call("react", ["target": "contestant:a", "type": "up"])["total"] == 1)
        let failure = try await host.failure("react", ["target": "contestant:a", "type": "like"])
        #expect(failure.code == -32602 && failure.message.contains("up, down"), "\(failure)")
    }

    @Test func reactionsGetGivesTotalsAndTheCallersOwnCount() async throws {
        let stage = try await Self.stage()
        let id = try await Self.say(stage.host, "q")
        _ = try await stage.guest.react(id, type: "like")
        _ = try await stage.host.react(id, type: "like")
        _ = try await stage.guest.react("contestant:red", type: "clap", count: 5)
        _ = try await stage.host.react("contestant:red", type: "clap", count: 2)
        #expect(
            try await stage.viewer.react("stream", type: "fire")
                == ReactionCount(target: "stream", type: "fire", total: 1)
        )
        let answer = try await stage.guest.call(
            "reactions-get",
            ["targets": [.string(id), "contestant:red", "contestant:blue", "stream", .string(id)]]
        )
        #expect(
            answer == [
                "counts": [
                    ["target": .string(id), "type": "like", "total": 2, "mine": 1],
                    ["target": "contestant:red", "type": "clap", "total": 7, "mine": 5],
                    ["target": "stream", "type": "fire", "total": 1, "mine": 0],
                ]
            ]
        )
        #expect(
            try await stage.host.reactions(targets: ["contestant:red"])
                == [ReactionCount(target: "contestant:red", type: "clap", total: 7, mine: 2)]
        )
        #expect(try await stage.guest.unreact(id, type: "like").total == 1)
        // The coalesced push decodes as an event.
        let pushed = try await stage.moderator.next { event in
            if case .reactions(let counts) = event, counts.contains(where: { $0.target == id && $0.total == 1 }) {
                counts
            } else {
                nil
            }
        }
        #expect(pushed.allSatisfy { $0.mine == nil })

        let many = JSON.array(Array(repeating: "stream", count: 101))
        let cases: [(JSON, Int, String)] = [
            ([:], -32602, "targets"),
            (["targets": "stream"], -32602, "targets"),
            (["targets": many], -32602, "targets"),
            (["targets": [1]], -32602, "targets[0]"),
            (["targets": ["stream", "nope"]], 40405, "targets[1]"),
            (["targets": ["contestant:"]], -32602, "targets[0]"),
        ]
        for (params, code, field) in cases {
            let failure = try await stage.viewer.failure("reactions-get", params)
            #expect(failure.code == code && failure.message.hasPrefix(field + ":"), "\(params): \(failure)")
        }
        let hundred = JSON.array(Array(repeating: "stream", count: 100))
        #expect(try await stage.viewer.call("reactions-get", ["targets": hundred])["counts"]?.arrayValue?.count == 1)
    }

    @Test func deletingAndClearingDropCountsWithoutAPushAndRestListsTheRest() async throws {
        let stage = try await Self.stage()
        let token = try stage.daemon.managementToken()
        let path = "/v2/active-rooms/room-1/reactions"
        #expect(try await http("GET", stage.daemon, path, token: token).body == ["counts": []])
        let gone = try await Self.say(stage.guest, "soon gone")
        let stays = try await Self.say(stage.guest, "stays until the clear")
        try await stage.settle()
        let calls = [
            #""method":"react","params":{"target":"\#(gone)","type":"like"}"#,
            #""method":"react","params":{"target":"\#(stays)","type":"wow"}"#,
            Self.tap("stream", "clap", 4),
            Self.tap("contestant:b", "clap", 1),
            Self.tap("contestant:a", "clap", 2),
        ]
        _ = try await Self.batch(stage.guest, calls)
        for client in stage.all { _ = try await client.next("on-reactions") }
        let listed = try await http("GET", stage.daemon, path, token: token)
        #expect(listed.status == 200)
        #expect(
            listed.body == [
                "counts": [
                    ["target": "stream", "type": "clap", "total": 4],
                    ["target": "contestant:a", "type": "clap", "total": 2],
                    ["target": "contestant:b", "type": "clap", "total": 1],
                    ["target": .string(gone), "type": "like", "total": 1],
                    ["target": .string(stays), "type": "wow", "total": 1],
                ]
            ],
            "the stream, the contestants by id, the messages oldest first"
        )

        try await stage.host.deleteMessage(gone)
        for client in stage.all {
            #expect(await Stage.methods(client, within: .milliseconds(400)) == ["on-message-delete"], "no on-reactions")
        }
        #expect(try await stage.guest.errorCode("reactions-get", ["targets": [.string(gone)]]) == 40405)
        #expect(try await stage.guest.errorCode("react", ["target": .string(gone), "type": "like"]) == 40405)
        try await stage.moderator.clearChat()
        for client in stage.all {
            #expect(await Stage.methods(client, within: .milliseconds(400)) == ["on-chat-clear"], "no on-reactions")
        }
        #expect(
            try await http("GET", stage.daemon, path, token: token).body == [
                "counts": [
                    ["target": "stream", "type": "clap", "total": 4],
                    ["target": "contestant:a", "type": "clap", "total": 2],
                    ["target": "contestant:b", "type": "clap", "total": 1],
                ]
            ],
            "the taps stay"
        )

        let unknown = try await http("GET", stage.daemon, "/v2/active-rooms/nope/reactions", token: token)
        #expect(unknown.status == 404 && unknown.body["code"] == 40001, "\(unknown)")
        #expect(try await http("GET", stage.daemon, path).status == 401)
        #expect(try await http("POST", stage.daemon, path, token: token, body: "{}").status == 404)
    }

    @Test func aSessionTakesAtMost100Contestants() async throws {
        let stage = try await Self.stage()
        for half in 0..<2 {
            let calls = (0..<50).map { Self.tap("contestant:c\(half * 50 + $0)", "clap", 1) }
            let answers = try await Self.batch(stage.host, calls)
            #expect(answers.allSatisfy { $0["result"]?["total"] == 1 }, "\(answers.filter { $0["error"] != nil })")
        }
        let more = try await stage.guest.failure("react", ["target": "contestant:c100", "type": "clap"])
        #expect(more.code == 40907 && more.message.hasPrefix("target:"), "\(more)")
        #expect(try await stage.guest.call("react", ["target": "contestant:c99", "type": "clap"])["total"] == 2)
        #expect(try await stage.guest.call("react", ["target": "stream", "type": "clap"])["total"] == 1)
    }
}
