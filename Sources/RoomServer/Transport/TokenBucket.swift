/// Per-connection rate limit: `rate` calls per second with bursts up to `burst`.
struct TokenBucket {
    let rate: Double
    let burst: Double
    private var tokens: Double
    private var lastMillis: Int64

    init(rate: Int, burst: Int, nowMillis: Int64) {
        self.rate = Double(rate)
        self.burst = Double(burst)
        self.tokens = Double(burst)
        self.lastMillis = nowMillis
    }

    /// Takes one token if there is one.
    mutating func take(nowMillis: Int64) -> Bool {
        if nowMillis > lastMillis {
            tokens = min(burst, tokens + Double(nowMillis - lastMillis) * rate / 1000)
            lastMillis = nowMillis
        }
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
