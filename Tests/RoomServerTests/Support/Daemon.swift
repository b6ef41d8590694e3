import RoomTokens
import Foundation
import RoomClient
import RoomServer
import RoomWire
import Testing

/// A real `roomd` process on a free port, started as a user would:
/// `roomd --config FILE --port 0 --secret-file F`, reading its listening line.
final class Daemon: @unchecked Sendable {
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
    var url: String { "ws://127.0.0.1:\(port)/ws" }

    /// Starts roomd with the shipped template, or with `template` (JSON text).
    /// `settings` (JSON object text) is merged into the shipped template's settings.
    static func start(template: String? = nil, settings: String? = nil, arguments: [String] = [],
                      environment: [String: String] = [:], secret: [UInt8] = defaultSecret,
                      listeningHost: String = "127.0.0.1", limits: [String] = []) throws -> Daemon {
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
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    var stderr: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

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

/// Reads one line from `fd`, waiting at most `timeoutMillis`.
func readLine(_ fd: Int32, timeoutMillis: Int) -> String? {
    var bytes: [UInt8] = []
    let deadline = Date().addingTimeInterval(Double(timeoutMillis) / 1000)
    while Date() < deadline {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&pfd, 1, 100)
        if ready <= 0 { continue }
        var byte: UInt8 = 0
        if read(fd, &byte, 1) != 1 { return nil }
        if byte == 0x0A { return String(decoding: bytes, as: UTF8.self) }
        bytes.append(byte)
    }
    return nil
}

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
