import Foundation

/// Monotonic clock in nanoseconds (CLOCK_MONOTONIC, shared by every thread of
/// this process, so a timestamp written by the sender is comparable at a receiver).
@inline(__always)
func monoNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
}

/// CPU and memory of a process, from /proc (Linux only).
struct ProcSample {
    var nanos: UInt64
    /// user + system CPU time in seconds.
    var cpuSeconds: Double
    var rssKiB: Int
    var hwmKiB: Int
    /// CPU seconds used by the whole machine (all processes, all cores; /proc/stat), in `selfSample()` only.
    var machineBusySeconds: Double = 0
    /// CPU nanoseconds of each thread (by thread id), from schedstat.
    var threadNanos: [String: UInt64] = [:]

    /// Percent of one core used between two samples.
    func cpuPercent(since earlier: ProcSample) -> Double {
        let wall = Double(nanos &- earlier.nanos) / 1e9
        guard wall > 0 else { return 0 }
        return (cpuSeconds - earlier.cpuSeconds) / wall * 100
    }

    /// Percent of one core used by each thread that ran between two samples
    /// (≥ 0.5 %), busiest first: how a multi-threaded server spreads its work.
    func threadPercents(since earlier: ProcSample) -> [Double] {
        let wall = Double(nanos &- earlier.nanos)
        guard wall > 0 else { return [] }
        return threadNanos.compactMap { tid, ns -> Double? in
            let used = Double(ns &- (earlier.threadNanos[tid] ?? 0)) / wall * 100
            return used >= 0.5 ? used : nil
        }.sorted(by: >)
    }

    /// Percent of one core used by the whole machine between two samples.
    func machinePercent(since earlier: ProcSample) -> Double {
        let wall = Double(nanos &- earlier.nanos) / 1e9
        guard wall > 0 else { return 0 }
        return (machineBusySeconds - earlier.machineBusySeconds) / wall * 100
    }
}

enum ProcStats {
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// A sample of process `pid`, or nil if it is gone.
    static func sample(pid: Int32) -> ProcSample? {
        let now = monoNanos()
        guard let stat = read("/proc/\(pid)/stat"), let status = read("/proc/\(pid)/status") else { return nil }
        // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let utime = Double(fields[11]), let stime = Double(fields[12]) else { return nil }
        var threads: [String: UInt64] = [:]
        for tid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
            if let ns = cpuNanos(["/proc/\(pid)/task/\(tid)/schedstat"]) { threads[tid] = ns }
        }
        return ProcSample(
            nanos: now,
            cpuSeconds: (utime + stime) / ticksPerSecond,
            rssKiB: field(status, "VmRSS:"),
            hwmKiB: field(status, "VmHWM:"),
            threadNanos: threads
        )
    }

    /// CPU time (user + system) of every thread of `pid` in nanoseconds, from
    /// /proc/PID/task/*/schedstat: finer than /proc/PID/stat's 10 ms clock ticks.
    /// Nil if the process is gone or the kernel keeps no schedstat.
    static func cpuNanos(pid: Int32) -> UInt64? {
        cpuNanos(schedstatPaths(pid: pid))
    }

    /// /proc/PID/task/TID/schedstat of every thread `pid` has now.
    static func schedstatPaths(pid: Int32) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.map { "/proc/\(pid)/task/\($0)/schedstat" }
    }

    /// The summed first field (ns on CPU) of these schedstat files; nil if none could be read.
    /// Cheap enough to call every millisecond: one small read per thread.
    static func cpuNanos(_ paths: [String]) -> UInt64? {
        var total: UInt64 = 0
        var found = false
        var buffer = [UInt8](repeating: 0, count: 128)
        for path in paths {
            let fd = open(path, O_RDONLY)
            guard fd >= 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, 127) }
            close(fd)
            guard count > 0 else { continue }
            var ns: UInt64 = 0
            for byte in buffer.prefix(count) {
                guard byte >= 48, byte <= 57 else { break }
                ns = ns &* 10 &+ UInt64(byte - 48)
            }
            total += ns
            found = true
        }
        return found ? total : nil
    }

    /// This process (the load tool itself).
    static func selfSample() -> ProcSample {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let cpu =
            Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        let status = read("/proc/self/status") ?? ""
        return ProcSample(
            nanos: monoNanos(),
            cpuSeconds: cpu,
            rssKiB: field(status, "VmRSS:"),
            hwmKiB: field(status, "VmHWM:"),
            machineBusySeconds: machineBusy()
        )
    }

    /// Busy CPU time of the machine: the first line of /proc/stat minus idle and iowait.
    static func machineBusy() -> Double {
        guard let stat = read("/proc/stat"), let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ") else {
            return 0
        }
        let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard ticks.count >= 5 else { return 0 }
        let busy = ticks.prefix(8).reduce(0, +) - ticks[3] - ticks[4]  // user..steal, minus idle and iowait
        return busy / ticksPerSecond
    }

    private static func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    private static func field(_ status: String, _ name: String) -> Int {
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            let digits = line.dropFirst(name.count).filter { $0.isNumber }
            return Int(digits) ?? 0
        }
        return 0
    }
}
