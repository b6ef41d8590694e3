import ArgumentParser
import Foundation

struct PollVotes: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "poll",
        abstract:
            "(f) Polls: a large room of N viewers, V of whom vote within --spread seconds; votes/s, answer latency, on-poll-stats per peer.",
        discussion: """
            One host and N viewers join one room (large-room mode above 1,000 peers). The host creates a poll \
            with `visibility: true` (so every peer gets `on-poll-stats`), one single-choice question of four \
            options, and starts it. Then V viewers each send one `poll-response`, evenly spread over --spread \
            seconds, and the run goes on for --window seconds more. Reported: votes answered per second (and the \
            server's CPU per vote, i.e. the rate one core could take), the vote answer latency, and the \
            `on-poll-stats` pushes each peer received per second and the shortest time between two of them at \
            any peer (at least the stats interval when roomd keeps to one per peer per interval; measured on \
            arrival, so an overloaded run's delivery jitter can shave a few tens of ms off it).
            """
    )

    @OptionGroup var target: TargetOptions
    @Option(help: "Viewers in the room (the host comes on top).") var peers = 10000
    @Option(help: "Viewers that vote, once each.") var voters = 5000
    @Option(help: "Seconds over which the votes are spread.") var spread = 1.0
    @Option(help: "Seconds measured after the last vote is sent (stats pushes keep coming).") var window = 3.0
    @Option(help: "The template's settings.polls.stats_interval_ms (recorded with the results).")
    var statsIntervalMs = 1000
    @Flag(help: "A poll with visibility false: on-poll-stats go to the host only (isolates the stats fan-out's cost).")
    var hidden = false

    func run() throws {
        try exitOnError {
            guard !target.raw else { throw BenchError("poll: roomd only (the mirror has no polls)") }
            guard peers >= 1, (1...peers).contains(voters), spread > 0, window >= 0 else {
                throw BenchError("poll: needs 1 ≤ --voters ≤ --peers, --spread > 0, --window ≥ 0")
            }
            let bench = try prepare(target, connections: peers + 1)
            try bench.pollVotes(
                peers: peers,
                voters: voters,
                spread: spread,
                window: window,
                statsIntervalMs: statsIntervalMs,
                visible: !hidden,
                connectTimeout: target.connectTimeout,
                joinTimeout: target.joinTimeout
            )
        }
    }
}

extension Bench {
    // MARK: - (f) polls

