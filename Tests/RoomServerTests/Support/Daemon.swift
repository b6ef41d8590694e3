import RoomTokens
import Foundation
import RoomClient
import RoomdTesting
import RoomServer
import RoomWire
import Synchronization
import Testing

/// A real `roomd` process on a free port, started as a user would:
/// `roomd --config FILE --port 0 --secret-file F`, reading its listening line.
///
/// With `ROOMD_TEST_CLUSTER=1` (the second run of `make test`), a daemon is
/// a cluster instead (PROTOCOL.md section 18): a nats-server with JetStream
/// and three nodes started with the same arguments. Each client connection
/// goes to the next node in turn (`url`), so a room's peers are spread
/// round-robin over the three; HTTP goes to the last node (`port`), which
/// is usually not the room's home. Tests of one process's own behaviour
/// (signals, limits, logs, metrics, the command line) opt out with
/// `singleProcess: true` and run on one daemon in both runs.
final class Daemon: @unchecked Sendable {
    static let clusterRun = ProcessInfo.processInfo.environment["ROOMD_TEST_CLUSTER"].map { !$0.isEmpty && $0 != "0" } ?? false
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let shippedConfig = packageRoot.appendingPathComponent("config/roles.json").path

    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["ROOMD_BIN"], !path.isEmpty { return path }
        return packageRoot.appendingPathComponent(".build/debug/roomd").path
    }

    static let defaultSecret = Array("0123456789abcdef0123456789abcdef-test".utf8)

    let process: Process
    let port: Int
    let secret: [UInt8]
    let directory: URL
    private let stderrFile: URL
    /// In a cluster run: the other nodes (all three, this one first) and the bus.
    private(set) var nodes: [Daemon] = []
    private(set) var nats: NatsServerProcess?
    private let turn = Atomic<Int>(0)
    /// The next node's WebSocket URL (the only one without a cluster).
    var url: String {
        guard !nodes.isEmpty else { return "ws://127.0.0.1:\(port)/ws" }
        let index = turn.add(1, ordering: .relaxed).oldValue % nodes.count
        return "ws://127.0.0.1:\(nodes[index].port)/ws"
    }

    /// Starts roomd with the shipped template, or with `template` (JSON text).
    /// `settings` (JSON object text) is merged into the shipped template's settings.
    static func start(template: String? = nil, settings: String? = nil, arguments: [String] = [],
                      environment: [String: String] = [:], secret: [UInt8] = defaultSecret,
                      listeningHost: String = "127.0.0.1", limits: [String] = [],
                      singleProcess: Bool = false) throws -> Daemon {
        guard clusterRun, !singleProcess, limits.isEmpty, !arguments.contains("--cluster") else {
            return try startOne(template: template, settings: settings, arguments: arguments, environment: environment,
                                secret: secret, listeningHost: listeningHost, limits: limits)
        }
        let nats = try NatsServerProcess.start()
        var started: [Daemon] = []
        do {
            for id in ["n1", "n2", "n3"] {
                started.append(try startOne(template: template, settings: settings,
                                            arguments: arguments + ["--cluster", nats.url, "--node-id", id],
                                            environment: environment, secret: secret, listeningHost: listeningHost, limits: []))
            }
            try waitForCluster(started)
        } catch {
            for node in started { _ = node.stop(signal: SIGKILL) }
            nats.remove()
            throw error
        }
        // The last node answers HTTP; `url` starts with the first.
        let daemon = Daemon(process: started[2].process, port: started[2].port, secret: secret,
                            directory: started[2].directory, stderrFile: started[2].stderrFile)
        daemon.nodes = started
        daemon.nats = nats
        return daemon
    }

    /// Waits until every node sees all of them on a connected bus.
    private static func waitForCluster(_ nodes: [Daemon]) throws {
        let deadline = Date().addingTimeInterval(15)
        for node in nodes {
            while true {
                let request = Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
                let answer = (try? rawExchange(port: node.port, request, timeout: 1))?.response ?? ""
                if answer.hasPrefix("HTTP/1.1 200"), answer.contains("\"nodes\":\(nodes.count),\"connected\":true") { break }
                if Date() > deadline { throw DaemonError(description: "the cluster did not form: \(answer) \(node.stderr)") }
                usleep(50_000)
            }
        }
    }

    private static func startOne(template: String?, settings: String?, arguments: [String], environment: [String: String],
                                 secret: [UInt8], listeningHost: String, limits: [String]) throws -> Daemon {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roomd-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("roles.json")
        var text = try template ?? String(contentsOfFile: shippedConfig, encoding: .utf8)
        // Protocol tests hold unjoined connections for as long as a loaded
        // machine makes them take: the join deadline (10 s) has its own test.
        if !text.contains("join_timeout_s"), !(settings ?? "").contains("join_timeout_s") {
            text = try mergeSettings(text, #"{"limits":{"join_timeout_s":300}}"#)
        }
        if let settings { text = try mergeSettings(text, settings) }
        try text.write(to: config, atomically: true, encoding: .utf8)
        let secretFile = directory.appendingPathComponent("secret")
        try Data(secret).write(to: secretFile)

        let process = Process()
        let daemonArguments = ["--config", config.path, "--port", "0", "--secret-file", secretFile.path,
                                "--log-level", "debug"] + arguments
        if limits.isEmpty {
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = daemonArguments
        } else {
            // `ulimit` options (e.g. "-s 256", "-n 64") for the daemon alone, then exec it.
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            let ulimits = limits.map { "ulimit \($0) && " }.joined()
            process.arguments = ["-c", "\(ulimits)exec \"$0\" \"$@\"", binary] + daemonArguments
        }
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "ROOMD_SECRET")
        env.removeValue(forKey: "ROOMD_ACCESS_KEY")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let stdout = Pipe()
        let stderrFile = directory.appendingPathComponent("stderr.log")
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        try process.run()
        guard let line = readLine(stdout.fileHandleForReading.fileDescriptor, timeoutMillis: 10_000) else {
            process.terminate()
            let log = (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
            throw DaemonError(description: "roomd printed no listening line; stderr: \(log)")
        }
        let prefix = "roomd listening on ws://\(listeningHost):"
        guard line.hasPrefix(prefix), line.hasSuffix("/ws"), let port = Int(line.dropFirst(prefix.count).dropLast(3))
        else {
            process.terminate()
            throw DaemonError(description: "unexpected listening line: \(line)")
        }
        return Daemon(process: process, port: port, secret: secret, directory: directory, stderrFile: stderrFile)
    }

    private init(process: Process, port: Int, secret: [UInt8], directory: URL, stderrFile: URL) {
        self.process = process
        self.port = port
        self.secret = secret
        self.directory = directory
        self.stderrFile = stderrFile
    }

    deinit {
        for node in nodes.dropLast() where node.process.isRunning {
            kill(node.process.processIdentifier, SIGKILL)
            node.process.waitUntilExit()
        }
        nats?.remove()
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    var stderr: String {
        if !nodes.isEmpty { return nodes.map { (try? String(contentsOf: $0.stderrFile, encoding: .utf8)) ?? "" }.joined() }
        return (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
    }

    /// Resident memory of the daemon, in KiB.
    var residentKiB: Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
        }
        return 0
    }

    // MARK: tokens and peers

    func token(room: String = "room-1", user: String, role: String, name: String? = nil,
               restrictions: String? = nil) throws -> String {
        try TokenMinter(secret: secret).appToken(room: room, user: user, role: role, name: name,
                                                       restrictions: restrictions)
    }

    func client() async throws -> RoomClient { try await RoomClient.connect(to: url) }

    /// Connects and joins; returns the client and the join result.
    func join(_ user: String, as role: String, room: String = "room-1", name: String? = nil,
              restrictions: String? = nil) async throws -> (client: RoomClient, result: JSON) {
        let client = try await client()
        let token = try token(room: room, user: user, role: role, name: name, restrictions: restrictions)
        let result = try await client.call("join", ["token": .string(token)])
        return (client, result)
    }

    // MARK: lifecycle

    /// Sends `signal` and waits for the exit; returns (status, seconds taken).
    func stop(signal: Int32 = SIGTERM, timeout: Double = 5) -> (status: Int32, seconds: Double) {
        if !nodes.isEmpty {
            // Every node at once; the answer is the HTTP node's (this process).
            for node in nodes.dropLast() { kill(node.process.processIdentifier, signal) }
            let result = stopOne(signal: signal, timeout: timeout)
            for node in nodes.dropLast() { _ = node.stopOne(signal: signal, timeout: timeout) }
            nats?.remove()
            return result
        }
        return stopOne(signal: signal, timeout: timeout)
    }

    private func stopOne(signal: Int32, timeout: Double) -> (status: Int32, seconds: Double) {
        let start = Date()
        kill(process.processIdentifier, signal)
        while process.isRunning, Date().timeIntervalSince(start) < timeout { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return (-1, Date().timeIntervalSince(start))
        }
        return (process.terminationStatus, Date().timeIntervalSince(start))
    }

    /// The shipped template with its roles edited.
    static func shippedTemplate(_ edit: (inout [String: [String: Any]]) -> Void) throws -> String {
        var root = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: shippedConfig))) as! [String: Any]
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
func runCommand(_ path: String, _ arguments: [String], environment: [String: String]? = nil,
                timeout: Double = 10) throws -> (status: Int32, out: String, err: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let start = Date()
    while process.isRunning, Date().timeIntervalSince(start) < timeout { usleep(10_000) }
    if process.isRunning { process.terminate() }
    process.waitUntilExit()
    let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    return (process.terminationStatus, stdout, stderr)
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
