import ArgumentParser
import Foundation

struct StageAudience: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stage",
        abstract:
            "(p) A large audience that stays quiet (issue 32): one viewer renaming itself, then many asking to come on stage, while the host broadcasts.",
        discussion: """
            V viewers join one room (above large_room_threshold), then a host and a moderator. The host \
            broadcasts --host-rate messages a second to everyone for three windows of --window seconds; each \
            message carries a timestamp, so every viewer's delivery latency is measured. Window 1 (base): \
            nothing else. Window 2 (rename): one viewer calls `peer-update {name}` --rename-rate times a \
            second (the template's messages_per_second is 100): the `on-peer-update` pushes the other viewers \
            get (target 0, PROTOCOL.md section 28) and the host's delivery p99 (target ≤ 20 ms and no worse \
            than window 1). Window 3 (ask): --askers viewers each call `stage-request` with a note, spread \
            over the window: the `on-stage-queue` bytes each moderating peer gets a second (the host and the \
            moderator; coalesced, at most 16 KiB a push) and the host's delivery p99.
            """
    )

    @OptionGroup var target: TargetOptions
    @Option(help: "Viewers in the room.") var peers = 10000
    @Option(help: "The host's broadcasts to everyone a second, in every window.") var hostRate = 2
    @Option(help: "Seconds of each window.") var window = 10.0
    @Option(help: "peer-update calls a second of the renaming viewer.") var renameRate = 100
    @Option(help: "Viewers that ask to come on stage in window 3 (settings.stage.max_waiting is 1000).")
    var askers = 1000
    @Option(help: "Bytes of each broadcast's message.") var messageBytes = 100
    @Option(help: "The host broadcasts to this role only (e.g. moderator) instead of everyone.")
    var hostRole: String?

    func run() throws {
        try exitOnError {
            guard !target.raw else { throw BenchError("stage: roomd only") }
            guard peers >= 2, (1..<peers).contains(askers), hostRate >= 1, renameRate >= 1, window > 0 else {
                throw BenchError("stage: needs 2 ≤ --peers, 1 ≤ --askers < --peers, rates ≥ 1, --window > 0")
            }
            let bench = try prepare(target, connections: peers + 2)
            try bench.stageAudience(
                peers: peers,
                hostRate: hostRate,
                window: window,
                renameRate: renameRate,
                askers: askers,
                messageBytes: messageBytes,
                hostRole: hostRole,
                connectTimeout: target.connectTimeout,
                joinTimeout: target.joinTimeout
            )
        }
    }
}

extension Bench {
    // MARK: - (p) a large audience that stays quiet

