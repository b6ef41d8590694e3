import Foundation
import RoomClient
import RoomWire
import Testing

/// Section 22 in a cluster (section 18): bans are room state at the room's
/// home, so a ban made through one node holds on the others, and survives
/// a `kill -9` of the home with the room's saved state.
@Suite(.serialized) struct ChatModerationClusterTests {
    typealias Cluster = ClusterRoutingTests.Cluster

    /// `client`, or a new one joined as `user` when the takeover closed it
    /// (1001: join again), once the room answers again (within 20 s).
    static func again(
        _ client: RoomClient,
        _ user: String,
        as role: String,
        on node: Int,
        _ cluster: Cluster
    ) async throws -> RoomClient {
        let deadline = Date().addingTimeInterval(20)
        var current = client
        while true {
            do {
                _ = try await current.call("ping", timeout: .seconds(2))
                return current
            } catch RoomClientError.closed(let code, _) where code == 1001 {
                if let rejoined = try? await cluster.join(user, as: role, on: node).0 { current = rejoined }
            } catch {
                if Date() > deadline { throw error }
            }
            if Date() > deadline { return current }
        }
    }

    static func refused(_ cluster: Cluster, on node: Int, user: String) async throws -> (Int, String)? {
        let daemon = cluster.nodes[node]
        let client = try await RoomClient.connect(
            to: "ws://127.0.0.1:\(daemon.port)/ws",
            defaultTimeout: Daemon.waitTimeout
        )
        let token = JSON.string(try daemon.token(user: user, role: "viewer"))
        do {
            _ = try await client.call("join", ["token": token], timeout: .seconds(20))
            return nil
        } catch RoomClientError.rpc(let code, let message, _) {
            return (code, message)
        }
    }

    @Test func aBanMadeThroughOneNodeHoldsOnTheOthersAndSurvivesTheHomesKill() async throws {
        let cluster = try await Cluster()
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (moderator, _) = try await cluster.join("m", as: "moderator", on: 1)
        let (troll, trollID) = try await cluster.join("troll", as: "guest", on: 2)
        let (loud, _) = try await cluster.join("loud", as: "viewer", on: 2)
        defer { _ = host }
        // Through n2 (an edge of the room): ban the troll, chat-ban and slow the chat.
        _ = try await moderator.call("peer-ban", ["peer_id": .string(trollID), "reason": "spam"])
        #expect(try await troll.next("on-peer-leave-request")["reason"] == "spam")
        #expect(try await troll.closeCode() == 4001)
        _ = try await moderator.call("chat-ban", ["user_id": "loud"])
        #expect(try await loud.next("on-chat-state")["chat_banned"] == true)
        _ = try await moderator.call("chat-state", ["slow_mode_s": 60])
        for node in 0..<3 {
            let refusal = try await Self.refused(cluster, on: node, user: "troll")
            #expect(refusal?.0 == 40301, "node \(node + 1)")
            #expect(refusal?.1.contains("spam") == true)
        }
        #expect(try await Self.refused(cluster, on: 1, user: "someone-else") == nil, "another user_id joins")
        try await cluster.waitUntilSaved(containing: #""slow_mode_s":60"#)  // the last of the three
        _ = await cluster.nodes[0].stop(signal: SIGKILL)
        // The room is taken over by n2 or n3: the ban, the chat ban and slow mode hold there.
        // A client the saved state missed is told to join again (1001): it does, as an app would.
        let moderatorAgain = try await Self.again(moderator, "m", as: "moderator", on: 1, cluster)
        _ = try await ClusterRoutingTests.eventually(moderatorAgain, "ping", within: 15)
        for node in 1..<3 {
            let refusal = try await Self.refused(cluster, on: node, user: "troll")
            #expect(refusal?.0 == 40301, "node \(node + 1) after the kill")
        }
        let loudAgain = try await Self.again(loud, "loud", as: "viewer", on: 2, cluster)
        let silenced = try await ClusterRoutingTests.eventually(loudAgain, "chat-history", [:], within: 15)
        #expect(silenced["messages"] != nil)
        #expect(try await loudAgain.errorCode("broadcast", ["info": ["message": "hi"]]) == 40302, "still chat-banned")
        let (late, _) = try await cluster.join("late", as: "viewer", on: 1)
        #expect(try await late.call("broadcast", ["info": ["message": "one"]])["message_id"] != nil)
        #expect(try await late.errorCode("broadcast", ["info": ["message": "two"]]) == 42901, "slow mode held")
        _ = try await moderatorAgain.call("peer-unban", ["user_id": "troll"])
        #expect(try await Self.refused(cluster, on: 2, user: "troll") == nil, "unbanned on the new home")
    }
}
