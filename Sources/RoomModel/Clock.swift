#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wall-clock milliseconds since the Unix epoch, injected so the model is
/// deterministic under test.
public protocol RoomClock: AnyObject {
    func nowMillis() -> Int64
}

public final class SystemClock: RoomClock {
    public init() {}
    public func nowMillis() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}

/// A clock the test moves by hand.
public final class ManualClock: RoomClock {
    public var now: Int64
    public init(now: Int64 = 1_763_700_000_000) { self.now = now }
    public func nowMillis() -> Int64 { now }
    public func advance(byMillis millis: Int64) { now += millis }
}

/// Makes the opaque ids the server hands out (peer, session, message ids).
public protocol IDGenerator: AnyObject {
    func next(_ kind: IDKind) -> String
}

public enum IDKind: String, Sendable {
    case peer, session, message, track
    case roleChange = "rc"
    case iterator = "it"
    case poll, cue
    case question = "question"
    case stage
    case webhook
    case hook
    case report
}

/// Random 128-bit ids as 32 lowercase hex digits.
public final class RandomIDGenerator: IDGenerator {
    private var rng = SystemRandomNumberGenerator()
    public init() {}
    public func next(_ kind: IDKind) -> String {
        let high = rng.next() as UInt64
        let low = rng.next() as UInt64
        return hex(high) + hex(low)
    }

    private func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// `peer-1`, `peer-2`, `message-1`… for tests.
public final class SequentialIDGenerator: IDGenerator {
    private var counters: [IDKind: Int] = [:]
    public init() {}
    public func next(_ kind: IDKind) -> String {
        let value = counters[kind, default: 0] + 1
        counters[kind] = value
        return "\(kind.rawValue)-\(value)"
    }
}

/// Test mode's `--seed N` (PROTOCOL.md section 25): 128-bit ids as 32 hex
/// digits, like `RandomIDGenerator`'s, drawn from one splitmix64 stream
/// seeded with N, so every id is a function of N and the order of events.
public final class SeededIDGenerator: IDGenerator {
    private var stream: SplitMix64

    public init(seed: UInt64) { stream = SplitMix64(seed: seed) }

    public func next(_ kind: IDKind) -> String {
        hex(stream.next()) + hex(stream.next())
    }

    private func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

/// The splitmix64 stream (Steele, Lea and Flood): test mode's seeded ids,
/// and the synthetic audience's choice of who acts (PROTOCOL.md section 33).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
