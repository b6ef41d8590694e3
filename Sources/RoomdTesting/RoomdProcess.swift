import Foundation
@_exported import RoomTokens
import Synchronization

/// A real `roomd` on a free port, for integration tests: started the way a
/// user starts it (`roomd --config FILE --port 0 --secret-file F`), with a
/// fresh secret and template in its own temporary directory, so harnesses
/// can run in parallel.
///
/// The daemon goes when the test goes: `stop()` sends SIGTERM; a process
/// that exits without calling it stops its daemons on the way out (`atexit`);
/// and one that is killed closes the daemon's standard input, which roomd
/// watches (`--exit-with-stdin`).
///
/// ```swift
/// let roomd = try RoomdProcess.start()
/// defer { roomd.stop() }
/// let token = try roomd.tokens.appToken(room: "show", user: "host-1", role: "host")
/// ```
public final class RoomdProcess: Sendable {
    /// The template the daemon serves.
    public enum Template: Sendable {
        /// `config/roles.json` of this package: host, guest, viewer, moderator.
        case shipped
        /// A template file.
        case file(String)
        /// A template as JSON text.
        case json(String)
    }

    /// `ws://127.0.0.1:PORT/ws`.
    public let url: String
    public let port: Int
    /// The HS256 secret the daemon verifies tokens with.
    public let secret: [UInt8]
    /// Mints tokens the daemon accepts.
    public var tokens: TokenMinter { TokenMinter(secret: secret) }
    /// The temporary directory with the template, secret and stderr log.
    public let directory: URL
    public var pid: Int32 { process.processIdentifier }

    private let process: Process
    private let stdinPipe: Pipe
    private let stderrFile: URL

