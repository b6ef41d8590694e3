import ArgumentParser
import Foundation

/// Who the viewers of `synthetic` are.
enum AudienceMode: String, ExpressibleByArgument, CaseIterable {
    /// WebSocket clients of roombench that read every push.
    case real
    /// Test mode's synthetic audience (PROTOCOL.md section 33): socketless peers, each push counted and dropped.
    case synthetic
}

struct AudienceCost: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "synthetic",
        abstract:
            "(q) The same audience real and synthetic: a host broadcasting to N viewers, roomd's CPU per delivery.",
        discussion: """
            N viewers are in one room (large-room mode above 1,000 peers): with --mode real, N WebSocket \
            clients of roombench that join with tokens and read everything; with --mode synthetic, N peers of \
            test mode's synthetic audience added by `POST /v2/test/audience` (roomd started with --test-mode; \
            a management token minted with --secret-file). Then a host joins on a socket, --settle seconds go \
            by (the room-state tick the joins caused), and roomd's idle CPU is measured over --idle-window \
            seconds. The host then broadcasts a --message-bytes chat line to everyone --rate times a second \
            for --duration seconds. Over that window only (until the last answer, and with real viewers the \
            last delivery): roomd's CPU seconds (schedstat of every thread), the deliveries (real: pushes \
            counted at the viewers; synthetic: the delta of roomd_test_audience_pushes_total, checked against \
            the broadcasts answered × N), CPU µs per delivery (also net of the idle CPU), deliveries a second \
            and the host's `broadcast` answer latency. Held: every broadcast answered, nothing lost, the last \
            delivery within 1 s of the last answer (the backlog did not grow). Real sockets cost roomd the \
            writes, the kernel's copies and lws; the synthetic audience skips them: the ratio of the two is \
            what it does not measure.
            """
    )

    @OptionGroup var target: TargetOptions
    @Option(help: "real (viewer sockets) or synthetic (test mode's socketless audience).") var mode = AudienceMode.real
    @Option(help: "Viewers in the room (1...100,000).") var peers = 10000
    @Option(help: "The host's broadcasts to everyone a second (1...1,000).") var rate = 20
    @Option(help: "Seconds of broadcasting (0 < s ≤ 600).") var duration = 10.0
    @Option(help: "Seconds allowed after the last answer for deliveries to arrive (real viewers; 0...60).")
    var drain = 3.0
    @Option(help: "Seconds between the host's join and the idle window (past the room-state tick; 0...60).")
    var settle = 3.0
    @Option(help: "Seconds of roomd's idle CPU measured before broadcasting (0: none; 0...60).")
    var idleWindow = 3.0
    @Option(help: "Bytes of each broadcast's message (27...4,096; the marker is 27).") var messageBytes = 100

    func run() throws {
        try exitOnError {
            guard !target.raw else { throw BenchError("synthetic: roomd only") }
            guard (1...100_000).contains(peers) else { throw BenchError("--peers: 1...100,000, got \(peers)") }
            guard (1...1000).contains(rate) else { throw BenchError("--rate: 1...1,000 broadcasts a second") }
            guard duration > 0, duration <= 600 else { throw BenchError("--duration: 0 < s ≤ 600") }
            for (name, value) in [("--drain", drain), ("--settle", settle), ("--idle-window", idleWindow)]
            where !(0...60).contains(value) {
                throw BenchError("\(name): 0...60 s, got \(value)")
            }
            guard (Marker.length...4096).contains(messageBytes) else {
                throw BenchError("--message-bytes: \(Marker.length)...4,096")
            }
            let bench = try prepare(target, connections: mode == .real ? peers + 1 : 1)
            try bench.audienceCost(
                mode: mode,
                peers: peers,
                rate: rate,
                duration: duration,
                drain: drain,
                settle: settle,
                idleWindow: idleWindow,
                messageBytes: messageBytes,
                connectTimeout: target.connectTimeout,
                joinTimeout: target.joinTimeout
            )
        }
    }
}

extension Bench {
    // MARK: - (q) the same audience, real and synthetic

    /// The Prometheus counter of pushes to the synthetic audience (PROTOCOL.md section 33).
    static let audiencePushesMetric = "roomd_test_audience_pushes_total"

