import ArgumentParser
import Foundation

struct Questions: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "questions",
        abstract:
            "(k) Audience Q&A: Q questions, V viewers voting on them while others page through question-list; list and vote latency.",
        discussion: """
            V viewers join one room. The first --questions of them each ask one question (`question-add`). \
            Then every viewer votes --votes-per-voter times (up or down, on questions picked by a fixed \
            pseudo-random sequence), the votes of all viewers spread evenly over --spread seconds; during the \
            votes and --window seconds after, --readers viewers call `question-list` (--list-rate calls a second \
            in all; `top` and `new` alternately, offsets across the whole list, limit 20). Reported: the \
            question-list answer latency (the target: p99 ≤ 5 ms) and answer size, the vote answer latency, \
            votes/s, and the `on-questions` each peer received per interval.
            """
    )

    @OptionGroup var target: TargetOptions
    @Option(help: "Viewers in the room; every one votes.") var peers = 10000
    @Option(help: "Questions asked (settings.qa.max_questions is 500 by default).") var questions = 500
    @Option(help: "Votes each viewer casts.") var votesPerVoter = 5
    @Option(help: "Seconds over which the votes are spread.") var spread = 10.0
    @Option(help: "Seconds of question-list calls after the last vote.") var window = 3.0
    @Option(help: "Viewers that page through question-list.") var readers = 100
    @Option(help: "question-list calls per second, over all readers.") var listRate = 200.0
    @Option(help: "The template's settings.qa.interval_ms (recorded with the results).") var intervalMs = 1000

    func run() throws {
        try exitOnError {
            guard !target.raw else { throw BenchError("questions: roomd only") }
            guard peers >= 1, (1...peers).contains(questions), (1...peers).contains(readers), votesPerVoter >= 1,
                spread > 0, window >= 0, listRate > 0
            else {
                throw BenchError("questions: needs 1 ≤ --questions, --readers ≤ --peers, --votes-per-voter ≥ 1")
            }
            let bench = try prepare(target, connections: peers)
            try bench.questions(
                peers: peers,
                questions: questions,
                votesPerVoter: votesPerVoter,
                spread: spread,
                window: window,
                readers: readers,
                listRate: listRate,
                intervalMs: intervalMs,
                connectTimeout: target.connectTimeout,
                joinTimeout: target.joinTimeout
            )
        }
    }
}

extension Bench {
    // MARK: - (k) audience Q&A

