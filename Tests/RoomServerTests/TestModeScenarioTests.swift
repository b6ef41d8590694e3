import Foundation
import RoomClient
import RoomWire
import Testing

/// The timing rules of a guest call-in on test mode's manual clock, with
/// the shipped template's times: an invitation that expires after 60 s, a
/// guest gone after its 20-s grace, a 30-s quiz. Run twice with one seed,
/// every client gets the same bytes (PROTOCOL.md section 25).
@Suite struct TestModeScenarioTests {
    /// Runs the scenario on `daemon` (a manual clock); returns, per user,
    /// every push it received in order, as JSON text (the guest, which
    /// drops, is left out).
    static func run(_ daemon: Daemon) async throws -> [String: [String]] {
        var clients: [(user: String, client: RoomClient, id: String)] = []
        for (user, role) in [("host", "host"), ("guest", "guest"), ("ann", "viewer"), ("bob", "viewer")] {
            let (client, joined) = try await daemon.join(user, as: role, room: "show")
            clients.append((user, client, try #require(joined["peer"]?["peer_id"]?.stringValue)))
        }
        let host = clients[0].client
        let guest = clients[1].client
        let (ann, annID) = (clients[2].client, clients[2].id)
        let bob = clients[3].client
        func settle() async throws {
            for entry in clients where !entry.client.isClosed { _ = try await entry.client.call("ping") }
        }

        _ = try await host.call("track-add", ["track_id": "host-mic", "type": "audio"])
        _ = try await guest.call("track-add", ["track_id": "guest-mic", "type": "audio"])
        _ = try await host.call("broadcast", ["info": ["message": "Welcome!"]])
        // An invitation nobody answers: it expires after request_ttl_s (60 s).
        _ = try await host.call("role-change-request", ["requested_for": .string(annID), "role": "guest"])
        _ = try await guest.call("audio-level", ["levels": [["track_id": "guest-mic", "level": 70]]])
        try await TestModeTests.advance(daemon, by: 60_000)
        // The guest's network drops; after its 20-s grace it is gone.
        try await settle()
        await guest.abort()
        try await daemon.waitForGraces()
        try await TestModeTests.advance(daemon, by: 20_000)
        // A 30-s quiz: two answers, then it stops on its own.
        let quiz = try await PollTests.makePoll(host, ["title": "Quick", "type": "quiz", "duration": 30])
        _ = try await ann.call(
            "poll-response",
            ["poll_id": .string(quiz), "responses": [["question": 1, "option": 2, "duration": 800]]]
        )
        _ = try await bob.call(
            "poll-response",
            ["poll_id": .string(quiz), "responses": [["question": 1, "option": 1, "duration": 500]]]
        )
        try await TestModeTests.advance(daemon, by: 30_000)
        _ = try await host.call("poll-leaderboard", ["poll_id": .string(quiz)])
        try await settle()
        try await Task.sleep(for: .milliseconds(50))
        var pushes: [String: [String]] = [:]
        for entry in clients where entry.user != "guest" { pushes[entry.user] = entry.client.drain().map(\.text) }
        return pushes
    }

    static func daemon(seed: Int) async throws -> Daemon {
        try await TestModeTests.manual(seed: seed)
    }

    @Test func theTimingRulesHoldWithoutWaitingForThem() async throws {
        let pushes = try await Self.run(try Self.daemon(seed: 1))
        let host = pushes["host"]!.compactMap { try? JSON.parse(Array($0.utf8)) }
        let methods = host.compactMap { $0["method"]?.stringValue }
        #expect(methods.contains("on-role-change-rejected"), "\(methods)")
        #expect(host.first { $0["method"] == "on-role-change-rejected" }?["params"]?["reason"] == "expired")
        #expect(host.first { $0["method"] == "on-peer-leave" }?["params"]?["reason"] == "websocket closed")
        let stops = pushes["ann"]!.filter { $0.contains("\"on-poll-stop\"") }
        #expect(stops.count == 1, "the quiz stopped on its own after 30 s")
        #expect(pushes["bob"]!.contains { $0.contains("\"active-speakers\"") }, "the ticks ran as the clock passed")
    }

    @Test func oneSeedTwiceGivesTheSameBytesAndAnotherSeedOtherIDs() async throws {
        let first = try await Self.run(try Self.daemon(seed: 7))
        let second = try await Self.run(try Self.daemon(seed: 7))
        #expect(first.values.map(\.count).reduce(0, +) > 20, "a scenario with pushes to compare")
        for user in first.keys.sorted() {
            #expect(first[user] == second[user], "\(user)'s pushes differ between two runs of seed 7")
        }
        let other = try await Self.run(try Self.daemon(seed: 8))
        #expect(other["host"] != first["host"], "another seed, other ids")
        #expect(other["host"]?.count == first["host"]?.count, "the same pushes otherwise")
    }
}
