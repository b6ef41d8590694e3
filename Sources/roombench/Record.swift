import Foundation
import RoomWire

/// One result: an ordered JSON object (written as one line of JSON) plus the
/// human table line printed to stdout.
struct Record {
    private(set) var members: [JSON.Member] = []

    subscript(key: String) -> JSON? {
        get { members.last { $0.key == key }?.value }
        set {
            members.removeAll { $0.key == key }
            if let newValue { members.append(.init(key, newValue)) }
        }
    }

    mutating func set(_ key: String, _ value: String) { self[key] = .string(value) }
    mutating func set(_ key: String, _ value: Int) { self[key] = .int(value) }
    mutating func set(_ key: String, _ value: Bool) { self[key] = .bool(value) }
    mutating func set(_ key: String, _ value: Double, digits: Int = 2) {
        self[key] = .number(Self.format(value, digits))
    }
    mutating func set(_ key: String, counts: [Int: Int]) {
        self[key] = .object(counts.keys.sorted().map { JSON.Member(String($0), .int(counts[$0]!)) })
    }

    var json: JSON { .object(members) }

    static func format(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "0" }
        return String(format: "%.\(digits)f", value)
    }

    /// Appends the record as one JSON line to `path`.
    func append(to path: String) throws {
        var line = json.bytes
        line.append(UInt8(ascii: "\n"))
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        guard let handle = FileHandle(forWritingAtPath: path) else { throw BenchError("cannot write \(path)") }
        defer { try? handle.close() }
        handle.seekToEndOfFile()
        handle.write(Data(line))
    }
}

/// Latency figures of a histogram, in milliseconds.
extension Record {
    mutating func setLatency(_ histogram: Histogram, prefix: String = "") {
        set(prefix + "samples", Int(histogram.total))
        set(prefix + "p50_ms", Double(histogram.value(atQuantile: 0.50)) / 1000, digits: 3)
        set(prefix + "p99_ms", Double(histogram.value(atQuantile: 0.99)) / 1000, digits: 3)
        set(prefix + "p999_ms", Double(histogram.value(atQuantile: 0.999)) / 1000, digits: 3)
        set(prefix + "max_ms", Double(histogram.total == 0 ? 0 : histogram.max) / 1000, digits: 3)
    }
}

/// Human-readable numbers.
enum Fmt {
    /// 1234567 -> "1,234,567"
    static func int(_ value: Int) -> String {
        let digits = String(abs(value))
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return value < 0 ? "-" + out : out
    }

    static func int(_ value: Double) -> String { int(Int(value.rounded())) }

    static func ms(_ value: Double) -> String {
        if value >= 100 { return String(format: "%.0f ms", value) }
        if value >= 10 { return String(format: "%.1f ms", value) }
        return String(format: "%.2f ms", value)
    }

    static func pct(_ value: Double) -> String { String(format: "%.0f%%", value) }

    static func mib(kib: Int) -> String { String(format: "%.1f MiB", Double(kib) / 1024) }
}

/// The calls a scenario sent and how the server answered them.
class CallCounts {
    var sent = 0
    var acked = 0
    var rejected = 0
    /// Rejections by error code.
    var errors: [Int: Int] = [:]

    /// Tallies one answer: an error code, or nil for a result.
    func answered(error: Int?) {
        if let error {
            rejected += 1
            errors[error, default: 0] += 1
        } else {
            acked += 1
        }
    }
}

extension Record {
    /// `sent`, and for roomd (answers exist only there) `acked`, `rejected`, `errors`.
    mutating func set(calls: CallCounts, raw: Bool) {
        set("sent", calls.sent)
        if !raw {
            set("acked", calls.acked)
            set("rejected", calls.rejected)
            set("errors", counts: calls.errors)
        }
    }
}
