import Dispatch
import Foundation
import RoomClient
import RoomWire
import RoomdTesting
import Synchronization
import Testing

/// The bounds on calls waiting for their hook (PROTOCOL.md section 30), over
/// real sockets to a real roomd: a connection's later messages wait behind
/// its hooked call, in order (its socket is not read meanwhile); at most `HookGate.maxInFlightPerRoom`
/// (256) calls of a room and `HookGate.maxInFlight` (1024) of a service
/// thread wait at once, and one more fails at once as a failed hook
/// (`on_error`). The hook holds its answers until the test opens its gate, so
/// nothing depends on timing but `timeout_ms` (5 s, the most it may be): the
/// held calls are checked to be answered by the hook, not by their timeout.
/// In a cluster run the hook runs on the room's home, whose service thread
/// the bounds are of: every room's first peer joins there.
@Suite struct HookBoundsTests {
    /// The hook's held calls: counted as they arrive, answered once the test opens the gate.
    final class Held: Sendable {
        private let gate = DispatchSemaphore(value: 0)
        private let arrived = Atomic<Int>(0)

        /// The hook's thread: counted, then waits for the gate (once open, open for all).
        func hold() {
            arrived.add(1, ordering: .relaxed)
            gate.wait()
            gate.signal()
        }

        func open() { gate.signal() }

        /// The calls held so far.
        var count: Int { arrived.load(ordering: .relaxed) }

        /// Waits until the hook holds `count` calls (the kit's timeout).
        func wait(for count: Int) async throws {
            let deadline = ContinuousClock.now + Daemon.waitTimeout
            while arrived.load(ordering: .relaxed) < count {
                guard ContinuousClock.now < deadline else {
                    throw DaemonError(description: "the hook does not hold \(count) calls")
                }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
    }

    /// A daemon whose hook holds the joins of users "held-…" and the broadcasts of "held"
    /// until `held` opens, then denies them ("released"); it allows any other call.
    static func daemon(_ hook: HookServer, _ held: Held, onError: String) async throws -> Daemon {
        hook.decide { event in
            let data = event["data"]
            guard data?["info"]?["message"] == "held" || data?["user_id"]?.stringValue?.hasPrefix("held-") == true
            else { return .allow }
            held.hold()
            return .deny("released")
        }
        return try await HookTests.daemon(
            hook,
            #""events":["join","message"],"timeout_ms":5000,"on_error":"\#(onError)""#,
            // A thousand connections before they join; pings by the thousand at once.
            settings:
                #"{"limits":{"max_unjoined_per_address":4096,"messages_per_second":100000,"message_burst":100000}}"#
        )
    }

    /// Runs `body` with a hook, its held calls and a daemon asking it; then the held calls are let go.
    static func holding(onError: String, _ body: (HookServer, Held, Daemon) async throws -> Void) async throws {
        let hook = try HookServer()
        defer { hook.close() }
        let held = Held()
        defer { held.open() }
        try await body(hook, held, try await daemon(hook, held, onError: onError))
    }

    static func broadcast(_ id: String, _ message: String) -> String {
        #"{"jsonrpc":"2.0","id":"\#(id)","method":"broadcast","params":{"info":{"message":"\#(message)"}}}"#
    }

    /// The joins the hook was asked about, by user.
    static func joins(_ hook: HookServer) throws -> [String] {
        try hook.requests().compactMap { $0["type"] == "join" ? $0["data"]?["user_id"]?.stringValue : nil }
    }

    /// A peer's messages sent while its hooked call waits are answered after it, in order,
    /// however many it sends: the socket is not read meanwhile (TCP holds them back), so
    /// what waits in roomd's memory stays within the edge's window (512 messages) and the
    /// peer is not closed; 2,000 here, in one write. Other peers are not held up. (The
    /// 1008 past the window guards memory only: HookVerdictTests has it.)
    @Test func aPeersMessagesWaitBehindItsHookedCallWithoutLimitOrLoss() async throws {
        try await Self.holding(onError: "deny") { hook, held, daemon in
            let (other, _) = try await daemon.join("other", as: "guest")
            let patient = try await Crowd.viewer(daemon, "patient", port: Crowd.ports(daemon)[0])
            let later = 2000
            try patient.sendTexts(
                [Self.broadcast("held", "held")] + (1...later).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"ping"}"# }
            )
            try await held.wait(for: 1)
            _ = try await other.call("ping")  // others are answered meanwhile
            _ = try await other.call("broadcast", ["info": ["message": "quick"]])
            #expect(await patient.answers(within: 0.2).isEmpty, "nothing answered while its hook waits")
            held.open()
            let answers = await patient.answers(count: later + 1)
            #expect(
                answers.first?["error"]?["code"] == 40305,
                "the hook's verdict, not a timeout: \(answers.first ?? .null)"
            )
            let ids = answers.compactMap { $0["id"] }
            let inOrder = ids == [JSON.string("held")] + (1...later).map { JSON.int($0) }
            #expect(inOrder, "\(ids.count) of \(later + 1) answered, from \(ids.prefix(3))")
            #expect(answers.dropFirst().allSatisfy { $0["result"]?["server_time"] != nil })
        }
    }

