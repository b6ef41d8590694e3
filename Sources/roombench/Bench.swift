import Dispatch
import Foundation
import RoomClient
import RoomServer
import RoomTokens
import RoomWire
import Synchronization

/// One measurement session against one server: roomd (JSON-RPC: tokens,
/// `join`, `broadcast`) or, with `--raw`, any WebSocket server that sends
/// text messages back (the lws mirror), where "joining" is the handshake
/// itself and a message is the raw text.
final class Bench {
    let options: TargetOptions
    let loop: BenchLoop
    let endpoint: Endpoint
    /// Every `--url` (the first is `endpoint`).
    let endpoints: [Endpoint]
    var raw: Bool { options.raw }
    let label: String
    private var minter: TokenMinter?

    init(options: TargetOptions) throws {
        self.options = options
        var endpoints: [Endpoint] = []
        for url in options.urls {
            guard let endpoint = Endpoint(url: url, subprotocol: options.wire == .raw ? options.subprotocol : nil)
            else {
                throw BenchError("--url: expected ws://HOST:PORT/PATH, got \(url)")
            }
            endpoints.append(endpoint)
        }
        guard let endpoint = endpoints.first else { throw BenchError("--url is required") }
        self.endpoint = endpoint
        self.endpoints = endpoints
        label = options.label ?? (options.nats ? "nats-server" : options.raw ? "raw" : "roomd")
        if !options.raw {
            guard let file = options.secretFile else { throw BenchError("roomd needs --secret-file (or use --raw)") }
            var secret = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            if secret.last == UInt8(ascii: "\n") { secret.removeLast() }
            guard secret.count >= 32 else { throw BenchError("\(file): the secret must be at least 32 bytes") }
            minter = TokenMinter(secret: secret)
        }
        loop = try BenchLoop()
        loop.nats = options.nats
        if options.deflate { loop.offerDeflate() }
        if let pid = options.serverPID, options.maxServerRSSMiB > 0 {
            let limitKiB = options.maxServerRSSMiB * 1024
            loop.watchdog = {
                guard let sample = ProcStats.sample(pid: pid) else { return "the server (pid \(pid)) is gone" }
                if sample.rssKiB > limitKiB {
                    return
                        "server RSS \(sample.rssKiB / 1024) MiB over the --max-server-rss-mib \(limitKiB / 1024) safety limit"
                }
                return nil
            }
        }
    }

    deinit { loop.destroy() }

    // MARK: - Server and self

    func serverSample() -> ProcSample? { options.serverPID.flatMap { ProcStats.sample(pid: $0) } }

    /// Checks the server answers, through the RoomClient SDK: `ping` on roomd,
    /// an echo on a raw server.
    func probe() throws {
        let url = options.url
        let raw = options.raw
        let subprotocol = options.subprotocol
        try runBlocking {
            let clientLoop = RoomClientLoop()
            defer { clientLoop.shutdown() }
            let client = try await RoomClient.connect(
                to: url,
                loop: clientLoop,
                timeout: .seconds(5),
                protocolName: raw ? subprotocol : nil
            )
            if raw {
                client.send(text: "roombench probe")
                _ = try await client.nextMessage(timeout: .seconds(5))
            } else {
                _ = try await client.call("ping", ["timestamp": 1], timeout: .seconds(5))
            }
            await client.close()
        }
    }

    // MARK: - Tokens and joining

    struct Identity {
        var room: String
        var user: String
        var role: String
    }

    func mintTokens(_ identities: [Identity]) throws -> [String] {
        guard let minter else { return [] }
        return try identities.map { try minter.appToken(room: $0.room, user: $0.user, role: $0.role) }
    }

    /// A management token (the REST API, test mode's routes), minted with `--secret-file`.
    func managementToken() throws -> String {
        guard let minter else { throw BenchError("a management token needs --secret-file") }
        return try minter.managementToken()
    }

    struct JoinOutcome {
        var joined = 0
        var failed = 0
        var firstSentNs: UInt64 = 0
        var lastAnswerNs: UInt64 = 0
        var latency = Histogram()
        var errorCodes: [Int: Int] = [:]