    func questions(
        peers count: Int,
        questions questionCount: Int,
        votesPerVoter: Int,
        spread: Double,
        window: Double,
        readers readerCount: Int,
        listRate: Double,
        intervalMs: Int,
        connectTimeout: Double,
        joinTimeout: Double
    ) throws {
        let (conns, joined) = try crowd(
            room: "qa",
            count: count,
            connectTimeout: connectTimeout,
            joinTimeout: joinTimeout
        )
        let loop = self.loop
        let first = conns[0].index

        // The first viewers ask; the answers' question_id (the result's first field) are kept.
        final class Asked {
            var ids: [String] = []
            var rejected: [Int: Int] = [:]
            var answered = 0
        }
        let asked = Asked()
        let key = Array(#""question_id":""#.utf8)
        loop.onResponseText = { _, id, text in
            guard id == 2 else { return }
            asked.answered += 1
            guard let at = text.firstRange(of: key) else { return }
            let rest = text[at.upperBound...]
            guard let end = rest.firstIndex(of: UInt8(ascii: "\"")) else { return }
            asked.ids.append(String(decoding: rest[rest.startIndex..<end], as: UTF8.self))
        }
        loop.onResponse = { _, id, error in
            if id == 2, let error { asked.rejected[error, default: 0] += 1 }
        }
        for (k, conn) in conns.prefix(questionCount).enumerated() {
            conn.nextCallID = 3
            loop.send(
                conn,
                #"{"jsonrpc":"2.0","id":2,"method":"question-add","params":{"text":"Question \#(k): what would you ask the guest about the show tonight?"}}"#
            )
        }
        loop.run(until: monoNanos() + 30_000_000_000) { asked.answered < questionCount }
        loop.onResponseText = nil
        loop.onResponse = nil
        guard asked.ids.count == questionCount else {
            throw BenchError(
                "questions: \(asked.ids.count)/\(questionCount) questions added (\(describe(asked.rejected)))"
            )
        }
        loop.runUntilQuiet(quiet: 1.5, timeout: 30)  // the on-questions of the additions
        print("questions   \(label): \(joined), \(questionCount) questions asked")

        loop.watch("on-questions", on: conns)
        defer { loop.watchedMethod = nil }
        for conn in conns { conn.nextCallID = 3 }  // ids 1 and 2: join and question-add
        final class State {
            var sentNs: [UInt64]
            var isList: [Bool]
            var votes = Histogram()
            var lists = Histogram()
            var listBytes = 0
            var listAnswers = 0
            var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
            init(_ n: Int) {
                sentNs = Array(repeating: 0, count: n * 16)
                isList = Array(repeating: false, count: n * 16)
            }
            /// A fixed pseudo-random sequence (splitmix64): the same votes every run.
            func next(_ bound: Int) -> Int {
                seed &+= 0x9E37_79B9_7F4A_7C15
                var z = seed
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return Int((z ^ (z >> 31)) % UInt64(bound))
            }
        }
        let state = State(count)
        let votes = CallCounts()
        let lists = CallCounts()
        let readers = Array(conns.suffix(readerCount))
        loop.onResponseText = { conn, id, _ in
            let slot = (conn.index - first) * 16 + id % 16
            if id >= 3, state.isList[slot] { state.listBytes += conn.lastFramePayload }
        }
        loop.onResponse = { conn, id, error in
            guard id >= 3 else { return }
            let now = monoNanos()
            let slot = (conn.index - first) * 16 + id % 16
            let latency = (now - state.sentNs[slot]) / 1000
            if state.isList[slot] {
                lists.answered(error: error)
                state.listAnswers += 1
                if error == nil { state.lists.record(latency) }
            } else {
                votes.answered(error: error)
                if error == nil { state.votes.record(latency) }
            }
        }
        func call(_ conn: BenchConn, list: Bool, _ method: String, _ params: String) {
            let id = conn.nextCallID
            conn.nextCallID += 1
            let slot = (conn.index - first) * 16 + id % 16
            state.sentNs[slot] = monoNanos()
            state.isList[slot] = list
            loop.send(conn, #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#)
        }
        let totalVotes = count * votesPerVoter
        let voteRate = Double(totalVotes) / spread
        let paths = options.serverPID.map { ProcStats.schedstatPaths(pid: $0) } ?? []
        let server0 = serverSample()
        let cpu0 = ProcStats.cpuNanos(paths)
        let client0 = ProcStats.selfSample()
        let start = monoNanos()
        let listEnd = start + UInt64((spread + window) * 1e9)
        let ids = asked.ids
        loop.onTick = { now in
            let due = min(totalVotes, Int(Double(now - start) / 1e9 * voteRate) + 1)
            while votes.sent < due {
                let conn = conns[votes.sent % count]
                let question = ids[state.next(ids.count)]
                let vote = state.next(4) == 0 ? "down" : "up"
                call(conn, list: false, "question-vote", #"{"question_id":"\#(question)","vote":"\#(vote)"}"#)
                votes.sent += 1
            }
            guard now < listEnd else { return }
            let listsDue = Int(Double(now - start) / 1e9 * listRate) + 1
            while lists.sent < listsDue {
                let conn = readers[lists.sent % readers.count]
                let order = lists.sent % 2 == 0 ? "top" : "new"
                let offset = state.next(max(ids.count - 19, 1))
                call(conn, list: true, "question-list", #"{"order":"\#(order)","offset":\#(offset),"limit":20}"#)
                lists.sent += 1
            }
        }
        loop.run(until: listEnd + 10_000_000_000) {
            monoNanos() < listEnd || votes.acked + votes.rejected < votes.sent
                || lists.acked + lists.rejected < lists.sent
        }
        loop.onTick = nil
        let end = monoNanos()
        let cpu1 = ProcStats.cpuNanos(paths)
        let server1 = serverSample()
        let client1 = ProcStats.selfSample()
        loop.onResponse = nil
        loop.onResponseText = nil

        let c = loop.counters
        let receivers = conns.filter { $0.phase == .open && $0.joined }
        let seconds = Double(end - start) / 1e9
        let perPeerPerInterval =
            Double(c.watched) / Double(max(receivers.count, 1)) / (seconds * 1000 / Double(intervalMs))
        let minGapNs = receivers.map(\.watchedMinGapNs).min() ?? .max
        let minGapMs: Double? = minGapNs == .max ? nil : Double(minGapNs) / 1e6
        let cpuSeconds = cpu0.flatMap { a in cpu1.map { Double($0 - a) / 1e9 } }

        var record = baseRecord("questions")
        record.set("peers", count)
        record.set("questions", questionCount)
        record.set("voters", count)
        record.set("votes_sent", votes.sent)
        record.set("votes_acked", votes.acked)
        record.set("votes_rejected", votes.rejected)
        record.set("vote_errors", counts: votes.errors)
        record.set("votes_offered_per_s", voteRate, digits: 0)
        record.setLatency(state.votes, prefix: "vote_")
        record.set("readers", readerCount)
        record.set("lists_sent", lists.sent)
        record.set("lists_acked", lists.acked)
        record.set("lists_rejected", lists.rejected)
        record.set("list_errors", counts: lists.errors)
        record.setLatency(state.lists, prefix: "list_")
        record.set("list_answer_bytes_mean", Double(state.listBytes) / Double(max(state.listAnswers, 1)), digits: 0)
        record.set("window_s", seconds, digits: 2)
        if let cpuSeconds {
            record.set(
                "server_cpu_us_per_call",
                cpuSeconds * 1e6 / Double(max(votes.acked + lists.acked, 1)),
                digits: 2
            )
        }
        record.set("interval_ms", intervalMs)
        record.set("questions_pushes", c.watched)
        record.set("questions_push_bytes_mean", Double(c.watchedBytes) / Double(max(c.watched, 1)), digits: 0)
        record.set("questions_per_peer_per_interval", perPeerPerInterval, digits: 3)
        if let minGapMs { record.set("questions_min_gap_ms", minGapMs, digits: 1) }
        addCommon(&record, server: server0, server1, client: client0, client1)

        let line =
            "questions   \(label): \(Fmt.int(votes.acked))/\(Fmt.int(totalVotes)) votes (p99 "
            + "\(Fmt.ms(Double(state.votes.value(atQuantile: 0.99)) / 1000))), \(Fmt.int(lists.acked))/\(Fmt.int(lists.sent)) "
            + "question-list p50 \(Fmt.ms(Double(state.lists.value(atQuantile: 0.5)) / 1000)) p99 "
            + "\(Fmt.ms(Double(state.lists.value(atQuantile: 0.99)) / 1000))"
            + " (\(Fmt.int(Double(state.listBytes) / Double(max(state.listAnswers, 1)))) B)"
            + String(format: "; on-questions %.3f per peer per interval", perPeerPerInterval)
            + (minGapMs.map { String(format: ", ≥ %.0f ms apart", $0) } ?? "")
            + (votes.rejected + lists.rejected > 0
                ? "  rejected \(describe(votes.errors.merging(lists.errors, uniquingKeysWith: +)))" : "")
            + (loop.closeCodes.isEmpty ? "" : "  closes \(describe(loop.closeCodes))")
        try emit(record, line: line)
    }
}
