import ArgumentParser
import Foundation

struct HistoryJoin: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history-join",
        abstract:
            "(j) Chat history: one more join into a room of N viewers, before and after a host fills the history; join latency and answer size.",
        discussion: """
            N viewers join one room, then a host. First --probe-joins more viewers join one at a time into the \
            room with an empty history (the baseline); then the host sends --history messages of \
            --message-bytes to everyone (at --fill-rate per second; each lands in the history and reaches every \
            viewer), and --probe-joins more viewers join one at a time again: their `join` answers carry the \
            backfilled `chat`. Reported for both: join answer latency p50 / p99 and the answer's size in bytes.
            """
    )

    @OptionGroup var target: TargetOptions
    @Option(help: "Viewers in the room.") var peers = 10000
    @Option(help: "Messages the host sends to everyone (settings.chat.history_size is 200 by default).")
    var history = 200
    @Option(help: "Bytes of each message text.") var messageBytes = 100
    @Option(help: "Messages per second while filling the history.") var fillRate = 100.0
    @Option(help: "Joins one at a time, before and after the history is filled.") var probeJoins = 100

    func run() throws {
        try exitOnError {
            guard !target.raw else { throw BenchError("history-join: roomd only") }
            guard peers >= 1, history >= 1, messageBytes >= 1, fillRate > 0, probeJoins >= 1 else {
                throw BenchError("history-join: needs --peers, --history, --message-bytes, --probe-joins ≥ 1")
            }
            let bench = try prepare(target, connections: peers + 1 + 2 * probeJoins)
            try bench.historyJoin(
                peers: peers,
                history: history,
                messageBytes: messageBytes,
                fillRate: fillRate,
                probeJoins: probeJoins,
                connectTimeout: target.connectTimeout,
                joinTimeout: target.joinTimeout
            )
        }
    }
}

extension Bench {
    // MARK: - (j) chat history on join

    /// `count` more viewers join `room` one at a time: join latency and answer bytes.
    func probeJoins(room: String, count: Int, tag: String, connectTimeout: Double) throws -> (Histogram, [Int]) {
        let extra = loop.makeConns(count)
        let tokens = try mintTokens(extra.map { Identity(room: room, user: "\(tag)-\($0.index)", role: "viewer") })
        _ = loop.connectAll(extra, to: endpoint, timeout: connectTimeout)
        var latency = Histogram()
        final class Sizes { var last = 0 }
        let answer = Sizes()
        // The answer's size, read when it arrives (a push after it would change lastFramePayload).
        loop.onResponseText = { conn, id, _ in if id == 1 { answer.last = conn.lastFramePayload } }
        defer { loop.onResponseText = nil }
        var sizes: [Int] = []
        for (conn, token) in zip(extra, tokens) {
            let one = joinAll([conn], tokens: [token], timeout: 10)
            if one.joined == 1 {
                latency.merge(one.latency)
                sizes.append(answer.last)
            }
            loop.runUntilQuiet(quiet: 0.02, timeout: 1)  // the pushes the join caused, before the next
        }
        return (latency, sizes)
    }

    func historyJoin(
        peers count: Int,
        history: Int,
        messageBytes: Int,
        fillRate: Double,
        probeJoins probeCount: Int,
        connectTimeout: Double,
        joinTimeout: Double
    ) throws {
        let (_, joined) = try crowd(
            room: "history",
            count: count,
            connectTimeout: connectTimeout,
            joinTimeout: joinTimeout
        )
        let host = loop.makeConns(1)[0]
        let hostToken = try mintTokens([Identity(room: "history", user: "host", role: "host")])
        _ = loop.connectAll([host], to: endpoint, timeout: connectTimeout)
        guard joinAll([host], tokens: hostToken, timeout: joinTimeout).joined == 1 else {
            throw BenchError("history-join: the host could not join")
        }
        loop.runUntilQuiet(quiet: 0.5, timeout: 20)
        print("history     \(label): \(joined), host joined")

        let (before, beforeSizes) = try probeJoins(
            room: "history",
            count: probeCount,
            tag: "before",
            connectTimeout: connectTimeout
        )

        // The host fills the history; every message reaches every viewer.
        let calls = CallCounts()
        loop.onResponse = { conn, id, error in
            guard conn === host, id >= 2 else { return }
            calls.answered(error: error)
        }
        let loop = self.loop
        let text = Array(repeating: UInt8(ascii: "m"), count: messageBytes)
        let start = monoNanos()
        loop.onTick = { now in
            let due = min(history, Int(Double(now - start) / 1e9 * fillRate) + 1)
            while calls.sent < due {
                loop.sendMessage(text, from: host, raw: false)
                calls.sent += 1
            }
        }
        loop.run(until: start + UInt64((Double(history) / fillRate + 30) * 1e9)) {
            calls.acked + calls.rejected < history
        }
        loop.onTick = nil
        loop.onResponse = nil
        guard calls.acked == history else {
            throw BenchError("history-join: \(calls.acked)/\(history) messages answered (\(describe(calls.errors)))")
        }
        loop.runUntilQuiet(quiet: 1, timeout: 60)  // every delivery arrived

        let server0 = serverSample()
        let client0 = ProcStats.selfSample()
        let (after, afterSizes) = try probeJoins(
            room: "history",
            count: probeCount,
            tag: "after",
            connectTimeout: connectTimeout
        )
        let server1 = serverSample()
        let client1 = ProcStats.selfSample()

        func mean(_ sizes: [Int]) -> Double { Double(sizes.reduce(0, +)) / Double(max(sizes.count, 1)) }
        var record = baseRecord("history-join")
        record.set("peers", count + 1)
        record.set("history", history)
        record.set("message_bytes", messageBytes)
        record.set("probe_joins", probeCount)
        record.set("before_joined", beforeSizes.count)
        record.set("after_joined", afterSizes.count)
        record.setLatency(before, prefix: "before_join_")
        record.setLatency(after, prefix: "after_join_")
        record.set("before_answer_bytes", mean(beforeSizes), digits: 0)
        record.set("after_answer_bytes", mean(afterSizes), digits: 0)
        record.set("after_answer_bytes_max", afterSizes.max() ?? 0)
        addCommon(&record, server: server0, server1, client: client0, client1)

        let line =
            "history     \(label): one more join into \(Fmt.int(count + 1)) peers: empty history p50 "
            + "\(Fmt.ms(Double(before.value(atQuantile: 0.5)) / 1000)) p99 \(Fmt.ms(Double(before.value(atQuantile: 0.99)) / 1000))"
            + " (\(Fmt.int(mean(beforeSizes))) B); \(history) messages p50 "
            + "\(Fmt.ms(Double(after.value(atQuantile: 0.5)) / 1000)) p99 \(Fmt.ms(Double(after.value(atQuantile: 0.99)) / 1000))"
            + " (\(Fmt.int(mean(afterSizes))) B)"
            + (beforeSizes.count + afterSizes.count < 2 * probeCount
                ? "  \(2 * probeCount - beforeSizes.count - afterSizes.count) probe joins failed" : "")
        try emit(record, line: line)
    }
}
