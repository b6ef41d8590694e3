import Foundation
import RoomClient
import RoomServer
import RoomTokens
import RoomWire
import RoomdTesting
import Synchronization
import Testing

/// A real `roomd` process on a free port, started through RoomdTesting's
/// `RoomdProcess` as an app's harness starts it (`roomd --config FILE
/// --port 0 --secret-file F --exit-with-stdin`: a killed test run takes its
/// daemons along), with `--log-level debug`, a fixed secret and a long join
/// deadline.
///
/// With `ROOMD_TEST_CLUSTER=1` (the second run of `make test`), a daemon is
/// a cluster instead (PROTOCOL.md section 18): a nats-server with JetStream
/// and three nodes started with the same arguments. Each client connection
/// goes to the next node in turn (`url`), so a room's peers are spread
/// round-robin over the three; HTTP goes to the last node (`port`), which
/// is usually not the room's home. Tests of one process's own behaviour
/// (signals, limits, logs, metrics, the command line) opt out with
/// `singleProcess: true` and run on one daemon in both runs.
final class Daemon: Sendable {
    static let clusterRun =
        ProcessInfo.processInfo.environment["ROOMD_TEST_CLUSTER"].map { !$0.isEmpty && $0 != "0" } ?? false
    static var packageRoot: URL { RoomdProcess.packageRoot }
    static var shippedConfig: String { RoomdProcess.shippedTemplatePath }

