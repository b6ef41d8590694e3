/// A log-linear latency histogram in microseconds (HdrHistogram's layout with
/// 1024 sub-buckets: values below 2048 µs are exact, larger ones are kept to
/// within 0.1 %). Fixed size (~34k counters), O(1) record, no allocation on
/// the hot path. Loop thread only.
struct Histogram {
    private static let subBuckets = 1024
    private static let exactLimit: UInt64 = 2048
    private static let bucketCount = 2048 + 54 * 1024

    private var counts = [UInt64](repeating: 0, count: Histogram.bucketCount)
    private(set) var total: UInt64 = 0
    private(set) var max: UInt64 = 0
    private(set) var min: UInt64 = .max
    private var sum: Double = 0

    mutating func reset() {
        for index in counts.indices { counts[index] = 0 }
        total = 0
        max = 0
        min = .max
        sum = 0
    }

    @inline(__always)
    mutating func record(_ micros: UInt64) {
        counts[Self.index(of: micros)] &+= 1
        total &+= 1
        sum += Double(micros)
        if micros > max { max = micros }
        if micros < min { min = micros }
    }

    mutating func merge(_ other: Histogram) {
        for index in counts.indices { counts[index] &+= other.counts[index] }
        total &+= other.total
        sum += other.sum
        if other.max > max { max = other.max }
        if other.min < min { min = other.min }
    }

    var mean: Double { total == 0 ? 0 : sum / Double(total) }

    /// The value at quantile `q` (0...1): the upper edge of its bucket, never above `max`.
    func value(atQuantile q: Double) -> UInt64 {
        guard total > 0 else { return 0 }
        let rank = Swift.max(1, UInt64((q * Double(total)).rounded(.up)))
        var seen: UInt64 = 0
        for index in counts.indices where counts[index] > 0 {
            seen += counts[index]
            if seen >= rank { return Swift.min(Self.upperEdge(of: index), max) }
        }
        return max
    }

    @inline(__always)
    static func index(of value: UInt64) -> Int {
        if value < exactLimit { return Int(value) }
        let bits = 63 - value.leadingZeroBitCount  // >= 11
        let shift = bits - 10
        let index = 2048 + (bits - 11) * subBuckets + Int(value >> UInt64(shift)) - subBuckets
        return Swift.min(index, bucketCount - 1)
    }

    static func upperEdge(of index: Int) -> UInt64 {
        if index < Int(exactLimit) { return UInt64(index) }
        let block = (index - 2048) / subBuckets
        let offset = (index - 2048) % subBuckets
        let shift = UInt64(block + 1)
        return (UInt64(subBuckets + offset + 1) << shift) - 1
    }
}