    /// 256 calls of a room wait for the hook (joins); the 257th fails at once
    /// (on_error deny: 5004) without reaching it, while another room's call still does.
    @Test func aRoomHolds256CallsWaitingForTheHookAndTheNextFails() async throws {
        try await Self.holding(onError: "deny") { hook, held, daemon in
            let crowd = try await Crowd(daemon, room: "room-1", holding: 256, held)
            let over = try #require(await crowd.extra.answer(crowd.join("over", 256)))
            #expect(over["error"]?["code"] == 5004, "\(over)")
            let elsewhere = try await Crowd(daemon, room: "room-2", holding: 0, held)
            let other = try #require(await elsewhere.extra.answer(elsewhere.join("other", 0)))
            #expect(other["result"]?["peer"] != nil, "\(other)")
            #expect(try Self.joins(hook).filter { $0.contains("-o") } == ["room-2-other-0"], "not room-1-over-0")

            held.open()
            let answers = await Crowd.answers(crowd.held, "join")
            #expect(answers.allSatisfy { $0?["error"]?["code"] == 40305 }, "answered by the hook, none timed out")
        }
    }

    /// 1024 calls of a service thread wait for the hook (joins to 4 rooms, 256 each); the
    /// 1025th (a fifth room's, homed on the same node) fails at once (on_error allow: it
    /// acts) without reaching it.
    @Test func aServiceThreadHolds1024CallsWaitingForTheHookAndTheNextFails() async throws {
        try await Self.holding(onError: "allow") { hook, held, daemon in
            // Every socket first: only then do the 1,024 joins go out, together.
            var crowds: [Crowd] = []
            for room in 1...4 { crowds.append(try await Crowd(daemon, room: "room-\(room)", connecting: 256)) }
            let fifth = try await Crowd(daemon, room: "room-5", connecting: 0)
            for crowd in crowds { try crowd.sendJoins() }
            try await held.wait(for: 1024)
            let over = try #require(await fifth.extra.answer(fifth.join("over", 0)))
            #expect(over["result"]?["peer"] != nil, "a failed hook under on_error allow: it acts: \(over)")
            #expect(try !Self.joins(hook).contains("room-5-over-0"), "never asked")

            held.open()
            let answers = await Crowd.answers(crowds.flatMap(\.held), "join")
            #expect(answers.allSatisfy { $0?["error"]?["code"] == 40305 }, "answered by the hook, none timed out")
        }
    }
}

/// Viewers of one room over raw sockets (a blocking socket each, no client
/// loop: cheap by the thousand): a keeper, joined first on the first node (in a
/// cluster: the room's home from then on, before the burst), then `holding` users `held-ROOM-i` whose joins the hook holds, spread over the
/// nodes; and one more connection, not joined yet (`extra`).
struct Crowd: Sendable {
    let daemon: Daemon
    let room: String
    let keeper: RawSocket
    let held: [RawSocket]
    let extra: RawSocket

    static func ports(_ daemon: Daemon) -> [Int] {
        daemon.nodes.isEmpty ? [daemon.port] : daemon.nodes.map(\.port)
    }

    /// Returns once the hook holds the joins of `holding`.
    init(_ daemon: Daemon, room: String, holding: Int, _ hold: HookBoundsTests.Held) async throws {
        try await self.init(daemon, room: room, connecting: holding)
        let base = hold.count
        try sendJoins()
        try await hold.wait(for: base + holding)
    }

    /// Connected, the keeper joined, the held users' joins not sent yet (`sendJoins()`):
    /// what takes time under load happens before any hook call waits (timeout_ms is 5 s at most).
    init(_ daemon: Daemon, room: String, connecting holding: Int) async throws {
        self.daemon = daemon
        self.room = room
        let ports = Self.ports(daemon)
        keeper = try await Self.viewer(daemon, "\(room)-keeper", room: room, port: ports[0])
        let sockets = try await onThread {
            try (0...holding).map { try RawSocket(port: ports[$0 % ports.count], readTimeoutSeconds: 30) }
        }
        held = Array(sockets.dropLast())
        extra = sockets[holding]
    }

    /// The held users' joins, one write each.
    func sendJoins() throws {
        for (index, socket) in held.enumerated() { try socket.sendText(try join("held", index, prefix: true)) }
    }

    /// A join (id "join") of user `ROOM-name-index` (`held-ROOM-index` with `prefix`), as a viewer.
    func join(_ name: String, _ index: Int, prefix: Bool = false) throws -> String {
        let user = prefix ? "\(name)-\(room)-\(index)" : "\(room)-\(name)-\(index)"
        let token = try daemon.token(room: room, user: user, role: "viewer")
        return #"{"jsonrpc":"2.0","id":"join","method":"join","params":{"token":"\#(token)"}}"#
    }