    /// The shipped template with a join deadline a loaded machine cannot race
    /// (300 s instead of 10 s), for tests that start a `RoomdProcess` of their
    /// own and connect to it: the deadline itself has its own test.
    static func patientTemplate() throws -> RoomdProcess.Template {
        let text = try String(contentsOfFile: shippedConfig, encoding: .utf8)
        return .json(try mergeSettings(text, #"{"limits":{"join_timeout_s":300}}"#))
    }

    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["ROOMD_BIN"], !path.isEmpty { return path }
        return packageRoot.appendingPathComponent(".build/debug/roomd").path
    }

    static let defaultSecret = Array("0123456789abcdef0123456789abcdef-test".utf8)

    /// The daemon (in a cluster run: the last node, which answers HTTP).
    let roomd: RoomdProcess
    /// Its process: tests signal it and ask whether it still runs.
    var process: ChildProcess { roomd.process }
    var port: Int { roomd.port }
    var secret: [UInt8] { roomd.secret }
    var directory: URL { roomd.directory }
    /// In a cluster run: the nodes (this one last) and the bus.
    let nodes: [Daemon]
    let nats: NatsServerProcess?
    private let turn = Atomic<Int>(0)
    /// The next node's WebSocket URL (the only one without a cluster).
    var url: String {
        guard !nodes.isEmpty else { return "ws://127.0.0.1:\(port)/ws" }
        let index = turn.add(1, ordering: .relaxed).oldValue % nodes.count
        return "ws://127.0.0.1:\(nodes[index].port)/ws"
    }

    /// How long a test's client waits for an answer or a push when the test
    /// gives no timeout (`Daemon.client()`, `RoomClient.connect(…,
    /// defaultTimeout:)`): long enough that only a real hang reaches it on
    /// a machine running 24 tests at once, where an app's 5 s is not.
    static let waitTimeout: Duration = .seconds(30)

    /// Starts roomd with the shipped template, or with `template` (JSON text).
    /// `settings` (JSON object text) is merged into the template's settings;
    /// `listeningHost` is the host the listening line must name; `limits`
    /// are `ulimit` options of the daemon alone (e.g. "-n 128").
    ///
    /// The start blocks (a child process, its listening line, a cluster's
    /// forming), so it runs on a thread of its own: a blocked thread of the
    /// 2-thread test pool holds up every other test's awaits.
    static func start(
        template: String? = nil,
        settings: String? = nil,
        arguments: [String] = [],
        environment: [String: String] = [:],
        secret: [UInt8] = defaultSecret,
        listeningHost: String = "127.0.0.1",
        limits: [String] = [],
        singleProcess: Bool = false
    ) async throws -> Daemon {
        try await onThread {
            try startBlocking(
                template: template,
                settings: settings,
                arguments: arguments,
                environment: environment,
                secret: secret,
                listeningHost: listeningHost,
                limits: limits,
                singleProcess: singleProcess
            )
        }
    }

    private static func startBlocking(
        template: String?,
        settings: String?,
        arguments: [String],
        environment: [String: String],
        secret: [UInt8],
        listeningHost: String,
        limits: [String],
        singleProcess: Bool
    ) throws -> Daemon {
        guard clusterRun, !singleProcess, limits.isEmpty, !arguments.contains("--cluster") else {
            return try startOne(
                template: template,
                settings: settings,
                arguments: arguments,
                environment: environment,
                secret: secret,
                listeningHost: listeningHost,
                limits: limits
            )
        }
        let nats = try NatsServerProcess.start()
        var started: [Daemon] = []
        do {
            for id in ["n1", "n2", "n3"] {
                started.append(
                    try startOne(
                        template: template,
                        settings: settings,
                        arguments: arguments + ["--cluster", nats.url, "--node-id", id],
                        environment: environment,
                        secret: secret,
                        listeningHost: listeningHost,
                        limits: []
                    )
                )
            }
            try waitForCluster(started)
        } catch {
            for node in started { _ = node.stop(signal: SIGKILL) }
            nats.remove()
            throw error
        }
        // The last node answers HTTP; `url` starts with the first.
        return Daemon(roomd: started[2].roomd, nodes: started, nats: nats)
    }

    /// Waits until every node sees all of them on a connected bus.
    private static func waitForCluster(_ nodes: [Daemon]) throws {
        let deadline = Date().addingTimeInterval(15)
        for node in nodes {
            while true {
                let request = Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
                let answer = (try? rawExchange(port: node.port, request, timeout: 1))?.response ?? ""
                if answer.hasPrefix("HTTP/1.1 200"), answer.contains("\"nodes\":\(nodes.count),\"connected\":true") {
                    break
                }
                if Date() > deadline {
                    throw DaemonError(description: "the cluster did not form: \(answer) \(node.stderr)")
                }
                usleep(50_000)
            }
        }
    }

    private static func startOne(
        template: String?,
        settings: String?,
        arguments: [String],
        environment: [String: String],
        secret: [UInt8],
        listeningHost: String,
        limits: [String]
    ) throws -> Daemon {
        var text = try template ?? String(contentsOfFile: shippedConfig, encoding: .utf8)
        // Protocol tests hold unjoined connections for as long as a loaded
        // machine makes them take: the join deadline (10 s) has its own test.
        if !text.contains("join_timeout_s"), !(settings ?? "").contains("join_timeout_s") {
            text = try mergeSettings(text, #"{"limits":{"join_timeout_s":300}}"#)
        }
        if let settings { text = try mergeSettings(text, settings) }
        let limits = try limits.map { option in
            let parts = option.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count == 2 else {
                throw DaemonError(description: "a limit is \"-OPTION VALUE\", got \"\(option)\"")
            }
            return RoomdProcess.ResourceLimit(ulimit: String(parts[0]), String(parts[1]))
        }
        let roomd = try RoomdProcess.start(
            binary: binary,
            template: .json(text),
            secret: secret,
            host: listeningHost,
            arguments: ["--log-level", "debug"] + arguments,
            environment: environment,
            limits: limits
        )
        guard roomd.listeningURL.hasPrefix("ws://\(listeningHost):") else {
            roomd.stop(signal: SIGKILL)
            throw DaemonError(description: "unexpected listening line: roomd listening on \(roomd.listeningURL)")
        }
        return Daemon(roomd: roomd, nodes: [], nats: nil)
    }

    private init(roomd: RoomdProcess, nodes: [Daemon], nats: NatsServerProcess?) {
        self.roomd = roomd
        self.nodes = nodes
        self.nats = nats
    }

    /// A daemon a test leaves running dies as in a crash (no drain to wait for).
    deinit {
        for node in nodes.dropLast() { node.roomd.stop(signal: SIGKILL) }
        nats?.remove()
        roomd.stop(signal: SIGKILL)
    }

    var stderr: String {
        if !nodes.isEmpty { return nodes.map(\.roomd.stderr).joined() }
        return roomd.stderr
    }

    /// Waits until roomd logged `text` at least `count` times (every node's
    /// log in a cluster run): the way to know roomd saw what a client did
    /// when nothing is pushed for it, instead of sleeping and hoping.
    func waitForLog(_ text: String, count: Int = 1, timeout: Duration = Daemon.waitTimeout) async throws {
        let deadline = ContinuousClock.now + timeout
        while stderr.components(separatedBy: text).count - 1 < count {
            guard ContinuousClock.now < deadline else {
                throw DaemonError(description: "roomd did not log \"\(text)\" \(count) time(s) within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits until roomd saw `count` dropped connections in all and put their
    /// peers in their reconnect grace (a drop is pushed to nobody).
    func waitForGraces(_ count: Int = 1) async throws {
        try await waitForLog("peer disconnected, in reconnect grace", count: count)
    }

    /// Resident memory of the daemon, in KiB.
    var residentKiB: Int {
        let status = (try? String(contentsOfFile: "/proc/\(roomd.pid)/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
        }
        return 0
    }

    // MARK: tokens and peers

    func token(
        room: String = "room-1",
        user: String,
        role: String,
        name: String? = nil,
        restrictions: String? = nil
    ) throws -> String {
        try TokenMinter(secret: secret).appToken(
            room: room,
            user: user,
            role: role,
            name: name,
            restrictions: restrictions
        )
    }

    /// A connected client whose calls and waits last `timeout` when given
    /// none (`Daemon.waitTimeout` unless set).
    func client(timeout: Duration = Daemon.waitTimeout) async throws -> RoomClient {
        try await RoomClient.connect(to: url, defaultTimeout: timeout)
    }

    /// Connects and joins; returns the client and the join result. `timeout`
    /// bounds the connection and the join (a flood test's attempts that may
    /// fail are short; everything else waits as long as only a hang does).
    func join(
        _ user: String,
        as role: String,
        room: String = "room-1",
        name: String? = nil,
        restrictions: String? = nil,
        timeout: Duration = Daemon.waitTimeout
    ) async throws -> (client: RoomClient, result: JSON) {
        let client = try await client(timeout: timeout)
        let token = try token(room: room, user: user, role: role, name: name, restrictions: restrictions)
        let result = try await client.call("join", ["token": .string(token)])
        return (client, result)
    }

    // MARK: lifecycle

    /// Sends `signal` and waits for the exit; returns (status, seconds taken),
    /// status -1 when it outlived `timeout` and was SIGKILLed.
    @available(*, noasync, message: "blocks a thread of the test pool: use the async overload")
    func stop(signal: Int32 = SIGTERM, timeout: Double = 5) -> (status: Int32, seconds: Double) {
        if !nodes.isEmpty {
            // Every node at once; the answer is the HTTP node's (this process).
            for node in nodes.dropLast() { kill(node.roomd.pid, signal) }
            let result = stopOne(signal: signal, timeout: timeout)
            for node in nodes.dropLast() { _ = node.stopOne(signal: signal, timeout: timeout) }
            nats?.remove()
            return result
        }
        return stopOne(signal: signal, timeout: timeout)
    }

    /// `stop(signal:timeout:)` off the test pool (OnThread.swift): it waits for the exit.
    func stop(signal: Int32 = SIGTERM, timeout: Double = 5) async -> (status: Int32, seconds: Double) {
        let exit = await onThread { () -> [Double] in
            let (status, seconds) = self.stop(signal: signal, timeout: timeout)
            return [Double(status), seconds]
        }
        return (Int32(exit[0]), exit[1])
    }

    private func stopOne(signal: Int32, timeout: Double) -> (status: Int32, seconds: Double) {
        let exit = roomd.stop(signal: signal, timeout: timeout)
        return (exit.timedOut ? -1 : exit.status, exit.seconds)
    }

    /// The shipped template with its roles edited.
    static func shippedTemplate(_ edit: (inout [String: [String: Any]]) -> Void) throws -> String {
        var root =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: shippedConfig)))
            as! [String: Any]
        var roles = root["roles"] as! [String: [String: Any]]
        edit(&roles)
        root["roles"] = roles
        return String(decoding: try JSONSerialization.data(withJSONObject: root), as: UTF8.self)
    }

    /// Merges `settings` (a JSON object) into the template's `settings`, one level deep per section.
    static func mergeSettings(_ template: String, _ settings: String) throws -> String {
        var root = try JSONSerialization.jsonObject(with: Data(template.utf8)) as! [String: Any]
        let extra = try JSONSerialization.jsonObject(with: Data(settings.utf8)) as! [String: Any]
        var current = root["settings"] as? [String: Any] ?? [:]
        for (section, value) in extra {
            var merged = current[section] as? [String: Any] ?? [:]
            for (key, inner) in value as! [String: Any] { merged[key] = inner }
            current[section] = merged
        }
        root["settings"] = current
        return String(decoding: try JSONSerialization.data(withJSONObject: root), as: UTF8.self)
    }
}

struct DaemonError: Error, CustomStringConvertible { var description: String }

/// Runs a command to completion; returns (exit status, stdout, stderr).
@available(*, noasync, message: "blocks a thread of the test pool: use the async overload")
func runCommand(
    _ path: String,
    _ arguments: [String],
    environment: [String: String]? = nil,
    timeout: Double = 10
) throws -> (status: Int32, out: String, err: String) {
    let (status, stdout, stderr) = try runTool(path, arguments, environment: environment, timeout: timeout)
    return (status, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
}

/// `runCommand` off the test pool (OnThread.swift): it waits for the command.
func runCommand(
    _ path: String,
    _ arguments: [String],
    environment: [String: String]? = nil,
    timeout: Double = 10
) async throws -> (status: Int32, out: String, err: String) {
    let result = try await onThread { () throws -> [String] in
        let (status, out, err) = try runCommand(path, arguments, environment: environment, timeout: timeout)
        return ["\(status)", out, err]
    }
    return (Int32(result[0]) ?? -1, result[1], result[2])
}

extension RoomClient {
    /// The error code a call fails with (nil if it succeeds).
    func errorCode(_ method: String, _ params: JSON? = nil) async throws -> Int? {
        do {
            _ = try await call(method, params)
            return nil
        } catch RoomClientError.rpc(let code, _, _) {
            return code
        }
    }

    /// The full error of a call that must fail.
    func failure(_ method: String, _ params: JSON? = nil) async throws -> (code: Int, message: String) {
        do {
            let result = try await call(method, params)
            throw DaemonError(description: "\(method) succeeded unexpectedly: \(result)")
        } catch RoomClientError.rpc(let code, let message, _) {
            return (code, message)
        }
    }
}