    /// Starts roomd and waits for its listening line (at most `timeout` s).
    /// `binary` nil: see `RoomdProcess.locateBinary`. `arguments` are added
    /// to the command line (e.g. `["--log-level", "debug"]`).
    public static func start(binary: String? = nil, template: Template = .shipped, arguments: [String] = [],
                             environment: [String: String] = [:], timeout: Double = 10) throws -> RoomdProcess {
        let executable = try locateBinary(binary)
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("roomd-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("roles.json")
        switch template {
        case .shipped: try FileManager.default.copyItem(atPath: shippedTemplatePath, toPath: config.path)
        case .file(let path): try FileManager.default.copyItem(atPath: path, toPath: config.path)
        case .json(let text): try text.write(to: config, atomically: true, encoding: .utf8)
        }
        var secret = [UInt8](repeating: 0, count: 32)
        for index in secret.indices { secret[index] = UInt8.random(in: 0x21...0x7E) }
        let secretFile = directory.appendingPathComponent("secret")
        _ = FileManager.default.createFile(atPath: secretFile.path, contents: Data(secret),
                                       attributes: [.posixPermissions: 0o600])
        let stderrFile = directory.appendingPathComponent("stderr.log")
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--config", config.path, "--port", "0", "--secret-file", secretFile.path,
                             "--exit-with-stdin"] + arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "ROOMD_SECRET")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let stdout = Pipe(), stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        try process.run()
        Self.running.withLock { $0[process.processIdentifier] = process }
        let log = { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }
        guard let line = readLine(stdout.fileHandleForReading.fileDescriptor, timeoutMillis: Int(timeout * 1000)) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw RoomdProcessError(description: "roomd printed no listening line within \(timeout) s; stderr:\n\(log())")
        }
        guard let port = line.split(separator: ":").last.flatMap({ Int($0.dropLast(3)) }), line.hasSuffix("/ws") else {
            kill(process.processIdentifier, SIGKILL)
            throw RoomdProcessError(description: "unexpected listening line \"\(line)\"; stderr:\n\(log())")
        }
        return RoomdProcess(process: process, stdin: stdin, port: port, secret: secret, directory: directory,
                            stderrFile: stderrFile)
    }

    private init(process: Process, stdin: Pipe, port: Int, secret: [UInt8], directory: URL, stderrFile: URL) {
        self.process = process
        self.stdinPipe = stdin
        self.port = port
        self.url = "ws://127.0.0.1:\(port)/ws"
        self.secret = secret
        self.directory = directory
        self.stderrFile = stderrFile
    }

    deinit { stop() }

    /// What the daemon wrote to stderr so far (its log): put it in failure messages.
    public var stderr: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    public var isRunning: Bool { process.isRunning }

    /// SIGTERM, then waits (SIGKILL after `timeout` s). Returns the exit
    /// status (0 after a clean shutdown). Idempotent.
    @discardableResult
    public func stop(timeout: Double = 5) -> Int32 {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning, Date() < deadline { usleep(5_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        Self.running.withLock { _ = $0.removeValue(forKey: process.processIdentifier) }
        try? FileManager.default.removeItem(at: directory)
        return process.terminationStatus
    }

    // MARK: finding the binary

    /// The roomd binary: `explicit`, else `$ROOMD_BIN`, else a `roomd` built
    /// next to the running program (`swift build --product roomd` puts it
    /// beside your test bundle), else `.build/debug/roomd` of the current
    /// directory or of this package.
    public static func locateBinary(_ explicit: String? = nil) throws -> String {
        var candidates: [String] = []
        // An explicit path that is not there fails: it does not fall back to $ROOMD_BIN.
        if let explicit {
            candidates.append(explicit)
        } else if let env = ProcessInfo.processInfo.environment["ROOMD_BIN"], !env.isEmpty {
            candidates.append(env)
        }
        if explicit == nil, candidates.isEmpty {
            var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            for _ in 0..<4 {  // the program may sit inside a bundle (`X.xctest/…`)
                candidates.append(folder.appendingPathComponent("roomd").path)
                folder.deleteLastPathComponent()
            }
            candidates.append(FileManager.default.currentDirectoryPath + "/.build/debug/roomd")
            candidates.append(packageRoot.appendingPathComponent(".build/debug/roomd").path)
        }
        for path in candidates where FileManager.default.isExecutableFile(atPath: path) {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue { return path }
        }
        throw RoomdProcessError(description: "no roomd binary found (looked at \(candidates.joined(separator: ", "))): "
            + "build it with `swift build --product roomd`, or set ROOMD_BIN")
    }

    /// This package's root (RoomdTesting is built from source, so its file is there).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static var shippedTemplatePath: String { packageRoot.appendingPathComponent("config/roles.json").path }

    // MARK: stopping with the test process

    /// Daemons started and not stopped yet, by pid.
    private static let running: Mutex<[Int32: Process]> = {
        atexit { RoomdProcess.stopAll() }
        return Mutex([:])
    }()

    /// SIGTERM to every daemon still running (at exit).
    static func stopAll() {
        let processes = running.withLock { Array($0.values) }
        for process in processes where process.isRunning { kill(process.processIdentifier, SIGTERM) }
    }
}

public struct RoomdProcessError: Error, CustomStringConvertible, Sendable {
    public var description: String
}

/// One line from `fd` (without the newline), or nil at EOF, on an error or
/// when `timeoutMillis` pass first. Reads byte by byte, so nothing after
/// the line is consumed. RoomdProcess reads the listening line with it;
/// this package's tests read other processes' output.
package func readLine(_ fd: Int32, timeoutMillis: Int) -> String? {
    var bytes: [UInt8] = []
    let deadline = Date().addingTimeInterval(Double(timeoutMillis) / 1000)
    while true {
        let left = deadline.timeIntervalSinceNow
        guard left > 0 else { return nil }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, Int32(min(max(1, left * 1000), 1000)))
        if ready < 0, errno == EINTR { continue }
        guard ready >= 0 else { return nil }
        if ready == 0 { continue }  // the deadline decides
        var byte: UInt8 = 0
        let count = read(fd, &byte, 1)
        if count < 0, errno == EINTR { continue }
        guard count == 1 else { return nil }
        if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
        bytes.append(byte)
    }
}