    func audienceCost(
        mode: AudienceMode,
        peers count: Int,
        rate: Int,
        duration: Double,
        drain: Double,
        settle: Double,
        idleWindow: Double,
        messageBytes: Int,
        connectTimeout: Double,
        joinTimeout: Double
    ) throws {
        let room = "synthetic"
        let http: TestModeHTTP?
        let setup: String
        switch mode {
        case .real:
            setup = try crowd(room: room, count: count, connectTimeout: connectTimeout, joinTimeout: joinTimeout)
                .summary
            http = nil
        case .synthetic:
            let client = TestModeHTTP(endpoint: endpoint, token: try managementToken())
            let t0 = monoNanos()
            let answer = try client.post(
                "audience",
                body: #"{"room_id":"\#(room)","count":\#(count),"role":"viewer","seed":1}"#,
                timeout: joinTimeout
            )
            let joined = answer["count"]?.intValue ?? 0
            guard joined == count else {
                throw BenchError("synthetic: \(joined)/\(count) synthetic viewers joined")
            }
            setup =
                "\(Fmt.int(joined)) synthetic viewers joined in "
                + String(format: "%.2f s", Double(monoNanos() - t0) / 1e9)
            http = client
        }
        let host = loop.makeConns(1)[0]
        _ = loop.connectAll([host], to: endpoint, timeout: connectTimeout)
        let tokens = try mintTokens([Identity(room: room, user: "host", role: "host")])
        guard joinAll([host], tokens: tokens, timeout: joinTimeout).joined == 1 else {
            throw BenchError("synthetic: the host could not join")
        }
        // Past the large room's room-state tick that the joins caused: none of it in the window.
        loop.run(for: settle)
        loop.runUntilQuiet(quiet: 0.5, timeout: 30)
        print("synthetic   \(label) \(mode.rawValue): \(setup), host joined")

        let loop = self.loop
        let paths = options.serverPID.map { ProcStats.schedstatPaths(pid: $0) } ?? []
        // roomd's CPU with the audience in and nobody speaking (keepalive, timers), per second.
        var idleCPU: Double?
        if idleWindow > 0, let a = ProcStats.cpuNanos(paths) {
            let t0 = monoNanos()
            loop.run(for: idleWindow)
            if let b = ProcStats.cpuNanos(paths) { idleCPU = Double(b - a) / Double(monoNanos() - t0) }
        }

        let pushes0 = http?.metric(Self.audiencePushesMetric)
        if http != nil, pushes0 == nil {
            throw BenchError("synthetic: no \(Self.audiencePushesMetric) in /metrics (is roomd in --test-mode?)")
        }
        final class Sent {
            var at: [Int: UInt64] = [:]
            /// The host's `broadcast` answers (its call's round trip), µs.
            var answers = Histogram()
            var lastAnswer: UInt64 = 0
        }
        let sent = Sent()
        let calls = CallCounts()
        let total = max(1, Int(Double(rate) * duration))
        loop.step = 1
        loop.resetCounters()
        loop.onResponse = { conn, id, error in
            guard conn === host, id >= 2 else { return }
            let now = monoNanos()
            calls.answered(error: error)
            sent.lastAnswer = now
            if error == nil, let at = sent.at.removeValue(forKey: id) { sent.answers.record((now - at) / 1000) }
        }
        let server0 = serverSample()
        let client0 = ProcStats.selfSample()
        let cpu0 = ProcStats.cpuNanos(paths)
        let start = monoNanos()
        // Message j leaves at start + j / rate (the last at the end of the window).
        loop.onTick = { now in
            let due = min(total, Int(Double(now - start) / 1e9 * Double(rate)))
            while calls.sent < due {
                let body = Marker.body(micros: monoNanos() / 1000, step: 1, sender: host.index, size: messageBytes)
                sent.at[host.nextCallID] = monoNanos()  // the id sendMessage gives the call
                loop.sendMessage(body, from: host, raw: false)
                calls.sent += 1
            }
        }
        loop.run(until: start + UInt64((duration + 10) * 1e9)) {
            (calls.sent < total || calls.acked + calls.rejected < calls.sent) && host.phase == .open
        }
        loop.onTick = nil
        let sendEnd = monoNanos()
        let expected = calls.acked * count
        if mode == .real {
            // Until every delivery arrived, nothing moved for 1 s, or `drain` s passed.
            var lastCount = loop.counters.deliveries
            var lastMove = monoNanos()
            loop.run(until: monoNanos() + UInt64(drain * 1e9)) {
                let now = monoNanos()
                if loop.counters.deliveries != lastCount {
                    lastCount = loop.counters.deliveries
                    lastMove = now
                }
                return loop.counters.deliveries < expected && now - lastMove < 1_000_000_000
            }
        }
        let cpu1 = ProcStats.cpuNanos(paths)
        let end = monoNanos()
        let server1 = serverSample()
        let client1 = ProcStats.selfSample()
        loop.onResponse = nil
        let pushes1 = http?.metric(Self.audiencePushesMetric)

        let c = loop.counters
        let delivered: Int
        switch mode {
        case .real: delivered = c.deliveries
        case .synthetic: delivered = Int((pushes1 ?? 0) - (pushes0 ?? 0))
        }
        let window = Double(max(c.lastDeliveryNs, sent.lastAnswer, start + 1) - start) / 1e9
        let perSecond = Double(delivered) / window
        let offered = Double(rate * count)
        let cpuSeconds = cpu0.flatMap { a in cpu1.map { Double($0 - a) / 1e9 } }
        let cpuWindow = Double(end - start) / 1e9
        let loss = max(0, expected - delivered)
        // How long the deliveries ran on after the last answer: a backlog that grows would be the whole run.
        let tail = Double(max(c.lastDeliveryNs, sendEnd) - sendEnd) / 1e9
        let held = calls.acked == total && loss == 0 && tail <= 1

        var record = baseRecord("synthetic")
        record.set("mode", mode.rawValue)
        record.set("peers", count)
        record.set("rate", rate)
        record.set("duration_s", duration, digits: 1)
        record.set("message_bytes", messageBytes)
        record.set(calls: calls, raw: false)
        record.set("offered", total * count)
        record.set("expected", expected)
        record.set("delivered", delivered)
        record.set("loss", loss)
        // Synthetic: the counter's delta is every push to the audience in the window, the broadcasts' and any other.
        record.set("delivered_matches", delivered == expected)
        record.set("other_frames", c.otherFrames)
        record.set("offered_per_s", offered, digits: 0)
        record.set("delivered_per_s", perSecond, digits: 0)
        record.set("window_s", window, digits: 3)
        record.set("tail_s", tail, digits: 3)
        if mode == .real {
            // Frames a viewer's read took in one go: roomd behind by that many messages, each write then carries them.
            record.set("client_reads", c.reads)
            record.set("deliveries_per_read", Double(c.deliveries) / Double(max(c.reads, 1)), digits: 2)
        }
        record.set("held", held)
        if let cpuSeconds {
            record.set("server_cpu_window_s", cpuWindow, digits: 3)
            record.set("server_cpu_s", cpuSeconds, digits: 4)
            record.set("server_cpu_pct_window", cpuSeconds / cpuWindow * 100, digits: 1)
            record.set("server_cpu_us_per_delivery", cpuSeconds * 1e6 / Double(max(delivered, 1)), digits: 4)
            if let idleCPU {
                record.set("idle_cpu_pct", idleCPU * 100, digits: 2)
                let net = max(0, cpuSeconds - idleCPU * cpuWindow)
                record.set("server_cpu_us_per_delivery_net", net * 1e6 / Double(max(delivered, 1)), digits: 4)
            }
        }
        record.setLatency(sent.answers, prefix: "answer_")
        if mode == .real { record.setLatency(loop.latency, prefix: "delivery_") }
        addCommon(&record, server: server0, server1, client: client0, client1)

        let line =
            "synthetic   \(label) \(mode.rawValue): \(rate) msg/s × \(Fmt.int(count)) viewers: "
            + "\(Fmt.int(delivered))/\(Fmt.int(expected)) delivered = \(Fmt.int(perSecond))/s"
            + (cpuSeconds.map {
                String(format: ", server %.3f s CPU = %.3f µs/delivery", $0, $0 * 1e6 / Double(max(delivered, 1)))
            } ?? "")
            + (idleCPU.map { String(format: " (idle %.1f%%)", $0 * 100) } ?? "")
            + "; host answer p50 \(Fmt.ms(Double(sent.answers.value(atQuantile: 0.5)) / 1000))"
            + " p99 \(Fmt.ms(Double(sent.answers.value(atQuantile: 0.99)) / 1000))"
            + (mode == .real
                ? "; delivery p99 \(Fmt.ms(Double(loop.latency.value(atQuantile: 0.99)) / 1000))" : "")
            + (held ? "" : "  NOT HELD")
            + (calls.rejected > 0 ? "  rejected \(describe(calls.errors))" : "")
            + (loop.closeCodes.isEmpty ? "" : "  closes \(describe(loop.closeCodes))")
        try emit(record, line: line)
    }
}
