import ArgumentParser
import Foundation

struct Speakers: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "speakers",
        abstract:
            "(e) Active speakers: a room of N with K guests reporting audio levels; active-speakers pushes and the tick's cost.",
        discussion: """
            K guests (each with one audio track, `track-add` first) and N − K viewers join one room. Three \
            windows follow, each with a fresh CPU sample of the server: idle (nobody calls anything), silent \
            (the speakers call `audio-level` at --rate Hz with a level below the threshold: calls handled, \
            ticks find no speaker, nothing is pushed) and speaking (varying levels above the threshold: every \
            tick changes the lists, so every peer gets `active-speakers`). The tick's cost is the server CPU \
            of the speaking window minus that of the silent one, per tick observed.
            """
    )

    @OptionGroup var target: TargetOptions
    @Option(help: "Peers in the room, speakers included.") var peers = 1000
    @Option(help: "Speakers (role guest, one audio track each); the others join as viewers.") var speakers = 10
    @Option(help: "audio-level calls per second per speaker.") var rate = 10.0
    @Option(help: "Seconds of the speaking window.") var window = 10.0
    @Option(help: "Seconds of the idle and of the silent window each.") var quietWindow = 5.0
    @Option(help: "Level reported in the silent window (below the template's threshold, 35 by default).")
    var silentLevel = 10
    @Option(help: "The template's settings.active_speakers.interval_ms (only for the expected tick count).")
    var intervalMs = 1000

    func run() throws {
        try exitOnError {
            guard !target.raw else { throw BenchError("speakers: roomd only (the mirror has no audio-level)") }
            guard speakers >= 1, peers > speakers, rate > 0, window > 0 else {
                throw BenchError("speakers: needs 1 ≤ --speakers < --peers, --rate > 0 and --window > 0")
            }
            let bench = try prepare(target, connections: peers)
            try bench.activeSpeakers(
                peers: peers,
                speakers: speakers,
                rate: rate,
                window: window,
                quietWindow: quietWindow,
                silentLevel: silentLevel,
                intervalMs: intervalMs,
                connectTimeout: target.connectTimeout,
                joinTimeout: target.joinTimeout
            )
        }
    }
}

extension Bench {
    // MARK: - (e) active speakers

