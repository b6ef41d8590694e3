/// `--test-mode` (PROTOCOL.md section 25): what a harness controls. Never
/// in production: roomd refuses it on a non-loopback `--host`.
public struct TestMode: Sendable, Equatable {
    /// `--clock manual`: the daemon's clock starts here (ms since the epoch)
    /// and moves only by `POST /v2/test/clock`; nil: the system clock.
    public var clockStart: Int64?
    /// `--seed N`: every server id drawn from one stream seeded with N
    /// (`SeededIDGenerator`); nil: random ids.
    public var seed: UInt64?

    public init(clockStart: Int64? = nil, seed: UInt64? = nil) {
        self.clockStart = clockStart
        self.seed = seed
    }

    /// The most one `POST /v2/test/clock` may move the clock: 100 years.
    public static let maxAdvanceMillis: Int = 100 * 366 * 24 * 3_600_000
}
