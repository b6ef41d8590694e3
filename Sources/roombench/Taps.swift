import ArgumentParser
import Foundation

struct Taps: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "taps",
        abstract:
            "(i) Reactions: N viewers tapping the stream for --duration s; react answer latency, on-reactions per peer per interval, CPU per tap.",
        discussion: """
            N viewers join one room (large-room mode above 1,000 peers). Then every viewer sends `react \
            {target:"stream", type:"like", count:C}` --calls-per-s times a second for --duration seconds, the \
            calls of all viewers spread evenly over time (viewer k's calls are N / rate apart, offset by k). \
            --calls-per-s 5 --count 1 is a viewer whose client sends every tap; --calls-per-s 1 --count 5 is one \
            whose client adds up a second of taps into one call (section 20 allows 1..50). Reported: calls \
            answered and their latency, the server's CPU per tap (CPU over the tap phase ÷ taps), the \
            `on-reactions` each peer received per interval and the shortest time between two at any peer (at \
            least the interval when roomd keeps to one per peer per interval), and the bytes each peer \
            received per second (all of them, and those of on-reactions).
            """
    )

    @OptionGroup var target: TargetOptions
    @Option(help: "Viewers in the room, every one tapping.") var peers = 10000
    @Option(help: "react calls per viewer per second.") var callsPerS = 5.0
    @Option(help: "Taps per react call (1...50).") var count = 1
    @Option(help: "Seconds of tapping.") var duration = 30.0
    @Option(help: "Seconds allowed after the last call for answers and the last on-reactions.") var drain = 3.0
    @Option(help: "The template's settings.reactions.interval_ms (recorded with the results).")
    var intervalMs = 1000
    @Option(
        help: ArgumentHelp(
            "Also write a timeline to this file: per 100 ms of send time: answers, the slowest (µs), those over 50 ms, roombench's longest loop gap (µs).",
            discussion: "Finds stalls a histogram only sums up: which 100 ms the slow answers were sent in.",
            valueName: "path"
        )
    )
    var timeline: String?

    func run() throws {
        try exitOnError {
            guard !target.raw else { throw BenchError("taps: roomd only") }
            guard peers >= 1, callsPerS > 0, (1...50).contains(count), duration > 0, drain >= 0 else {
                throw BenchError("taps: needs --peers ≥ 1, --calls-per-s > 0, --count 1...50, --duration > 0")
            }
            let bench = try prepare(target, connections: peers)
            try bench.taps(
                peers: peers,
                callsPerS: callsPerS,
                count: count,
                duration: duration,
                drain: drain,
                intervalMs: intervalMs,
                timeline: timeline,
                connectTimeout: target.connectTimeout,
                joinTimeout: target.joinTimeout
            )
        }
    }
}

extension Bench {
    // MARK: - (i) reactions

    /// `count` viewers of one room, connected and joined; throws unless all of them joined.
    func crowd(
        room: String,
        count: Int,
        role: String = "viewer",
        connectTimeout: Double,
        joinTimeout: Double
    ) throws -> (conns: [BenchConn], summary: String) {
        let conns = loop.makeConns(count)
        let first = conns.first?.index ?? 0
        let tokens = try mintTokens(
            conns.map { Identity(room: room, user: "\(role)-\($0.index - first)", role: role) }
        )
        let (opened, _, connectSeconds) = loop.connectAll(conns, to: endpoint, timeout: connectTimeout)
        let join = joinAll(conns, tokens: tokens, timeout: joinTimeout)
        loop.runUntilQuiet(quiet: 0.5, timeout: 30)
        guard join.joined == count else {
            throw BenchError(
                "\(room): \(opened)/\(count) connected, \(join.joined) joined (errors \(describe(join.errorCodes)))"
            )
        }
        return (
            conns,
            "connected \(Fmt.int(opened)) in " + String(format: "%.2f s", connectSeconds)
                + ", \(Fmt.int(join.joined)) joined in "
                + String(format: "%.2f s", join.seconds)
        )
    }