    func stageAudience(
        peers count: Int,
        hostRate: Int,
        window: Double,
        renameRate: Int,
        askers askerCount: Int,
        messageBytes: Int,
        hostRole: String?,
        connectTimeout: Double,
        joinTimeout: Double
    ) throws {
        let (viewers, joined) = try crowd(
            room: "stage",
            count: count,
            connectTimeout: connectTimeout,
            joinTimeout: joinTimeout
        )
        let moderators = loop.makeConns(2)
        let tokens = try mintTokens([
            Identity(room: "stage", user: "host", role: "host"),
            Identity(room: "stage", user: "moderator", role: "moderator"),
        ])
        _ = loop.connectAll(moderators, to: endpoint, timeout: connectTimeout)
        guard joinAll(moderators, tokens: tokens, timeout: joinTimeout).joined == 2 else {
            throw BenchError("stage: the host and the moderator could not join")
        }
        loop.runUntilQuiet(quiet: 0.5, timeout: 20)
        print("stage       \(label): \(joined), host and moderator joined")
        let host = moderators[0]
        let renamer = viewers[0]
        let others = Array(viewers.dropFirst())
        let askers = Array(viewers[1...askerCount])
        let loop = self.loop
        let raw = self.raw

        struct Window {
            var p50Ms = 0.0
            var p99Ms = 0.0
            var delivered = 0
            var broadcasts = CallCounts()
            /// The host's `broadcast` answers (its call's round trip), µs.
            var answers = Histogram()
            var calls = CallCounts()
            var watched = 0
            var watchedBytes = 0
            var seconds = 0.0
            var serverCPU: Double?
        }
        /// One window: the host's broadcasts and `call`'s `calls` calls spread over it, the pushes of
        /// `watch` counted at `watchers`.
        func run(
            step: Int,
            watch method: String?,
            at watchers: [BenchConn],
            calls: Int,
            _ call: @escaping (Int) -> Void
        ) -> Window {
            var result = Window()
            let broadcasts = CallCounts()
            final class Sent {
                var at: [Int: UInt64] = [:]
                var answers = Histogram()
            }
            let sent = Sent()
            let others = CallCounts()
            loop.step = step
            if let method { loop.watch(method, on: watchers) } else { loop.resetCounters() }
            defer { loop.watchedMethod = nil }
            loop.onResponse = { conn, id, error in
                guard id >= 2 else { return }
                if conn === host {
                    broadcasts.answered(error: error)
                    if error == nil, let at = sent.at.removeValue(forKey: id) {
                        sent.answers.record((monoNanos() - at) / 1000)
                    }
                } else {
                    others.answered(error: error)
                }
            }
            let server0 = serverSample()
            let start = monoNanos()
            let end = start + UInt64(window * 1e9)
            let total = Int(Double(hostRate) * window)
            loop.onTick = { now in
                let elapsed = Double(min(now, end) - start) / 1e9
                while broadcasts.sent < min(total, Int(elapsed * Double(hostRate)) + 1) {
                    let body = Marker.body(
                        micros: monoNanos() / 1000,
                        step: step,
                        sender: host.index,
                        size: messageBytes
                    )
                    if let hostRole {
                        let id = host.nextCallID
                        host.nextCallID += 1
                        sent.at[id] = monoNanos()
                        let head =
                            #"{"jsonrpc":"2.0","id":\#(id),"method":"broadcast","params":"#
                            + #"{"roles":["\#(hostRole)"],"info":{"message":""#
                        loop.send(host, Array(head.utf8) + body + Array(#""}}}"#.utf8))
                    } else {
                        sent.at[host.nextCallID] = monoNanos()  // the id sendMessage gives the call
                        loop.sendMessage(body, from: host, raw: raw)
                    }
                    broadcasts.sent += 1
                }
                while others.sent < min(calls, Int(elapsed / window * Double(calls)) + 1), calls > 0 {
                    call(others.sent)
                    others.sent += 1
                }
            }
            loop.run(until: end + 10_000_000_000) {
                monoNanos() < end || broadcasts.acked + broadcasts.rejected < broadcasts.sent
                    || others.acked + others.rejected < others.sent
            }
            loop.onTick = nil
            loop.runUntilQuiet(quiet: 1.5, timeout: 10)  // the last coalesced pushes
            loop.onResponse = nil
            let server1 = serverSample()
            result.seconds = Double(monoNanos() - start) / 1e9
            result.p50Ms = Double(loop.latency.value(atQuantile: 0.5)) / 1000
            result.p99Ms = Double(loop.latency.value(atQuantile: 0.99)) / 1000
            result.delivered = loop.counters.deliveries
            result.broadcasts = broadcasts
            result.answers = sent.answers
            result.calls = others
            result.watched = watchers.reduce(0) { $0 + $1.watchedIn }  // at the watchers only
            result.watchedBytes = loop.counters.watchedBytes
            if let server0, let server1 { result.serverCPU = server1.cpuPercent(since: server0) }
            return result
        }

        for conn in viewers + moderators { conn.nextCallID = 2 }
        let server0 = serverSample()
        let client0 = ProcStats.selfSample()
        let base = run(step: 1, watch: nil, at: [], calls: 0) { _ in }
        let rename = run(step: 2, watch: "on-peer-update", at: others, calls: Int(Double(renameRate) * window)) { k in
            let id = renamer.nextCallID
            renamer.nextCallID += 1
            loop.send(
                renamer,
                #"{"jsonrpc":"2.0","id":\#(id),"method":"peer-update","params":{"name":"Viewer \#(k)"}}"#
            )
        }
        let ask = run(step: 3, watch: "on-stage-queue", at: moderators, calls: askerCount) { k in
            let conn = askers[k]
            let id = conn.nextCallID
            conn.nextCallID += 1
            loop.send(
                conn,
                #"{"jsonrpc":"2.0","id":\#(id),"method":"stage-request","params":{"note":"Viewer \#(k) would like to ask the guest about the show tonight."}}"#
            )
        }
        let server1 = serverSample()
        let client1 = ProcStats.selfSample()

        var record = baseRecord("stage")
        record.set("peers", count)
        record.set("host_rate", hostRate)
        record.set("message_bytes", messageBytes)
        record.set("host_to", hostRole ?? "everyone")
        record.set("window_s", window, digits: 1)
        for (name, w) in [("base", base), ("rename", rename), ("ask", ask)] {
            record.set("\(name)_p50_ms", w.p50Ms, digits: 2)
            record.set("\(name)_p99_ms", w.p99Ms, digits: 2)
            record.set("\(name)_delivered", w.delivered)
            record.set("\(name)_broadcasts_acked", w.broadcasts.acked)
            record.set("\(name)_answer_p99_ms", Double(w.answers.value(atQuantile: 0.99)) / 1000, digits: 2)
            if let cpu = w.serverCPU { record.set("\(name)_server_cpu_pct", cpu, digits: 1) }
        }
        record.set("rename_rate", renameRate)
        record.set("renames_acked", rename.calls.acked)
        record.set("rename_errors", counts: rename.calls.errors)
        record.set("rename_pushes_to_others", rename.watched)
        record.set("rename_pushes_to_others_per_s", Double(rename.watched) / rename.seconds, digits: 1)
        record.set("askers", askerCount)
        record.set("asks_acked", ask.calls.acked)
        record.set("ask_errors", counts: ask.calls.errors)
        record.set("stage_queue_pushes_per_moderator", Double(ask.watched) / 2, digits: 1)
        // Only the moderating peers get on-stage-queue: every byte counted is theirs.
        record.set("stage_queue_bytes_per_moderator_per_s", Double(ask.watchedBytes) / 2 / ask.seconds, digits: 0)
        addCommon(&record, server: server0, server1, client: client0, client1)

        let line =
            "stage       \(label): host p99 \(Fmt.ms(base.p99Ms)) base, \(Fmt.ms(rename.p99Ms)) renaming "
            + "(\(Fmt.int(rename.calls.acked)) renames, \(rename.watched) pushes to other viewers), "
            + "\(Fmt.ms(ask.p99Ms)) asking (\(Fmt.int(ask.calls.acked))/\(askerCount) asked, on-stage-queue "
            + "\(Fmt.int(Double(ask.watchedBytes) / 2 / ask.seconds)) B/s per moderator)"
            + (rename.calls.rejected + ask.calls.rejected > 0
                ? "  rejected \(describe(rename.calls.errors.merging(ask.calls.errors, uniquingKeysWith: +)))" : "")
            + (loop.closeCodes.isEmpty ? "" : "  closes \(describe(loop.closeCodes))")
        try emit(record, line: line)
    }
}