    func pollVotes(
        peers count: Int,
        voters voterCount: Int,
        spread: Double,
        window: Double,
        statsIntervalMs: Int,
        visible: Bool,
        connectTimeout: Double,
        joinTimeout: Double
    ) throws {
        let conns = loop.makeConns(count + 1)
        let host = conns[0]
        let first = host.index
        let identities = conns.map { conn in
            conn === host
                ? Identity(room: "poll", user: "host", role: "host")
                : Identity(room: "poll", user: "viewer-\(conn.index - first)", role: "viewer")
        }
        let tokens = try mintTokens(identities)
        let (opened, _, connectSeconds) = loop.connectAll(conns, to: endpoint, timeout: connectTimeout)
        // The crowd first, then the host (a moderating role: it would get the join storm's room-state lists).
        let join = joinAll(Array(conns.dropFirst()), tokens: Array(tokens.dropFirst()), timeout: joinTimeout)
        loop.runUntilQuiet(quiet: 0.5, timeout: 20)
        let hostJoin = joinAll([host], tokens: [tokens[0]], timeout: joinTimeout)
        guard hostJoin.joined == 1 else { throw BenchError("poll: the host could not join") }
        loop.runUntilQuiet(quiet: 0.5, timeout: 20)

        // The host writes and starts the poll (ids 2, 3, 4).
        let setup = CallCounts()
        loop.onResponse = { conn, id, error in
            guard conn === host, (2...4).contains(id) else { return }
            setup.answered(error: error)
        }
        loop.send(
            host,
            #"{"jsonrpc":"2.0","id":2,"method":"poll-info-set","params":{"poll_id":"bench","title":"Bench","type":"poll","visibility":\#(visible)}}"#
        )
        loop.send(
            host,
            #"{"jsonrpc":"2.0","id":3,"method":"poll-questions-set","params":{"poll_id":"bench","questions":[{"question":{"text":"Which?","type":"single-choice"},"options":[{"text":"a"},{"text":"b"},{"text":"c"},{"text":"d"}]}]}}"#
        )
        loop.send(host, #"{"jsonrpc":"2.0","id":4,"method":"poll-start","params":{"poll_id":"bench"}}"#)
        loop.run(until: monoNanos() + 10_000_000_000) { setup.acked + setup.rejected < 3 }
        loop.onResponse = nil
        guard setup.acked == 3 else { throw BenchError("poll: setting up the poll failed (\(describe(setup.errors)))") }
        loop.runUntilQuiet(quiet: 0.5, timeout: 20)  // on-poll-start to everyone
        print(
            "poll        \(label): connected \(opened) in " + String(format: "%.2f s", connectSeconds)
                + ", \(join.joined + 1) joined in " + String(format: "%.2f s", join.seconds) + ", poll started"
        )

        let voters = Array(conns.dropFirst().filter(\.joined).prefix(voterCount))
        guard voters.count == voterCount else { throw BenchError("poll: only \(voters.count) viewers joined") }
        let loop = self.loop
        loop.watch("on-poll-stats", on: conns)
        defer { loop.watchedMethod = nil }

        final class State {
            var sentNs: [UInt64]
            var latency = Histogram()
            var firstSent: UInt64 = 0
            var lastAnswer: UInt64 = 0
            init(_ n: Int) { sentNs = Array(repeating: 0, count: n) }
        }
        let state = State(conns.count)
        let calls = CallCounts()
        loop.onResponse = { conn, id, error in
            guard id == 5 else { return }
            let now = monoNanos()
            calls.answered(error: error)
            state.lastAnswer = now
            let sent = state.sentNs[conn.index - first]
            if error == nil, sent != 0 { state.latency.record((now - sent) / 1000) }
        }
        let paths = options.serverPID.map { ProcStats.schedstatPaths(pid: $0) } ?? []
        let server0 = serverSample()
        let cpu0 = ProcStats.cpuNanos(paths)
        let client0 = ProcStats.selfSample()
        let start = monoNanos()
        state.firstSent = start
        loop.onTick = { now in
            let due = min(voterCount, Int(Double(now - start) / 1e9 / spread * Double(voterCount)) + 1)
            while calls.sent < due {
                let voter = voters[calls.sent]
                state.sentNs[voter.index - first] = monoNanos()
                loop.send(
                    voter,
                    #"{"jsonrpc":"2.0","id":5,"method":"poll-response","params":{"poll_id":"bench","responses":[{"question":1,"option":\#(calls.sent % 4 + 1)}]}}"#
                )
                calls.sent += 1
            }
        }
        loop.run(until: start + UInt64(spread * 1e9) + 5_000_000_000) { calls.acked + calls.rejected < voterCount }
        loop.onTick = nil
        let cpuVotes = ProcStats.cpuNanos(paths)
        let votesDone = monoNanos()
        loop.run(until: start + UInt64((spread + window) * 1e9)) { true }
        let end = monoNanos()
        let cpu1 = ProcStats.cpuNanos(paths)
        let server1 = serverSample()
        let client1 = ProcStats.selfSample()
        loop.onResponse = nil

        let c = loop.counters
        let receivers = conns.filter { $0.phase == .open && $0.joined }
        let perPeer = receivers.map(\.watchedIn)
        let seconds = Double(end - start) / 1e9
        let voteSeconds = Double(max(state.lastAnswer, start + 1) - start) / 1e9
        let handled = Double(calls.acked) / voteSeconds
        let perPeerPerSecond = Double(c.watched) / Double(max(receivers.count, 1)) / seconds
        // The shortest time between two on-poll-stats at one peer (≥ the interval when the rule holds).
        let minGapNs = receivers.map(\.watchedMinGapNs).min() ?? .max
        let minGapMs: Double? = minGapNs == .max ? nil : Double(minGapNs) / 1e6
        let withTwo = receivers.filter { $0.watchedIn >= 2 }.count
        let voteCPUSeconds = cpu0.flatMap { a in cpuVotes.map { Double($0 - a) / 1e9 } }

        var record = baseRecord("poll")
        record.set("peers", count + 1)
        record.set("voters", voterCount)
        record.set("visibility", visible)
        record.set("connected", opened)
        record.set("joined", join.joined + 1)
        record.set("join_failed", join.failed)
        record.set("spread_s", spread, digits: 2)
        record.set("window_s", seconds, digits: 2)
        record.set("votes_sent", calls.sent)
        record.set("votes_acked", calls.acked)
        record.set("votes_rejected", calls.rejected)
        record.set("vote_errors", counts: calls.errors)
        record.set("votes_offered_per_s", Double(voterCount) / spread, digits: 0)
        record.set("votes_per_s", handled, digits: 0)
        record.set("vote_phase_s", Double(votesDone - start) / 1e9, digits: 2)
        record.setLatency(state.latency, prefix: "vote_")
        if let cpu = voteCPUSeconds {
            record.set("server_cpu_vote_phase_s", cpu, digits: 3)
            record.set("server_cpu_us_per_vote", cpu * 1e6 / Double(max(calls.acked, 1)), digits: 1)
            record.set("votes_per_cpu_s", Double(calls.acked) / max(cpu, 1e-9), digits: 0)
        }
        if let a = cpuVotes, let b = cpu1, b >= a {
            record.set(
                "server_cpu_after_votes_pct",
                Double(b - a) / 1e9 / max(Double(end - votesDone) / 1e9, 1e-9) * 100,
                digits: 1
            )
        }
        record.set("stats_pushes", c.watched)
        record.set("stats_push_bytes_mean", Double(c.watchedBytes) / Double(max(c.watched, 1)), digits: 0)
        record.set("stats_interval_ms", statsIntervalMs)
        record.set("receivers", receivers.count)
        record.set("stats_per_peer_per_s", perPeerPerSecond, digits: 3)
        if let minGapMs { record.set("stats_min_gap_ms", minGapMs, digits: 1) }
        record.set("stats_peers_with_two", withTwo)
        record.set("stats_per_peer_min", perPeer.min() ?? 0)
        record.set("stats_per_peer_max", perPeer.max() ?? 0)
        addCommon(&record, server: server0, server1, client: client0, client1)

        let p99 = Double(state.latency.value(atQuantile: 0.99)) / 1000
        let line =
            "poll        \(label): \(Fmt.int(count + 1)) peers, \(Fmt.int(calls.acked))/\(Fmt.int(voterCount)) votes in "
            + String(format: "%.2f s", voteSeconds) + " = \(Fmt.int(handled)) votes/s"
            + (voteCPUSeconds.map {
                String(format: " (server %.1f µs CPU/vote)", $0 * 1e6 / Double(max(calls.acked, 1)))
            } ?? "")
            + ", answer p99 \(Fmt.ms(p99)); on-poll-stats "
            + String(format: "%.2f per peer per s", perPeerPerSecond)
            + (minGapMs.map { String(format: ", ≥ %.0f ms apart at any peer", $0) } ?? "")
            + (server1.map { "  server RSS \(Fmt.mib(kib: $0.rssKiB))" } ?? "")
            + (calls.rejected > 0 ? "  rejected \(describe(calls.errors))" : "")
            + (loop.closeCodes.isEmpty ? "" : "  closes \(describe(loop.closeCodes))")
        try emit(record, line: line)
    }
}