    func taps(
        peers count: Int,
        callsPerS: Double,
        count taps: Int,
        duration: Double,
        drain: Double,
        intervalMs: Int,
        timeline: String? = nil,
        connectTimeout: Double,
        joinTimeout: Double
    ) throws {
        let (conns, joined) = try crowd(
            room: "taps",
            count: count,
            connectTimeout: connectTimeout,
            joinTimeout: joinTimeout
        )
        print("taps        \(label): \(joined)")
        let first = conns[0].index
        let loop = self.loop
        loop.watch("on-reactions", on: conns)
        defer { loop.watchedMethod = nil }

        // Send times by (viewer, call id mod 16): a viewer has one call in flight
        // unless answers take longer than 16 of its call intervals.
        final class State {
            var sentNs: [UInt64]
            var latency = Histogram()
            var lastAnswer: UInt64 = 0
            /// Per 100 ms of send time (--timeline): answers, their slowest latency (µs), those over 50 ms.
            var buckets: [(answers: Int, maxUs: UInt64, over50ms: Int)] = []
            /// Per 100 ms (--timeline): the longest gap between two turns of roombench's own loop (µs).
            var gaps: [UInt64] = []
            var lastTick: UInt64 = 0
            init(_ n: Int) { sentNs = Array(repeating: 0, count: n * 16) }
        }
        let state = State(count)
        let calls = CallCounts()
        let total = max(1, Int(Double(count) * callsPerS * duration))
        let rate = Double(count) * callsPerS
        let paths = options.serverPID.map { ProcStats.schedstatPaths(pid: $0) } ?? []
        let server0 = serverSample()
        let cpu0 = ProcStats.cpuNanos(paths)
        let client0 = ProcStats.selfSample()
        let start = monoNanos()
        loop.onResponse = { conn, id, error in
            guard id >= 2 else { return }
            let now = monoNanos()
            calls.answered(error: error)
            state.lastAnswer = now
            let sent = state.sentNs[(conn.index - first) * 16 + id % 16]
            if error == nil, sent != 0 {
                let micros = (now - sent) / 1000
                state.latency.record(micros)
                if timeline != nil, sent >= start {
                    let bucket = Int((sent - start) / 100_000_000)
                    while state.buckets.count <= bucket { state.buckets.append((0, 0, 0)) }
                    state.buckets[bucket].answers += 1
                    state.buckets[bucket].maxUs = max(state.buckets[bucket].maxUs, micros)
                    if micros > 50_000 { state.buckets[bucket].over50ms += 1 }
                }
            }
        }
        loop.onTick = { now in
            if timeline != nil, now >= start {
                let bucket = Int((now - start) / 100_000_000)
                while state.gaps.count <= bucket { state.gaps.append(0) }
                if state.lastTick != 0 { state.gaps[bucket] = max(state.gaps[bucket], (now - state.lastTick) / 1000) }
                state.lastTick = now
            }
            let due = min(total, Int(Double(now - start) / 1e9 * rate) + 1)
            while calls.sent < due {
                let conn = conns[calls.sent % count]
                let id = conn.nextCallID
                conn.nextCallID += 1
                state.sentNs[(conn.index - first) * 16 + id % 16] = monoNanos()
                loop.send(
                    conn,
                    #"{"jsonrpc":"2.0","id":\#(id),"method":"react","params":{"target":"stream","type":"like","count":\#(taps)}}"#
                )
                calls.sent += 1
            }
        }
        loop.run(until: start + UInt64((duration + drain) * 1e9)) { calls.acked + calls.rejected < total }
        loop.onTick = nil
        let cpuTaps = ProcStats.cpuNanos(paths)
        let tapsDone = monoNanos()
        // The last on-reactions (at most one interval after the last tap).
        loop.run(until: tapsDone + UInt64(Double(intervalMs) * 1.5e6)) { true }
        let end = monoNanos()
        let server1 = serverSample()
        let client1 = ProcStats.selfSample()
        loop.onResponse = nil

        let c = loop.counters
        let receivers = conns.filter { $0.phase == .open && $0.joined }
        let perPeer = receivers.map(\.watchedIn)
        let seconds = Double(end - start) / 1e9
        let tapSeconds = Double(max(state.lastAnswer, start + 1) - start) / 1e9
        let intervals = seconds * 1000 / Double(intervalMs)
        let perPeerPerInterval = Double(c.watched) / Double(max(receivers.count, 1)) / intervals
        let minGapNs = receivers.map(\.watchedMinGapNs).min() ?? .max
        let minGapMs: Double? = minGapNs == .max ? nil : Double(minGapNs) / 1e6
        let cpuSeconds = cpu0.flatMap { a in cpuTaps.map { Double($0 - a) / 1e9 } }
        let tapsAnswered = calls.acked * taps

        var record = baseRecord("taps")
        record.set("peers", count)
        record.set("calls_per_peer_per_s", callsPerS, digits: 2)
        record.set("taps_per_call", taps)
        record.set("duration_s", duration, digits: 1)
        record.set("calls_offered", total)
        record.set("calls_sent", calls.sent)
        record.set("calls_acked", calls.acked)
        record.set("calls_rejected", calls.rejected)
        record.set("call_errors", counts: calls.errors)
        record.set("calls_offered_per_s", rate, digits: 0)
        record.set("calls_per_s", Double(calls.acked) / tapSeconds, digits: 0)
        record.set("taps_per_s", Double(tapsAnswered) / tapSeconds, digits: 0)
        record.set("tap_phase_s", tapSeconds, digits: 2)
        record.setLatency(state.latency, prefix: "react_")
        if let cpu = cpuSeconds {
            record.set("server_cpu_tap_phase_s", cpu, digits: 3)
            record.set("server_cpu_pct_tap_phase", cpu / max(tapSeconds, 1e-9) * 100, digits: 1)
            record.set("server_cpu_us_per_tap", cpu * 1e6 / Double(max(tapsAnswered, 1)), digits: 2)
            record.set("server_cpu_us_per_call", cpu * 1e6 / Double(max(calls.acked, 1)), digits: 2)
        }
        record.set("interval_ms", intervalMs)
        record.set("receivers", receivers.count)
        record.set("reactions_pushes", c.watched)
        record.set("reactions_push_bytes_mean", Double(c.watchedBytes) / Double(max(c.watched, 1)), digits: 0)
        record.set("reactions_per_peer_per_interval", perPeerPerInterval, digits: 3)
        if let minGapMs { record.set("reactions_min_gap_ms", minGapMs, digits: 1) }
        record.set("reactions_per_peer_min", perPeer.min() ?? 0)
        record.set("reactions_per_peer_max", perPeer.max() ?? 0)
        let bytesPerPeerPerS = Double(c.bytesIn) / Double(max(receivers.count, 1)) / seconds
        record.set("bytes_per_peer_per_s", bytesPerPeerPerS, digits: 0)
        record.set(
            "reactions_bytes_per_peer_per_s",
            Double(c.watchedBytes) / Double(max(receivers.count, 1)) / seconds,
            digits: 0
        )
        addCommon(&record, server: server0, server1, client: client0, client1)

        if let timeline {
            let lines = state.buckets.enumerated().map { index, bucket in
                "\(index * 100) \(bucket.answers) \(bucket.maxUs) \(bucket.over50ms) "
                    + "\(index < state.gaps.count ? state.gaps[index] : 0)"
            }
            try
                ("# start (monotonic ms mod 100,000): \(start / 1_000_000 % 100_000)\nt_ms answers max_us over_50ms client_gap_us\n"
                + lines.joined(separator: "\n") + "\n")
                .write(toFile: timeline, atomically: true, encoding: .utf8)
        }
        let p99 = Double(state.latency.value(atQuantile: 0.99)) / 1000
        let line =
            "taps        \(label): \(Fmt.int(count)) viewers × \(callsPerS)/s × \(taps) tap(s): "
            + "\(Fmt.int(calls.acked))/\(Fmt.int(total)) react answered in " + String(format: "%.2f s", tapSeconds)
            + " (\(Fmt.int(Double(tapsAnswered) / tapSeconds)) taps/s"
            + (cpuSeconds.map { String(format: ", server %.2f µs CPU/tap", $0 * 1e6 / Double(max(tapsAnswered, 1))) }
                ?? "")
            + "), p50 \(Fmt.ms(Double(state.latency.value(atQuantile: 0.5)) / 1000)) p99 \(Fmt.ms(p99))"
            + String(format: "; on-reactions %.3f per peer per interval", perPeerPerInterval)
            + (minGapMs.map { String(format: ", ≥ %.0f ms apart", $0) } ?? "")
            + "; \(Fmt.int(bytesPerPeerPerS)) B/peer/s"
            + (calls.rejected > 0 ? "  rejected \(describe(calls.errors))" : "")
            + (loop.closeCodes.isEmpty ? "" : "  closes \(describe(loop.closeCodes))")
        try emit(record, line: line)
    }
}
