import Foundation
import RoomClient
import RoomWire
import Testing

/// A tick's coalesced push to a large audience is written over several loop
/// turns (FanOut.fanOutPaced, `FanOut.pacedPerTurn` recipients a turn), so
/// that calls are answered between its writes. Over real sockets: 600
/// viewers (more than two turns' worth) each get every `on-reactions` once,
/// with the newest totals, in the order the ticks made them, while the room's
/// calls are still answered.
@Suite struct PacedPushTests {
    static let viewers = 600

    /// The next `on-reactions` this socket gets (answers and other pushes skipped); nil when it closes.
    @available(*, noasync, message: "blocks a thread of the test pool")
    static func nextReactions(_ socket: RawSocket) -> JSON? {
        while let frame = socket.readFrame(), frame.opcode != 8 {
            if let message = try? JSON.parse(frame.payload), message["method"] == "on-reactions" {
                return message["params"]
            }
        }
        return nil
    }

    @Test func everyViewerOfALargeAudienceGetsEachCoalescedPushOnceInOrder() async throws {
        let daemon = try await Daemon.start(
            settings: #"{"reactions":{"interval_ms":100},"limits":{"max_unjoined_per_address":4096}}"#
        )
        let sockets = try await Crowd.viewers(daemon, "viewer", count: Self.viewers)
        let (fan, _) = try await daemon.join("fan", as: "viewer")

        #expect(try await fan.call("react", ["target": "stream", "type": "fire", "count": 5])["total"] == 5)
        let first = await Crowd.each(sockets) { Self.nextReactions($0) }
        let expected: JSON = ["counts": [["target": "stream", "type": "fire", "total": 5]]]
        #expect(first.filter { $0 == expected }.count == Self.viewers, "every viewer, the newest total")

        // The next tick's push comes after the first at every viewer: one each, in order.
        #expect(try await fan.call("react", ["target": "stream", "type": "fire", "count": 3])["total"] == 8)
        _ = try await fan.call("ping")  // the room's calls are answered meanwhile
        let second = await Crowd.each(sockets) { Self.nextReactions($0) }
        let totals = second.map { $0?["counts"]?.arrayValue?.first?["total"]?.intValue }
        #expect(totals.filter { $0 == 8 }.count == Self.viewers, "each viewer's next push is the second tick's")
    }

    /// A push to more connections than a turn of the loop writes beyond its
    /// callers (`TurnWrites.budget`, 1,024) is written over several turns
    /// (Sockets.writeAfterTurn carries the rest, and the loop does not wait
    /// for events meanwhile): 1,100 viewers of one process each get every
    /// broadcast once, in order, and the host's calls are answered between.
    @Test func aBroadcastToMoreConnectionsThanATurnWritesReachesEveryViewerOnceInOrder() async throws {
        let count = 1100
        let daemon = try await Daemon.start(
            settings: #"{"limits":{"max_unjoined_per_address":4096}}"#,
            singleProcess: true
        )
        let sockets = try await Crowd.viewers(daemon, "many", count: count)
        let (host, _) = try await daemon.join("host", as: "host")
        for index in 1...3 {
            _ = try await host.call("broadcast", ["info": ["message": .string("m\(index)")]])
        }
        _ = try await host.call("ping")
        let received = await Crowd.each(sockets) { socket -> [String] in
            var messages: [String] = []
            while messages.count < 3, let frame = socket.readFrame(), frame.opcode != 8 {
                if let message = try? JSON.parse(frame.payload), message["method"] == "on-broadcast" {
                    messages.append(message["params"]?["info"]?["message"]?.stringValue ?? "?")
                }
            }
            return messages
        }
        #expect(
            received.filter { $0 == ["m1", "m2", "m3"] }.count == count,
            "every viewer, each broadcast once, in order"
        )
    }

    /// A turn that reads many calls writes its callers' answers every
    /// `TurnWrites.flushEvery` (64) calls it reads, not only when it ends
    /// (Sockets.messageHandled; `roomd_turn_early_writes_total`). 40 viewers
    /// each send 200 pings in one write, which lws reads in one go (64 KiB a
    /// read): each gets its 200 answers once, in order.
    @Test func aTurnThatReadsManyCallsAnswersEachOnceInOrderBeforeItEnds() async throws {
        let daemon = try await Daemon.start(settings: #"{"limits":{"max_unjoined_per_address":4096}}"#)
        let sockets = try await Crowd.viewers(daemon, "caller", count: 40)
        let pings = (1...200).map { #"{"jsonrpc":"2.0","id":"p\#($0)","method":"ping"}"# }
        let answered = await Crowd.each(sockets) { socket -> [String] in
            guard (try? socket.sendTexts(pings)) != nil else { return [] }
            var ids: [String] = []
            while ids.count < pings.count, let frame = socket.readFrame(), frame.opcode != 8 {
                if let message = try? JSON.parse(frame.payload), message["result"] != nil,
                    let id = message["id"]?.stringValue
                {
                    ids.append(id)
                }
            }
            return ids
        }
        let expected = (1...200).map { "p\($0)" }
        #expect(answered.filter { $0 == expected }.count == sockets.count, "every caller, each answer once, in order")
        let early = FeedTests.value("roomd_turn_early_writes_total", in: try await daemon.metricsText())
        // A 200-call read on the room's node (over 3 nodes, a third of the callers) is answered in 4 writes.
        #expect(early >= 3, "a 200-call read answered in parts before its turn ended")
    }
}