        var seconds: Double { lastAnswerNs > firstSentNs ? Double(lastAnswerNs - firstSentNs) / 1e9 : 0 }
        var perSecond: Double { seconds > 0 ? Double(joined) / seconds : 0 }
    }

    /// Sends `join` on every open connection of `list` at once (id 1) and
    /// services the loop until each is answered or `timeout` passes.
    func joinAll(_ list: [BenchConn], tokens: [String], timeout: Double) -> JoinOutcome {
        final class Box {
            var outcome = JoinOutcome()
            var answered = 0
        }
        let box = Box()
        loop.onResponse = { conn, id, error in
            guard id == 1, !conn.joinAnswered, conn.joinSentNs != 0 else { return }
            let now = monoNanos()
            conn.joinAnswered = true
            box.answered += 1
            box.outcome.lastAnswerNs = now
            if let error {
                box.outcome.failed += 1
                box.outcome.errorCodes[error, default: 0] += 1
            } else {
                conn.joined = true
                box.outcome.joined += 1
                box.outcome.latency.record((now - conn.joinSentNs) / 1000)
            }
        }
        defer { loop.onResponse = nil }
        let start = monoNanos()
        box.outcome.firstSentNs = start
        var asked = 0
        for (conn, token) in zip(list, tokens) where conn.phase == .open {
            conn.joinSentNs = start
            conn.nextCallID = 2
            loop.send(conn, #"{"jsonrpc":"2.0","id":1,"method":"join","params":{"token":"\#(token)"}}"#)
            asked += 1
        }
        var lastScan = start
        loop.run(until: start + UInt64(timeout * 1e9)) {
            guard box.answered < asked else { return false }
            // Every 100 ms: stop early if every unanswered connection is gone.
            let now = monoNanos()
            if now - lastScan < 100_000_000 { return true }
            lastScan = now
            return list.contains { $0.phase == .open && !$0.joinAnswered }
        }
        box.outcome.failed += asked - box.answered  // unanswered (closed or timed out)
        return box.outcome
    }

    // MARK: - Output

    func emit(_ record: Record, line: String) throws {
        print(line + abortNote)
        fflush(nil)
        if let path = options.json { try record.append(to: path) }
    }

    func baseRecord(_ scenario: String) -> Record {
        var record = Record()
        record.set("scenario", scenario)
        record.set("target", label)
        record.set("raw", raw)
        return record
    }

    func addCommon(
        _ record: inout Record,
        server before: ProcSample?,
        _ after: ProcSample?,
        client clientBefore: ProcSample,
        _ clientAfter: ProcSample
    ) {
        if let before, let after {
            record.set("server_cpu_pct", after.cpuPercent(since: before), digits: 1)
            record["server_thread_cpu_pct"] = .array(
                after.threadPercents(since: before).map { .number(Record.format($0, 1)) }
            )
            record.set("server_rss_kib", after.rssKiB)
            record.set("server_hwm_kib", after.hwmKiB)
        }
        record.set("client_cpu_pct", clientAfter.cpuPercent(since: clientBefore), digits: 1)
        // Everything else that ran on the machine meanwhile (other processes), in % of one core.
        let machine = clientAfter.machinePercent(since: clientBefore)
        let server = (before != nil && after != nil) ? after!.cpuPercent(since: before!) : 0
        record.set("machine_cpu_pct", machine, digits: 1)
        record.set(
            "background_cpu_pct",
            max(0, machine - server - clientAfter.cpuPercent(since: clientBefore)),
            digits: 1
        )
        record.set("client_loop", loop.eventLoop)
        record.set("close_codes", counts: loop.closeCodes)
        record.set("connect_errors", loop.connectErrors)
        if let reason = loop.abortReason { record.set("aborted", reason) }
    }

    /// " ABORTED: reason" for table lines.
    var abortNote: String { loop.abortReason.map { "  ABORTED: \($0)" } ?? "" }
}

/// Runs async work (the RoomClient probe) from synchronous code.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value: Result<T, any Error>
        do { value = .success(try await body()) } catch { value = .failure(error) }
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}

func describe(_ counts: [Int: Int]) -> String {
    counts.isEmpty ? "-" : counts.keys.sorted().map { "\($0)×\(counts[$0]!)" }.joined(separator: " ")
}
