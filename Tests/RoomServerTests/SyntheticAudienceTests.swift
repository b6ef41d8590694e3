import Foundation
import RoomClient
import RoomWire
import Testing

/// Test mode II's synthetic audience (PROTOCOL.md section 33): socketless
/// peers that are real peers of the room — the real clients see their
/// joins, their taps, their chat and their stage requests — acting on
/// command on the manual clock, the same on every run.
@Suite struct SyntheticAudienceTests {
    static func post(_ daemon: Daemon, _ path: String, _ body: String) async throws -> (Int, JSON) {
        let answer = try await http("POST", daemon, path, token: daemon.managementToken(), body: body)
        return (answer.status, answer.body)
    }

    static func act(_ daemon: Daemon, _ action: String, _ count: Int, _ params: String = "{}") async throws -> JSON {
        let (status, answer) = try await post(
            daemon,
            "/v2/test/audience/act",
            #"{"room_id":"room-1","action":"\#(action)","count":\#(count),"params":\#(params)}"#
        )
        #expect(status == 200, "\(action): \(answer)")
        return answer
    }

    @Test func theRealClientsSeeWhatTheAudienceDoes() async throws {
        let daemon = try await TestModeTests.manual(settings: #"{"room":{"large_room_threshold":50}}"#, seed: 7)
        let (host, _) = try await daemon.join("h", as: "host")
        let (status, added) = try await Self.post(
            daemon,
            "/v2/test/audience",
            #"{"room_id":"room-1","count":1500,"role":"viewer"}"#
        )
        #expect(status == 200 && added["count"] == 1500, "\(added)")
        #expect(added["peer_ids"]?.arrayValue?.count == 1000, "at most the first 1,000 ids")
        // Announced as joins are: one by one below the large-room threshold, then by room-state.
        for _ in 0..<49 { #expect(try await host.next("on-peer-join")["peer"]?["role"] == "viewer") }
        try await TestModeTests.advance(daemon, by: 2000)
        #expect(try await host.next("room-state")["peer_count"] == 1501)

        // Counted in the room and found by name, as joined peers are.
        let room = try await http("GET", daemon, "/v2/active-rooms/room-1", token: daemon.managementToken())
        #expect(room.body["room"]?["peer_count"] == 1501, "\(room.body["room"] ?? nil)")
        let found = try await host.call("find-peer", ["role": "viewer", "limit": 10])
        #expect(found["total"] == 1500, "\(found["total"] ?? nil)")
        #expect(found["peers"]?[0]?["info"]?["name"]?.stringValue?.hasPrefix("viewer-") == true)

        // 400 of them tap the stream 3 times each: one coalesced on-reactions.
        let tapped = try await Self.act(daemon, "react", 400, #"{"target":"stream","type":"love","count":3}"#)
        #expect(tapped["done"] == 400 && tapped["errors"] == [:], "\(tapped)")
        try await TestModeTests.advance(daemon, by: 1000)
        let reactions = try await host.next("on-reactions")
        let heart = reactions["counts"]?.arrayValue?.first { $0["type"] == "love" }
        #expect(heart?["total"] == 1200, "\(reactions)")

        // Three chat; the host gets each on-broadcast from a synthetic peer.
        let said = try await Self.act(daemon, "broadcast", 3, #"{"info":{"message":"hi from the crowd"}}"#)
        #expect(said["done"] == 3)
        var senders: [String] = []
        for _ in 0..<3 {
            let message = try await host.next("on-broadcast")
            #expect(message["info"]?["message"] == "hi from the crowd")
            senders.append(try #require(message["sender"]?["info"]?["name"]?.stringValue))
        }
        #expect(senders.allSatisfy { $0.hasPrefix("viewer-") }, "\(senders)")

        // 30 ask to come on stage: the host's queue lists them.
        let asked = try await Self.act(daemon, "stage-request", 30, #"{"note":"pick me"}"#)
        #expect(asked["done"] == 30, "\(asked)")
        let queue = try await host.call("stage-list", ["status": "waiting", "limit": 100])
        #expect(queue["requests"]?.arrayValue?.count == 30, "\(queue)")

        // Errors are counted by code: a message id that does not exist is 40405.
        let missed = try await Self.act(daemon, "react", 5, #"{"target":"nope","type":"love"}"#)
        #expect(missed["done"] == 0 && missed["errors"] == ["40405": 5], "\(missed)")
        #expect(missed["messages"]?["40405"]?.stringValue?.isEmpty == false, "the first message of each code")

        // 100 leave; DELETE removes the rest, as leaves.
        #expect(try await Self.act(daemon, "leave", 100)["done"] == 100)
        let removed = try await http(
            "DELETE",
            daemon,
            "/v2/test/audience?room_id=room-1",
            token: daemon.managementToken()
        )
        #expect(removed.status == 200 && removed.body == ["removed": 1400], "\(removed.body)")
        let after = try await http("GET", daemon, "/v2/active-rooms/room-1", token: daemon.managementToken())
        #expect(after.body["room"]?["peer_count"] == 1, "\(after.body["room"] ?? nil)")
        let metrics = try await daemon.metricsText()
        let pushes = metrics.split(separator: "\n").first { $0.hasPrefix("roomd_test_audience_pushes_total ") }
        #expect(pushes.map { Int($0.split(separator: " ")[1]) ?? 0 } ?? 0 > 0, "\(pushes ?? "none")")
    }

    /// The same seed and the same calls choose the same peers on every run.
    @Test func theSameSeedChoosesTheSamePeers() async throws {
        func senders() async throws -> [String] {
            let daemon = try await TestModeTests.manual()
            let (host, _) = try await daemon.join("h", as: "host")
            _ = try await Self.post(
                daemon,
                "/v2/test/audience",
                #"{"room_id":"room-1","count":200,"role":"viewer","seed":42}"#
            )
            _ = try await Self.act(daemon, "broadcast", 5, #"{"info":{"message":"x"}}"#)
            var names: [String] = []
            for _ in 0..<5 {
                names.append(try await host.next("on-broadcast")["sender"]?["info"]?["name"]?.stringValue ?? "")
            }
            return names
        }
        let first = try await senders()
        #expect(first == (try await senders()))
        #expect(Set(first).count == 5, "five different peers: \(first)")
    }

    @Test func badRequestsNameTheField() async throws {
        let daemon = try await TestModeTests.manual()
        let cases: [(String, String, Int, String)] = [
            ("/v2/test/audience", #"{"room_id":"room-1","count":0,"role":"viewer"}"#, 400, "count: must be between 1"),
            (
                "/v2/test/audience", #"{"room_id":"room-1","count":100001,"role":"viewer"}"#, 400,
                "count: must be between"
            ),
            ("/v2/test/audience", #"{"room_id":"room-1","count":1,"role":"king"}"#, 400, "role: not a role"),
            ("/v2/test/audience", #"{"room_id":"a b","count":1,"role":"viewer"}"#, 400, "room_id: "),
            ("/v2/test/audience", #"{"count":1,"role":"viewer"}"#, 400, "room_id: required"),
            ("/v2/test/audience/act", #"{"room_id":"room-1","action":"fly","count":1}"#, 400, "action: one of"),
            (
                "/v2/test/audience/act", #"{"room_id":"room-1","action":"react","count":1}"#, 404,
                "room_id: no synthetic"
            ),
        ]
        for (path, body, status, message) in cases {
            let (got, answer) = try await Self.post(daemon, path, body)
            #expect(got == status, "\(body): \(answer)")
            #expect(answer["message"]?.stringValue?.hasPrefix(message) == true, "\(body): \(answer)")
        }
        _ = try await Self.post(daemon, "/v2/test/audience", #"{"room_id":"room-1","count":3,"role":"viewer"}"#)
        let (tooMany, why) = try await Self.post(
            daemon,
            "/v2/test/audience/act",
            #"{"room_id":"room-1","action":"leave","count":4}"#
        )
        #expect(tooMany == 400 && why["message"]?.stringValue?.hasPrefix("count: the audience") == true, "\(why)")
        // Without test mode the route does not exist.
        let plain = try await Daemon.start(singleProcess: true)
        let (none, _) = try await Self.post(plain, "/v2/test/audience", #"{"room_id":"r","count":1,"role":"viewer"}"#)
        #expect(none == 404)
    }
}