    /// A viewer joined (not held) on `port`.
    static func viewer(_ daemon: Daemon, _ user: String, room: String = "room-1", port: Int) async throws -> RawSocket {
        let token = try daemon.token(room: room, user: user, role: "viewer")
        let socket = try await onThread { try RawSocket(port: port, readTimeoutSeconds: 30) }
        let joined = await socket.answer(
            #"{"jsonrpc":"2.0","id":"join","method":"join","params":{"token":"\#(token)"}}"#
        )
        guard joined?["result"] != nil else {
            throw DaemonError(description: "\(user) did not join: \(joined ?? .null)")
        }
        return socket
    }

    /// `count` viewers `NAME-i` joined, spread over the nodes, connected on
    /// `threads` threads, each joining its share one after the other (a thread
    /// per viewer would put hundreds of runnable threads on CI's two cores,
    /// and one stalled between its connect and its request head for longer
    /// than roomd's head timeout is closed).
    static func viewers(_ daemon: Daemon, _ name: String, count: Int, threads: Int = 12) async throws -> [RawSocket] {
        let ports = ports(daemon)
        let tokens = try (0..<count).map { try daemon.token(room: "room-1", user: "\(name)-\($0)", role: "viewer") }
        let shares = stride(from: 0, to: count, by: max(1, (count + threads - 1) / threads)).map {
            $0..<min(count, $0 + max(1, (count + threads - 1) / threads))
        }
        return try await withThrowingTaskGroup(of: [RawSocket].self) { group in
            for share in shares {
                group.addTask {
                    try await onThread {
                        try share.map { index in
                            let socket = try RawSocket(port: ports[index % ports.count], readTimeoutSeconds: 30)
                            try socket.sendText(
                                #"{"jsonrpc":"2.0","id":"join","method":"join","params":{"token":"\#(tokens[index])"}}"#
                            )
                            guard let joined = socket.answer(to: "join"), joined["result"] != nil else {
                                throw DaemonError(description: "\(name)-\(index) did not join")
                            }
                            return socket
                        }
                    }
                }
            }
            return try await group.reduce(into: [RawSocket]()) { $0 += $1 }
        }
    }

    /// `body` for each socket, on `threads` threads (each socket's share in order); the results in `sockets`' order.
    static func each<T: Sendable>(
        _ sockets: [RawSocket],
        threads: Int = 12,
        _ body: @escaping @Sendable (RawSocket) -> T
    ) async -> [T] {
        let size = max(1, (sockets.count + threads - 1) / threads)
        let shares = stride(from: 0, to: sockets.count, by: size).map { $0..<min(sockets.count, $0 + size) }
        let parts = await withTaskGroup(of: (Int, [T]).self) { group in
            for share in shares {
                group.addTask { (share.lowerBound, await onThread { share.map { body(sockets[$0]) } }) }
            }
            return await group.reduce(into: [(Int, [T])]()) { $0.append($1) }
        }
        return parts.sorted { $0.0 < $1.0 }.flatMap(\.1)
    }

    /// Each socket's answer to `id` (nil: closed first), in order.
    static func answers(_ sockets: [RawSocket], _ id: String) async -> [JSON?] {
        await onThread { sockets.map { $0.answer(to: id) } }
    }
}

extension RawSocket {
    /// The next answer with this `id` (pushes and other answers skipped); nil when the
    /// connection ends or closes first.
    @available(*, noasync, message: "blocks a thread of the test pool: use the async overload")
    func answer(to id: String) -> JSON? {
        while let frame = readFrame(), frame.opcode != 8 {
            if let message = try? JSON.parse(frame.payload), message["id"]?.stringValue == id { return message }
        }
        return nil
    }

    /// Sends `text`, then waits for the answer to its `id`.
    func answer(_ text: String) async -> JSON? {
        let id = (try? JSON.parse(Array(text.utf8)))?["id"]?.stringValue ?? ""
        return await onThread { () -> JSON? in
            guard (try? self.sendText(text)) != nil else { return nil }
            return self.answer(to: id)
        }
    }

    /// The next `count` answers (pushes skipped), fewer when the connection ends first.
    func answers(count: Int) async -> [JSON] {
        await onThread {
            var answers: [JSON] = []
            while answers.count < count, let frame = self.readFrame(), frame.opcode != 8 {
                if let message = try? JSON.parse(frame.payload), message["id"] != nil { answers.append(message) }
            }
            return answers
        }
    }

    /// The answers that arrive within `seconds` (a window that may only find none).
    func answers(within seconds: Double) async -> [JSON] {
        await onThread {
            var answers: [JSON] = []
            let deadline = Date().addingTimeInterval(seconds)
            while true {
                let left = Int32(deadline.timeIntervalSinceNow * 1000)
                guard left > 0 else { return answers }
                var poller = pollfd(fd: self.fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, left) > 0, let frame = self.readFrame(), frame.opcode != 8 else {
                    return answers
                }
                if let message = try? JSON.parse(frame.payload), message["id"] != nil { answers.append(message) }
            }
        }
    }
}
