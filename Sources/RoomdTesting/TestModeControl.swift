import Foundation
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
        let millis = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return try await moveClock(#"{"advance_ms":\#(millis)}"#)
    }

    /// Sets the manual clock to `millis` (ms since the epoch, not before its time now).
    @discardableResult
    public func setClock(toMillis millis: Int64) async throws -> Int64 {
        try await moveClock(#"{"set_ms":\#(millis)}"#)
    }

    /// The manual clock's time (ms since the epoch).
    public func clockMillis() async throws -> Int64 {
        try await testRoute("GET", "clock", body: nil)
    }

    private func moveClock(_ body: String) async throws -> Int64 {
        try await testRoute("POST", "clock", body: body)
    }

    private func testRoute(_ method: String, _ route: String, body: String?) async throws -> Int64 {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v2/test/\(route)")!)
        request.httpMethod = method
        request.setValue("Bearer \(try tokens.managementToken())", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let json = try? JSON.parse(Array(data))
        guard status == 200, let now = json?["now"]?.intValue else {
            throw RoomdProcessError(
                description: "\(method) /v2/test/\(route): \(status) \(String(decoding: data, as: UTF8.self))"
            )
        }
        return Int64(now)
    }
}
