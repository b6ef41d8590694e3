import Foundation
import RoomClient
import RoomWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// roomd's test mode (PROTOCOL.md section 25) as `RoomdProcess.start(testMode:)`
/// asks for it: a manual clock and seeded ids, so that a harness tests
/// timing rules without sleeping and repeats a run byte for byte.
public struct TestModeOptions: Sendable, Equatable {
    public enum Clock: Sendable, Equatable {
        /// The system clock (test mode's routes without a manual clock).
        case system
        /// The clock starts at `startMillis` (ms since the epoch; nil: the
        /// real time at start) and moves only by `RoomdProcess.advance(by:)`.
        case manual(startMillis: Int64? = nil)
    }

    public var clock: Clock
    /// `--seed`: every server id drawn from one stream seeded with it.
    public var seed: UInt64?

    public init(clock: Clock = .manual(), seed: UInt64? = nil) {
        self.clock = clock
        self.seed = seed
    }

    /// The command-line flags.
    var arguments: [String] {
        var flags = ["--test-mode"]
        if case .manual(let start) = clock {
            flags += ["--clock", "manual"]
            if let start { flags += ["--clock-start", "\(start)"] }
        }
        if let seed { flags += ["--seed", "\(seed)"] }
        return flags
    }
}

extension RoomdProcess {
    /// Moves the daemon's manual clock by `duration` (`POST /v2/test/clock
    /// {advance_ms}`): every timer it passes — graces, request expiries, poll
    /// durations, cue ends, join deadlines, the coalesced pushes — runs in
    /// time order before this returns. Returns the clock's time (ms since the epoch).
    @discardableResult
    public func advance(by duration: Duration) async throws -> Int64 {
        try await moveClock(#"{"advance_ms":\#(Self.millis(duration))}"#)
    }

    /// Sets the manual clock to `millis` (ms since the epoch, not before its time now).
    @discardableResult
    public func setClock(toMillis millis: Int64) async throws -> Int64 {
        try await moveClock(#"{"set_ms":\#(millis)}"#)
    }

    /// The manual clock's time (ms since the epoch).
    public func clockMillis() async throws -> Int64 {
        try Self.now(try await testRoute("GET", "clock", body: nil))
    }

    /// Injects `fault` into the connections of `target` (`POST
    /// /v2/test/faults`); returns the peer ids it reached. Timed faults end
    /// on the daemon's clock (`advance(by:)` with a manual one).
    @discardableResult
    public func inject(_ fault: Fault, into target: FaultTarget) async throws -> [String] {
        var members: [JSON.Member] = [target.member]
        switch fault {
        case .close(let code): members += [.init("action", "close"), .init("code", .int(code))]
        case .stall(let duration): members += [.init("action", "stall"), .init("ms", .int(Self.millis(duration)))]
        case .delay(let duration): members += [.init("action", "delay"), .init("ms", .int(Self.millis(duration)))]
        case .drop(let count): members += [.init("action", "drop"), .init("count", .int(count))]
        }
        let answer = try await testRoute("POST", "faults", body: JSON.object(members).text)
        return answer["peers"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// The next `count` calls of `method` (by `peerID`, or by anyone) are
    /// answered with error `code` (`message`, else roomd's "a scripted
    /// error") and change nothing: an app's error path without contriving
    /// the state (`POST /v2/test/faults {method, error}`, PROTOCOL.md §33).
    /// `try await roomd.failNext("role-change", code: 40900)`.
    public func failNext(
        _ method: String,
        code: Int,
        message: String? = nil,
        count: Int = 1,
        peerID: String? = nil
    ) async throws {
        var error: [JSON.Member] = [.init("code", .int(code))]
        if let message { error.append(.init("message", .string(message))) }
        var members: [JSON.Member] = [
            .init("method", .string(method)), .init("error", .object(error)), .init("count", .int(count)),
        ]
        if let peerID { members.append(.init("peer_id", .string(peerID))) }
        _ = try await testRoute("POST", "faults", body: JSON.object(members).text)
    }

    /// The next `count` pushes named `push` are dropped: `peerID`'s, or
    /// (nil) the next such pushes as sent, for every recipient (PROTOCOL.md
    /// §33). `try await roomd.dropNext("on-peer-update")`: nobody sees the
    /// next peer update. A name roomd never pushes throws at once
    /// (``RoomClientError/unknownPush(_:suggestions:)``).
    public func dropNext(_ push: String, count: Int = 1, peerID: String? = nil) async throws {
        try await pushFault(push, action: "drop", count: count, peerID: peerID, ms: nil)
    }

    /// The next `count` pushes named `push` (`peerID`'s, or every
    /// recipient's) are held for `duration` on the daemon's clock, with
    /// every push behind them: order is kept (PROTOCOL.md §33).
    public func delayNext(_ push: String, by duration: Duration, count: Int = 1, peerID: String? = nil) async throws {
        try await pushFault(push, action: "delay", count: count, peerID: peerID, ms: Self.millis(duration))
    }

    private func pushFault(_ push: String, action: String, count: Int, peerID: String?, ms: Int?) async throws {
        guard RoomClient.pushNames.contains(push) else {
            throw RoomClientError.unknownPush(push, suggestions: RoomClient.closePushes(to: push))
        }
        var members: [JSON.Member] = [
            .init("push", .string(push)), .init("action", .string(action)), .init("count", .int(count)),
        ]
        if let ms { members.append(.init("ms", .int(ms))) }
        if let peerID { members.append(.init("peer_id", .string(peerID))) }
        _ = try await testRoute("POST", "faults", body: JSON.object(members).text)
    }

    /// `count` socketless peers of `role` join `room` (PROTOCOL.md §33):
    /// real peers — counted, found by `find-peer`, announced — whose pushes
    /// are encoded and discarded. Returns how many joined and the first
    /// 1,000 peer ids. `seed` (else `--seed`, else 0) chooses who acts.
    @discardableResult
    public func addAudience(
        room: String,
        count: Int,
        role: String = "viewer",
        seed: UInt64? = nil,
        namePrefix: String? = nil
    ) async throws -> (count: Int, peerIDs: [String]) {
        var members: [JSON.Member] = [
            .init("room_id", .string(room)), .init("count", .int(count)), .init("role", .string(role)),
        ]
        if let seed { members.append(.init("seed", .int(Int(seed)))) }
        if let namePrefix { members.append(.init("name_prefix", .string(namePrefix))) }
        let answer = try await testRoute("POST", "audience", body: JSON.object(members).text)
        return (answer["count"]?.intValue ?? 0, answer["peer_ids"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }

    /// What `audienceAct` did: the calls that succeeded, and per error code
    /// its count and first message.
    public struct AudienceActs: Sendable, Equatable {
        public var done: Int
        public var errors: [Int: Int]
        public var messages: [Int: String]
    }

    /// `count` of `room`'s synthetic peers (chosen by its seed) call
    /// `action` — `react`, `broadcast`, `question-add`, `question-vote`,
    /// `poll-response`, `stage-request`, `group-join`, `leave` — with
    /// `params` now, through the same checks as a client's call.
    @discardableResult
    public func audienceAct(room: String, _ action: String, count: Int, params: JSON = [:]) async throws -> AudienceActs
    {
        let body: JSON = [
            "room_id": .string(room), "action": .string(action), "count": .int(count), "params": params,
        ]
        let answer = try await testRoute("POST", "audience/act", body: body.text)
        var errors: [Int: Int] = [:]
        var messages: [Int: String] = [:]
        for member in answer["errors"]?.objectValue ?? [] {
            guard let code = Int(member.key) else { continue }
            errors[code] = member.value.intValue ?? 0
            messages[code] = answer["messages"]?[member.key]?.stringValue ?? ""
        }
        return AudienceActs(done: answer["done"]?.intValue ?? 0, errors: errors, messages: messages)
    }

    /// Every synthetic peer of `room` leaves; returns how many.
    @discardableResult
    public func removeAudience(room: String) async throws -> Int {
        let query = room.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? room
        return try await testRoute("DELETE", "audience?room_id=\(query)", body: nil)["removed"]?.intValue ?? 0
    }

    /// Every fault in force (`GET /v2/test/faults`): the method faults and
    /// the push faults as posted with `left`, then each connection's.
    public func faults() async throws -> [JSON] {
        try await testRoute("GET", "faults", body: nil)["faults"]?.arrayValue ?? []
    }

    /// The next `count` webhook attempts fail with `status` (nil: a timeout)
    /// without reaching the receiver; roomd retries them as it would real failures.
    public func failWebhooks(next count: Int, status: Int? = 500) async throws {
        let how: JSON = status.map { .int($0) } ?? "timeout"
        _ = try await testRoute(
            "POST",
            "faults",
            body: JSON.object([.init("webhooks", ["fail_next": .int(count), "status": how])]).text
        )
    }

    /// The next `count` hook calls (section 30) fail with `status` (nil: a timeout after the
    /// hook's `timeout_ms`) without reaching the hook; `settings.hooks.on_error` applies.
    public func failHooks(next count: Int, status: Int? = 500) async throws {
        let how: JSON = status.map { .int($0) } ?? "timeout"
        _ = try await testRoute(
            "POST",
            "faults",
            body: JSON.object([.init("hooks", ["fail_next": .int(count), "status": how])]).text
        )
    }

    /// The journal of `room`'s latest session (`GET /v2/test/journal`): one
    /// JSON object per event — `call`, `answer`, `push`, `webhook` — in
    /// order; write it to a file for `roomd replay FILE --against URL`.
    public func journal(room: String) async throws -> [JSON] {
        let text = try await testText(
            "journal?room_id=\(room.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? room)"
        )
        return try text.split(separator: "\n").map { try JSON.parse(Array($0.utf8)) }
    }

    /// Ends every fault now (`DELETE /v2/test/faults`).
    public func clearFaults() async throws {
        _ = try await testRoute("DELETE", "faults", body: nil)
    }

    private static func millis(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }

    private static func now(_ answer: JSON) throws -> Int64 {
        guard let now = answer["now"]?.intValue else { throw RoomdProcessError(description: "no now in \(answer)") }
        return Int64(now)
    }

    private func moveClock(_ body: String) async throws -> Int64 {
        try Self.now(try await testRoute("POST", "clock", body: body))
    }

    private func testText(_ route: String) async throws -> String {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v2/test/\(route)")!)
        request.setValue("Bearer \(try tokens.managementToken())", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        let text = String(decoding: data, as: UTF8.self)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw RoomdProcessError(description: "GET /v2/test/\(route): \(text)")
        }
        return text
    }

    private func testRoute(_ method: String, _ route: String, body: String?) async throws -> JSON {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v2/test/\(route)")!)
        request.httpMethod = method
        request.setValue("Bearer \(try tokens.managementToken())", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200, let json = try? JSON.parse(Array(data)) else {
            throw RoomdProcessError(
                description: "\(method) /v2/test/\(route): \(status) \(String(decoding: data, as: UTF8.self))"
            )
        }
        return json
    }
}

/// A fault `RoomdProcess.inject(_:into:)` injects (PROTOCOL.md section 25).
public enum Fault: Sendable, Equatable {
    /// The connection closes: 1006 drops it without a close frame (a lost
    /// network: the reconnect grace follows), another code sends that code.
    case close(code: Int = 1006)
    /// roomd neither reads nor writes the socket for that long: its queue
    /// grows, and past the outbound limit it is a 4008 slow consumer.
    case stall(Duration)
    /// Pushes to the peer are held for that long, then delivered in order.
    case delay(Duration)
    /// The next `count` pushes to the peer are discarded (counted in /metrics).
    case drop(count: Int)
}

/// Whose connections a fault hits.
public enum FaultTarget: Sendable, Equatable {
    case peer(String)
    /// Every connection of the user.
    case user(String)

    var member: JSON.Member {
        switch self {
        case .peer(let id): .init("peer_id", .string(id))
        case .user(let id): .init("user_id", .string(id))
        }
    }
}
