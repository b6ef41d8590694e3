import RoomConfig
import RoomModel
import RoomWire
import Testing

@testable import RoomServer

/// Section 30: a hook's answer read into a verdict, the reason cut, the in-flight bounds (no daemon).
@Suite struct HookVerdictTests {
    private func verdict(_ body: String, _ event: HookSettings.Event = .message, status: Int = 200) -> HookVerdict {
        HookVerdict.of(status: status, body: Array(body.utf8), event: event)
    }

    @Test func allowDenyAndRewritesAreRead() {
        #expect(verdict(#"{"allow":true}"#) == .allow(.none))
        #expect(verdict(#"{"allow":false,"reason":"spam"}"#) == .deny(reason: "spam"))
        #expect(verdict(#"{"allow":false}"#) == .deny(reason: HookVerdict.defaultReason))
        #expect(verdict(#"{"allow":true,"shadow":true}"#) == .allow(HookRewrite(shadow: true)))
        #expect(verdict(#"{"allow":true,"info":{"message":"m"}}"#) == .allow(HookRewrite(info: ["message": "m"])))
        #expect(
            verdict(#"{"allow":true,"name":"Ada","role":"guest","attributes":{"t":"g"}}"#, .join)
                == .allow(HookRewrite(name: "Ada", role: "guest", attributes: ["t": "g"]))
        )
        #expect(verdict(#"{"allow":true,"text":"q"}"#, .question) == .allow(HookRewrite(text: "q")))
        #expect(verdict(#"{"allow":true,"note":"n"}"#, .stageRequest) == .allow(HookRewrite(text: "n")))
        #expect(
            verdict(#"{"allow":true,"name":"Ada"}"#, .message) == .allow(.none),
            "a join field on a message: ignored"
        )
    }

    @Test func anythingElseIsAFailedHook() {
        for (body, status) in [
            (#"{"allow":true}"#, 500), (#"{"allow":true}"#, 204), ("garbage", 200), (#"[true]"#, 200),
            (#"{"allow":"yes"}"#, 200), (#"{}"#, 200), (#"{"allow":false,"reason":5}"#, 200),
            (#"{"allow":true,"info":"text"}"#, 200), (#"{"allow":true,"shadow":"yes"}"#, 200),
        ] {
            guard case .failed = verdict(body, status: status) else {
                Issue.record("\(status) \(body) should fail")
                continue
            }
        }
        #expect(verdict(#"{"allow":true,"attributes":{"a":1}}"#, .join) == .failed("attributes: wrong type"))
        guard case .failed = HookVerdict.of(status: 200, body: nil, event: .join) else {
            Issue.record("a body over the cap (nil) is a failed hook")
            return
        }
    }

    @Test func theReasonIsCutAtACharacterBoundary() {
        #expect(HookVerdict.cut("short", toBytes: 256) == "short")
        #expect(HookVerdict.cut(String(repeating: "a", count: 300), toBytes: 256).utf8.count == 256)
        let cut = HookVerdict.cut(String(repeating: "é", count: 200), toBytes: 256)  // 2 bytes each
        #expect(cut == String(repeating: "é", count: 128))
        let emoji = HookVerdict.cut("a" + String(repeating: "😀", count: 100), toBytes: 256)  // 1 + 4 each
        #expect(emoji.utf8.count == 253 && emoji == "a" + String(repeating: "😀", count: 63))
        let long = #"{"allow":false,"reason":""# + String(repeating: "x", count: 1000) + #""}"#
        #expect(verdict(long) == .deny(reason: String(repeating: "x", count: 256)))
    }

    @Test func theBoundsHoldPerRoomAndInAll() {
        var bounds = HookBounds(total: 3, perRoom: 2)
        let first = bounds.take(RoomID("a"))
        let second = bounds.take(RoomID("a"))
        let third = bounds.take(RoomID("a"))
        #expect(first && second && !third, "the room's bound")
        let other = bounds.take(RoomID("b"))
        let over = bounds.take(RoomID("c"))
        #expect(other && !over, "the service thread's bound")
        bounds.give(RoomID("a"))
        let again = bounds.take(RoomID("c"))
        #expect(again)
        #expect(bounds.inFlight == 3 && bounds.inFlight(RoomID("a")) == 1)
        #expect(HookGate.maxInFlight == 1024 && HookGate.maxInFlightPerRoom == 256, "as PROTOCOL.md documents")
    }

    /// What waits behind a hooked call in memory: at most the edge's window, 512 messages
    /// or 1 MiB (past it the dispatcher closes the connection with 1008). Over a socket
    /// it is never reached (roomd stops reading; HookBoundsTests), so only here.
    @Test func whatWaitsBehindAHookedCallIsBoundedByTheEdgesWindow() {
        let byCount = HookWait(ticket: 1, message: MessageRun())
        let held = (0..<512).allSatisfy { _ in byCount.hold(Array("{}".utf8)) }
        #expect(held && !byCount.hold(Array("{}".utf8)), "512 messages, not 513")
        let byBytes = HookWait(ticket: 2, message: MessageRun())
        let half = [UInt8](repeating: 0x20, count: 1 << 19)
        #expect(byBytes.hold(half) && byBytes.hold(half) && !byBytes.hold([0x20]), "1 MiB, not a byte more")
        #expect(byBytes.takeBacklog().count == 2 && byBytes.hold([0x20]), "taken: room again")
        #expect(Edge.maxUnacked == 512 && Edge.maxUnackedBytes == 1 << 20, "as PROTOCOL.md documents")
    }
}
