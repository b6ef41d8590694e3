import Foundation
import RoomClient
import RoomWire
import Testing

/// The JSON-RPC 2.0 envelope of PROTOCOL.md section 2.
@Suite struct RPCTests {
    @Test func malformedJSONIsAParseErrorWithNullID() async throws {
        let daemon = try await Daemon.start()
        let client = try await daemon.client()
        client.send(text: #"{"jsonrpc":"2.0","id":1,"method":"ping""#)
        let reply = try await client.nextMessage()
        #expect(reply["id"] == .null)
        #expect(reply["error"]?["code"] == -32700)
    }

    @Test func envelopeMethodAndParamsErrorsInTheDocumentedOrder() async throws {
        let daemon = try await Daemon.start()
        let client = try await daemon.client()
        func reply(_ text: String) async throws -> JSON {
            client.send(text: text)
            return try await client.nextMessage()
        }
        // -32600: wrong version, id of the wrong type, method not a string.
        #expect(try await reply(#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#)["error"]?["code"] == -32600)
        let boolID = try await reply(#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#)
        #expect(boolID["error"]?["code"] == -32600)
        #expect(boolID["id"] == .null)
        #expect(try await reply(#"{"jsonrpc":"2.0","id":2,"method":5}"#)["error"]?["code"] == -32600)
        #expect(try await reply("42")["error"]?["code"] == -32600)
        // -32601 before 40005, 40005 before -32602.
        #expect(try await reply(#"{"jsonrpc":"2.0","id":3,"method":"no-such-method"}"#)["error"]?["code"] == -32601)
        #expect(
            try await reply(#"{"jsonrpc":"2.0","id":4,"method":"broadcast","params":7}"#)["error"]?["code"] == 40005
        )
        // params present but not an object.
        let badParams = try await reply(#"{"jsonrpc":"2.0","id":5,"method":"ping","params":[1]}"#)
        #expect(badParams["error"]?["code"] == -32602)
        #expect(badParams["error"]?["message"]?.stringValue?.contains("params") == true)
        // params: null is present and not an object.
        #expect(try await reply(#"{"jsonrpc":"2.0","id":7,"method":"ping","params":null}"#)["error"]?["code"] == -32602)
        // A missing required param names the field.
        let missing = try await reply(#"{"jsonrpc":"2.0","id":6,"method":"join","params":{}}"#)
        #expect(missing["error"]?["code"] == -32602)
        #expect(missing["error"]?["message"]?.stringValue?.contains("token") == true)
    }

    @Test func idsAreEchoedByteForByte() async throws {
        let daemon = try await Daemon.start()
        let client = try await daemon.client()
        for id in [#""abc""#, "7", "12345678901234567890", "1.50", "-0", "1e3", #""""#] {
            client.send(text: #"{"jsonrpc":"2.0","id":\#(id),"method":"ping","params":{"timestamp":99}}"#)
            let reply = try await client.nextMessage()
            #expect(reply["id"]?.text == id)
            #expect(reply["result"]?["timestamp"] == 99)
            #expect(reply["result"]?["server_time"]?.intValue != nil)
        }
        let noTimestamp = try await client.call("ping")
        #expect(noTimestamp["timestamp"] == .null)
    }

    @Test func batchesAnswerInOrderAndSkipNotifications() async throws {
        let daemon = try await Daemon.start()
        let client = try await daemon.client()
        client.send(
            text: """
                [{"jsonrpc":"2.0","id":"a","method":"ping"},
                 {"jsonrpc":"2.0","method":"ping"},
                 {"nonsense":true},
                 {"jsonrpc":"2.0","id":9,"method":"missing"},
                 {"jsonrpc":"2.0","id":"b","method":"ping","params":{"timestamp":"t"}}]
                """
        )
        let reply = try await client.nextMessage()
        let entries = try #require(reply.arrayValue)
        #expect(entries.count == 4, "the notification contributes no entry")
        #expect(entries[0]["id"] == "a")
        #expect(entries[1]["id"] == .null)
        #expect(entries[1]["error"]?["code"] == -32600)
        #expect(entries[2]["id"] == 9)
        #expect(entries[2]["error"]?["code"] == -32601)
        #expect(entries[3]["id"] == "b")
        #expect(entries[3]["result"]?["timestamp"] == "t")

        // Only notifications: nothing is sent back.
        client.send(text: #"[{"jsonrpc":"2.0","method":"ping"}]"#)
        #expect(await client.expectSilence(for: .milliseconds(300)).isEmpty)
    }

    @Test func emptyAndOversizedBatchesAreOneErrorAndNothingRuns() async throws {
        let daemon = try await Daemon.start()
        let (client, _) = try await daemon.join("a", as: "host")
        let (other, _) = try await daemon.join("b", as: "viewer")
        _ = try await client.next("on-peer-join")
        client.send(text: "[]")
        let empty = try await client.nextMessage()
        #expect(empty["error"]?["code"] == -32600)
        #expect(empty["id"] == .null)

        let call = #"{"jsonrpc":"2.0","id":1,"method":"broadcast","params":{"info":{"message":"x"}}}"#
        client.send(text: "[" + Array(repeating: call, count: 65).joined(separator: ",") + "]")
        let big = try await client.nextMessage()
        #expect(big.arrayValue == nil, "a single error object, not an array")
        #expect(big["error"]?["code"] == -32600)
        #expect(await other.expectSilence(for: .milliseconds(300)).isEmpty, "nothing of the batch ran")

        client.send(text: "[" + Array(repeating: call, count: 64).joined(separator: ",") + "]")
        #expect(try await client.nextMessage().arrayValue?.count == 64)
    }

    @Test func aFailedNotificationIsPushedAsOnError() async throws {
        let daemon = try await Daemon.start()
        let client = try await daemon.client()
        try client.notify("broadcast", ["info": ["message": "x"]])
        let pushed = try await client.next("on-error")
        #expect(pushed["code"] == 40005)
        #expect(pushed["method"] == "broadcast")
        #expect(pushed["message"]?.stringValue?.isEmpty == false)
        try client.notify("ping")
        #expect(await client.expectSilence(for: .milliseconds(200)).isEmpty, "a successful notification gets nothing")
    }

    @Test func aResponseComesBeforeThePushesItsCallCaused() async throws {
        let daemon = try await Daemon.start()
        let (client, _) = try await daemon.join("a", as: "host")
        // peer-update pushes on-peer-update to the caller too: the response must come first.
        client.send(text: #"{"jsonrpc":"2.0","id":"u","method":"peer-update","params":{"name":"Zed"}}"#)
        let first = try await client.nextMessage()
        #expect(first["id"] == "u")
        let second = try await client.nextMessage()
        #expect(second["method"] == "on-peer-update")
        // Same inside a batch: the whole answer array first.
        client.send(
            text:
                #"[{"jsonrpc":"2.0","id":1,"method":"peer-update","params":{"name":"Ann"}},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#
        )
        #expect(try await client.nextMessage().arrayValue?.count == 2)
        #expect(try await client.nextMessage()["method"] == "on-peer-update")
    }

    @Test func rateLimitIs42900AndTenProtocolErrorsInARowClose4029() async throws {
        let daemon = try await Daemon.start(settings: #"{"limits":{"messages_per_second":1,"message_burst":3}}"#)
        let client = try await daemon.client()
        // ping is exempt from the rate limit.
        for _ in 0..<10 { _ = try await client.call("ping") }
        let batch =
            "[" + Array(repeating: #"{"jsonrpc":"2.0","id":1,"method":"nope"}"#, count: 5).joined(separator: ",") + "]"
        client.send(text: batch)
        let codes = try await client.nextMessage().arrayValue?.map { $0["error"]?["code"]?.intValue }
        #expect(codes == [-32601, -32601, -32601, 42900, 42900])

        // -32601 neither counts nor resets; a success resets the streak.
        let flood = try await daemon.client()
        for _ in 0..<9 { flood.send(text: "{") }
        _ = try await flood.call("ping")
        #expect(flood.drain().count == 9)
        for _ in 0..<9 { flood.send(text: "{") }
        #expect(await flood.expectSilence(for: .milliseconds(300)).count == 9)
        #expect(!flood.isClosed)
        flood.send(text: "{")
        #expect(try await flood.closeCode() == 4029)

        // Ten invalid calls in one batch close it even if a valid call follows them.
        let batcher = try await daemon.client()
        batcher.send(
            text: "[" + Array(repeating: "1", count: 10).joined(separator: ",")
                + #",{"jsonrpc":"2.0","id":1,"method":"ping"}]"#
        )
        let answer = try await batcher.nextMessage()
        #expect(answer.arrayValue?.count == 11, "the answer goes out first")
        #expect(answer[10]?["result"] != nil)
        #expect(try await batcher.closeCode() == 4029)
    }
}