    func activeSpeakers(
        peers count: Int,
        speakers speakerCount: Int,
        rate: Double,
        window: Double,
        quietWindow: Double,
        silentLevel: Int,
        intervalMs: Int,
        connectTimeout: Double,
        joinTimeout: Double
    ) throws {
        let conns = loop.makeConns(count)
        let speakers = Array(conns.prefix(speakerCount))
        let first = conns[0].index
        let identities = conns.map { conn in
            conn.index - first < speakerCount
                ? Identity(room: "speakers", user: "speaker-\(conn.index - first)", role: "guest")
                : Identity(room: "speakers", user: "viewer-\(conn.index - first)", role: "viewer")
        }
        let tokens = try mintTokens(identities)
        let (opened, _, connectSeconds) = loop.connectAll(conns, to: endpoint, timeout: connectTimeout)
        let join = joinAll(conns, tokens: tokens, timeout: joinTimeout)
        guard speakers.allSatisfy(\.joined) else { throw BenchError("speakers: not every speaker could join") }

        // One audio track per speaker (id 2), then let the on-track-add pushes settle.
        let trackCalls = CallCounts()
        loop.onResponse = { _, id, error in
            guard id == 2 else { return }
            trackCalls.answered(error: error)
        }
        for speaker in speakers {
            speaker.nextCallID = 3
            loop.send(
                speaker,
                #"{"jsonrpc":"2.0","id":2,"method":"track-add","params":{"track_id":"audio-\#(speaker.index - first)","type":"audio"}}"#
            )
        }
        loop.run(until: monoNanos() + 10_000_000_000) { trackCalls.acked + trackCalls.rejected < speakerCount }
        loop.onResponse = nil
        guard trackCalls.acked == speakerCount else {
            throw BenchError("speakers: track-add failed (\(describe(trackCalls.errors)))")
        }
        loop.runUntilQuiet(quiet: 0.5, timeout: 20)
        print(
            "speakers    \(label): connected \(opened) in " + String(format: "%.2f s", connectSeconds)
                + ", \(join.joined) joined in " + String(format: "%.2f s", join.seconds)
                + ", \(speakerCount) audio tracks"
        )

        let loop = self.loop
        loop.watchedMethod = "active-speakers"
        defer { loop.watchedMethod = nil }

        /// One window: `speakers` call audio-level at `rate` Hz (message j leaves
        /// speaker j mod K at j ÷ (K × rate) s) with `level(speaker, j)`, or nobody calls.
        struct Window {
            var server0: ProcSample?
            var server1: ProcSample?
            var client0: ProcSample
            var client1: ProcSample
            var calls: CallCounts
            var seconds: Double
            /// The server's CPU time in ns (all threads, schedstat) at both ends, when available.
            var cpuNs0: UInt64?
            var cpuNs1: UInt64?
            /// CPU seconds the server used in the window: from schedstat (ns), else from /proc/PID/stat (10 ms ticks).
            var serverCPUSeconds: Double? {
                if let a = cpuNs0, let b = cpuNs1, b >= a { return Double(b - a) / 1e9 }
                return server0.flatMap { s0 in server1.map { $0.cpuSeconds - s0.cpuSeconds } }
            }
            var serverCPU: Double? { serverCPUSeconds.map { $0 / max(seconds, 1e-9) * 100 } }
            /// (time, server CPU ns) about every millisecond, while levels are sent.
            var cpuSamples: [(at: UInt64, cpu: UInt64)] = []
        }
        let paths = options.serverPID.map { ProcStats.schedstatPaths(pid: $0) } ?? []
        let cpuNanos = { ProcStats.cpuNanos(paths) }
        func measure(_ seconds: Double, level: ((Int, Int) -> Int)?) -> Window {
            final class Samples { var list: [(at: UInt64, cpu: UInt64)] = [] }
            let samples = Samples()
            samples.list.reserveCapacity(Int(seconds * 1200))
            loop.resetCounters()
            for conn in conns { conn.watchedIn = 0 }
            let calls = CallCounts()
            loop.onResponse = { conn, id, error in
                guard id >= 3, conn.index - first < speakerCount else { return }
                calls.answered(error: error)
            }
            let total = level == nil ? 0 : Int(Double(speakerCount) * rate * seconds)
            let server0 = serverSample()
            let cpuNs0 = cpuNanos()
            let client0 = ProcStats.selfSample()
            let start = monoNanos()
            if let level {
                loop.onTick = { now in
                    if let cpu = cpuNanos() { samples.list.append((now, cpu)) }
                    let due = min(total, Int(Double(now - start) / 1e9 * Double(speakerCount) * rate))
                    while calls.sent < due {
                        let j = calls.sent
                        let speaker = speakers[j % speakerCount]
                        let s = speaker.index - first
                        let id = speaker.nextCallID
                        speaker.nextCallID += 1
                        loop.send(
                            speaker,
                            #"{"jsonrpc":"2.0","id":\#(id),"method":"audio-level","params":{"levels":[{"track_id":"audio-\#(s)","level":\#(level(s, j / speakerCount))}]}}"#
                        )
                        calls.sent += 1
                    }
                }
            }
            loop.run(until: start + UInt64(seconds * 1e9)) { true }
            loop.onTick = nil
            let cpuNs1 = cpuNanos()
            let end = monoNanos()
            let server1 = serverSample()
            let client1 = ProcStats.selfSample()
            loop.onResponse = nil
            return Window(
                server0: server0,
                server1: server1,
                client0: client0,
                client1: client1,
                calls: calls,
                seconds: Double(end - start) / 1e9,
                cpuNs0: cpuNs0,
                cpuNs1: cpuNs1,
                cpuSamples: samples.list
            )
        }

        let idle = measure(quietWindow, level: nil)
        let idleCounters = loop.counters
        let silent = measure(quietWindow, level: { _, _ in silentLevel })
        let silentCounters = loop.counters
        // Levels 36...100 (above the default threshold of 35), a different mix every report.
        let speaking = measure(window) { s, j in
            var x = UInt64(s &+ 1) &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(j &+ 1) &* 0xBF58_476D_1CE4_E5B9
            x ^= x >> 31
            return 36 + Int(x % 65)
        }
        let c = loop.counters
        let receivers = conns.filter { $0.phase == .open && $0.joined }
        let perPeer = receivers.map(\.watchedIn)

        // Ticks: arrivals of active-speakers grouped by gaps over a quarter of the interval.
        let arrivals = c.watchedArrivalsNs
        var ticks: [(first: UInt64, last: UInt64, count: Int)] = []
        let gap = UInt64(max(intervalMs, 4)) * 1_000_000 / 4
        for at in arrivals {
            if let lastTick = ticks.last, at - lastTick.last < gap {
                ticks[ticks.count - 1].last = at
                ticks[ticks.count - 1].count += 1
            } else {
                ticks.append((at, at, 1))
            }
        }
        let spreads = ticks.map { Double($0.last - $0.first) / 1e6 }.sorted()
        let tickCount = ticks.count

        // The tick's own cost, from the millisecond CPU samples: roomd's CPU in each tick's burst
        // (from 20 ms before its first push arrives to 5 ms after its last) minus what roomd used
        // at its rate outside the bursts (handling the audio-level calls) over the same time.
        var burstCPU: [Double] = []  // ms of CPU per tick
        let cpuSeries = speaking.cpuSamples
        if cpuSeries.count > 10, let firstSample = cpuSeries.first, let lastSample = cpuSeries.last {
            func cpu(at time: UInt64) -> Double {  // linear between the neighbouring samples
                guard let after = cpuSeries.firstIndex(where: { $0.at >= time }) else { return Double(lastSample.cpu) }
                guard after > 0 else { return Double(firstSample.cpu) }
                let a = cpuSeries[after - 1]
                let b = cpuSeries[after]
                let f = b.at > a.at ? Double(time - a.at) / Double(b.at - a.at) : 1
                return Double(a.cpu) + f * (Double(b.cpu) - Double(a.cpu))
            }
            let bursts = ticks.compactMap { tick -> (Double, Double)? in
                let from = tick.first - 20_000_000
                let to = tick.last + 5_000_000
                guard from >= firstSample.at, to <= lastSample.at else { return nil }  // whole burst inside the samples
                return (cpu(at: to) - cpu(at: from), Double(to - from))
            }
            let totalCPU = Double(lastSample.cpu - firstSample.cpu)
            let totalTime = Double(lastSample.at - firstSample.at)
            let inBursts = bursts.reduce(0) { $0 + $1.0 }
            let burstTime = bursts.reduce(0) { $0 + $1.1 }
            if !bursts.isEmpty, totalTime > burstTime {
                let rateOutside = (totalCPU - inBursts) / (totalTime - burstTime)  // CPU ns per ns
                burstCPU = bursts.map { max(0, $0.0 - rateOutside * $0.1) / 1e6 }
            }
        }
        let expectedTicks = speaking.seconds * 1000 / Double(max(intervalMs, 1))

        var record = baseRecord("speakers")
        record.set("peers", count)
        record.set("speakers", speakerCount)
        record.set("connected", opened)
        record.set("joined", join.joined)
        record.set("join_failed", join.failed)
        record.set("level_rate_hz", rate, digits: 1)
        record.set("interval_ms", intervalMs)
        record.set("window_s", speaking.seconds, digits: 2)
        record.set("quiet_window_s", idle.seconds, digits: 2)
        record.set("level_calls", speaking.calls.sent)
        record.set("level_calls_acked", speaking.calls.acked)
        record.set("level_calls_rejected", speaking.calls.rejected)
        record.set("level_errors", counts: speaking.calls.errors)
        record.set("level_calls_per_s", Double(speaking.calls.sent) / speaking.seconds, digits: 1)
        record.set("pushes", c.watched)
        record.set("push_bytes_mean", Double(c.watchedBytes) / Double(max(c.watched, 1)), digits: 0)
        record.set("pushes_per_s", Double(c.watched) / speaking.seconds, digits: 0)
        record.set("receivers", receivers.count)
        record.set("ticks_observed", tickCount)
        record.set("ticks_expected", expectedTicks, digits: 1)
        let perPeerPerTick = Double(c.watched) / Double(max(receivers.count, 1)) / Double(max(tickCount, 1))
        record.set("per_peer_per_tick", perPeerPerTick, digits: 3)
        record.set("per_peer_min", perPeer.min() ?? 0)
        record.set("per_peer_max", perPeer.max() ?? 0)
        if !spreads.isEmpty {
            record.set("tick_spread_p50_ms", spreads[spreads.count / 2], digits: 2)
            record.set("tick_spread_max_ms", spreads.last!, digits: 2)
        }
        record.set("silent_pushes", silentCounters.watched)
        record.set("idle_pushes", idleCounters.watched)
        record.set("silent_level_calls", silent.calls.sent)
        record.set("silent_level_calls_acked", silent.calls.acked)
        if let cpu = idle.serverCPU { record.set("server_cpu_idle_pct", cpu, digits: 1) }
        if let cpu = silent.serverCPU { record.set("server_cpu_silent_pct", cpu, digits: 1) }
        if let cpu = speaking.serverCPU { record.set("server_cpu_speaking_pct", cpu, digits: 1) }
        // CPU per tick: the speaking window's CPU seconds minus the same length
        // of the silent (or the idle) window, per tick observed.
        func perTick(_ base: Window) -> Double? {
            guard let busy = speaking.serverCPUSeconds, let quiet = base.serverCPUSeconds, tickCount > 0 else {
                return nil
            }
            return (busy - quiet / base.seconds * speaking.seconds) / Double(tickCount) * 1000
        }
        if !burstCPU.isEmpty {
            let sorted = burstCPU.sorted()
            record.set("tick_burst_cpu_ms", burstCPU.reduce(0, +) / Double(burstCPU.count), digits: 2)
            record.set("tick_burst_cpu_p50_ms", sorted[sorted.count / 2], digits: 2)
            record.set("tick_burst_cpu_max_ms", sorted.last!, digits: 2)
            record.set("tick_bursts", burstCPU.count)
            record.set("cpu_samples", cpuSeries.count)
        }
        if let ms = perTick(silent) { record.set("tick_cpu_ms", ms, digits: 2) }
        if let ms = perTick(idle) { record.set("tick_cpu_vs_idle_ms", ms, digits: 2) }
        record.set("server_cpu_source", speaking.cpuNs0 != nil && speaking.cpuNs1 != nil ? "schedstat" : "stat")
        addCommon(&record, server: speaking.server0, speaking.server1, client: speaking.client0, speaking.client1)

        let cpu = { (w: Window) in w.serverCPU.map { Fmt.pct($0) } ?? "?" }
        let line =
            "speakers    \(label): \(Fmt.int(count)) peers, \(speakerCount) speakers at "
            + String(format: "%.0f", rate) + " Hz: \(Fmt.int(c.watched)) active-speakers in "
            + String(format: "%.1f s", speaking.seconds)
            + " = \(Fmt.int(Double(c.watched) / speaking.seconds))/s, "
            + String(format: "%.2f", perPeerPerTick) + " per peer per tick (\(tickCount) ticks)"
            + "  server CPU idle \(cpu(idle)) silent \(cpu(silent)) speaking \(cpu(speaking))"
            + (burstCPU.isEmpty
                ? "" : String(format: "  tick %.2f ms CPU (burst)", burstCPU.reduce(0, +) / Double(burstCPU.count)))
            + (perTick(silent).map { String(format: ", %.2f ms (vs silent)", $0) } ?? "")
            + (speaking.calls.rejected > 0 ? "  rejected \(describe(speaking.calls.errors))" : "")
            + (loop.closeCodes.isEmpty ? "" : "  closes \(describe(loop.closeCodes))")
        try emit(record, line: line)
    }
}
