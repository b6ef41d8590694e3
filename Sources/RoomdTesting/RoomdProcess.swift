import Foundation
@_exported import RoomTokens
import Synchronization

/// A real `roomd` on a free port, for integration tests: started the way a
/// user starts it (`roomd --config FILE --port 0 --secret-file F`), with its
/// secret (a fresh one unless given) and template in its own temporary
/// directory, so harnesses can run in parallel.
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

    /// A resource limit of the daemon alone: `/bin/sh` runs `ulimit OPTION
    /// VALUE` for each limit, then execs roomd (same pid), so the test
    /// process keeps its own limits. `ulimit` without `-H` or `-S` sets the
    /// soft and the hard limit; a limit the shell refuses fails the start.
    public struct ResourceLimit: Sendable, Hashable, CustomStringConvertible {
        /// The option of `ulimit` in `/bin/sh`: `-n`, `-s`, `-v`, ….
        public var option: String
        /// Its value in the option's unit, or `unlimited`.
        public var value: String

        /// `ulimit OPTION VALUE`, e.g. `ResourceLimit(ulimit: "-v", "1048576")`.
        public init(ulimit option: String, _ value: String) {
            self.option = option
            self.value = value
        }

        /// At most `count` open files (`ulimit -n`). roomd sizes its socket
        /// budget from this limit when it starts.
        public static func openFiles(_ count: Int) -> ResourceLimit { ResourceLimit(ulimit: "-n", "\(count)") }

        /// A main-thread stack of `kib` KiB (`ulimit -s`); roomd's first
        /// service thread is its main thread.
        public static func stackKiB(_ kib: Int) -> ResourceLimit { ResourceLimit(ulimit: "-s", "\(kib)") }

        public var description: String { "ulimit \(option) \(value)" }
    }

    /// How a stopped daemon ended (`stop(signal:timeout:)`).
    public struct Exit: Sendable, Equatable {
        /// The exit status (0 after a clean shutdown), or the number of the
        /// signal that ended the daemon (9 after a SIGKILL).
        public var status: Int32
        /// Seconds from the signal to the exit.
        public var seconds: Double
        /// The daemon outlived the timeout and was ended with SIGKILL.
        public var timedOut: Bool
    }

    /// The URL to connect to: `ws://HOST:PORT/ws`, HOST as in the listening
    /// line (`ws://127.0.0.1:PORT/ws` by default); a wildcard address
    /// (`0.0.0.0`, `::`) becomes the loopback address of its family.
    public let url: String
    /// The URL of the daemon's listening line, verbatim
    /// (`roomd listening on ws://HOST:PORT/ws`).
    public let listeningURL: String
    public let port: Int
    /// The HS256 secret the daemon verifies tokens with.
    public let secret: [UInt8]
    /// Mints tokens the daemon accepts.
    public var tokens: TokenMinter { TokenMinter(secret: secret) }
    /// The temporary directory with the template (`roles.json`: edit it and
    /// send SIGHUP to reload), the secret (`secret`) and the stderr log
    /// (`stderr.log`). `stop` deletes it.
    public let directory: URL
    /// The daemon's process id (for signals, /proc, prlimit).
    public var pid: Int32 { process.processIdentifier }

    /// The daemon's process (for this package's tests).
    package let process: ChildProcess
    /// The write end of the daemon's stdin: it goes with this object (or
    /// this process), and roomd exits on the EOF (`--exit-with-stdin`).
    private let stdinPipe: ChildPipe
    private let stderrFile: URL
    /// How the daemon ended: set by the first `stop`, held while it stops.
    private let outcome = Mutex<Exit?>(nil)
    /// All of the log, read by `stop` before it deletes the directory.
    private let finalLog = Mutex<String?>(nil)

    /// Starts roomd and waits for its listening line (at most `timeout` s):
    /// `roomd --config DIR/roles.json --port 0 --secret-file DIR/secret
    /// --exit-with-stdin --host HOST ARGUMENTS`, in a fresh directory DIR.
    /// The daemon inherits this process's environment without
    /// `ROOMD_SECRET` and `ROOMD_ACCESS_KEY` (the secret is `secret`, and
    /// tokens from `tokens` carry no access key), plus `environment`.
    ///
    /// - Parameters:
    ///   - binary: the roomd executable; nil: see `RoomdProcess.locateBinary`.
    ///   - template: the role template the daemon serves.
    ///   - secret: the HS256 secret (at least 32 bytes, as roomd requires);
    ///     nil: a fresh random one. Either way it is in `secret`.
    ///   - host: the address to listen on (`--host`): `0.0.0.0` or `::` for
    ///     every interface, `localhost`, an interface's address.
    ///   - arguments: added to the command line after the ones above (the
    ///     last of a repeated option wins), e.g. `["--log-level", "debug"]`.
    ///   - environment: variables set for the daemon (over the inherited ones).
    ///   - limits: resource limits of the daemon alone, e.g. `[.openFiles(128)]`.
    ///   - testMode: roomd's test mode (`--test-mode`, a manual clock that
    ///     `advance(by:)` moves, seeded ids); nil: none.
    ///   - webhooks: a ``WebhookSink`` the daemon sends its webhooks to (the
    ///     template's `settings.webhooks.url`); the sink verifies with `secret`.
    ///   - hooks: a ``HookServer`` the daemon asks before it acts (section 30: the
    ///     template's `settings.hooks.url`, other `settings.hooks` fields as in the
    ///     template); the server verifies with `secret`.
    ///   - timeout: seconds to wait for the listening line.
    public static func start(
        binary: String? = nil,
        template: Template = .shipped,
        secret: [UInt8]? = nil,
        host: String = "127.0.0.1",
        arguments: [String] = [],
        environment: [String: String] = [:],
        limits: [ResourceLimit] = [],
        testMode: TestModeOptions? = nil,
        webhooks: WebhookSink? = nil,
        hooks: HookServer? = nil,
        timeout: Double = 10
    ) throws -> RoomdProcess {
        TimeoutIssues.install()
        let executable = try locateBinary(binary)
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("roomd-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let removeDirectory = { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("roles.json")
        let secretFile = directory.appendingPathComponent("secret")
        let stderrFile = directory.appendingPathComponent("stderr.log")
        let secret = secret ?? (0..<32).map { _ in UInt8.random(in: 0x21...0x7E) }
        do {
            switch template {
            case .shipped: try FileManager.default.copyItem(atPath: shippedTemplatePath, toPath: config.path)
            case .file(let path): try FileManager.default.copyItem(atPath: path, toPath: config.path)
            case .json(let text): try text.write(to: config, atomically: true, encoding: .utf8)
            }
            if let webhooks {
                // The template as given, with settings.webhooks.url the sink's.
                if case .json(let text) = try webhooks.template(from: config.path) {
                    try text.write(to: config, atomically: true, encoding: .utf8)
                }
                webhooks.secret = secret
            }
            if let hooks {
                // The template as given, with settings.hooks.url the server's.
                if case .json(let text) = try hooks.template(from: config.path) {
                    try text.write(to: config, atomically: true, encoding: .utf8)
                }
                hooks.secret = secret
            }
            // roomd ignores one trailing newline of a secret file: a secret
            // that ends with one gets another, so the daemon reads all of it.
            let contents = secret.last == UInt8(ascii: "\n") ? secret + [UInt8(ascii: "\n")] : secret
            guard
                FileManager.default.createFile(
                    atPath: secretFile.path,
                    contents: Data(contents),
                    attributes: [.posixPermissions: 0o600]
                ),
                FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
            else {
                throw RoomdProcessError(description: "cannot write to \(directory.path)")
            }
        } catch {
            removeDirectory()
            throw error
        }

        let daemonArguments =
            [
                "--config", config.path, "--port", "0", "--secret-file", secretFile.path,
                "--exit-with-stdin", "--host", host,
            ] + (testMode?.arguments ?? []) + arguments
        let launched: (executable: String, arguments: [String])
        if limits.isEmpty {
            launched = (executable, daemonArguments)
        } else {
            // The limits reach the shell as arguments (nothing is quoted into
            // the script); `exec` keeps the pid.
            let script =
                #"n=$1; shift; while [ "$n" -gt 0 ]; do ulimit "$1" "$2" || exit 126; shift 2; n=$((n - 1)); done; exec "$@""#
            launched = (
                "/bin/sh",
                ["-c", script, "roomd-limits", "\(limits.count)"]
                    + limits.flatMap { [$0.option, $0.value] } + [executable] + daemonArguments
            )
        }
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "ROOMD_SECRET")
        env.removeValue(forKey: "ROOMD_ACCESS_KEY")
        for (key, value) in environment { env[key] = value }
        let stdout: ChildPipe
        let stdin: ChildPipe
        let process: ChildProcess
        do {
            stdout = try ChildPipe()
            stdin = try ChildPipe()
            let log = try FileHandle(forWritingTo: stderrFile)
            defer { try? log.close() }
            process = try ChildProcess.spawn(
                launched.executable,
                launched.arguments,
                environment: env,
                stdin: .descriptor(stdin.read.fileDescriptor),
                stdout: .descriptor(stdout.write.fileDescriptor),
                stderr: .descriptor(log.fileDescriptor)
            )
            // The child has its copies: the daemon sees EOF on its stdin
            // when `stdin.write` closes, this process when the daemon exits.
            try stdin.read.close()
            try stdout.write.close()
        } catch {
            removeDirectory()
            throw error
        }
        Self.running.withLock { $0[process.processIdentifier] = process }
        func fail(_ problem: String) -> RoomdProcessError {
            process.signal(SIGKILL)
            process.waitUntilExit()
            Self.running.withLock { _ = $0.removeValue(forKey: process.processIdentifier) }
            let log = (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
            removeDirectory()
            return RoomdProcessError(description: "\(problem); stderr:\n\(log)")
        }
        guard let line = readLine(stdout.read.fileDescriptor, timeoutMillis: Int(timeout * 1000)) else {
            throw fail("roomd printed no listening line within \(timeout) s")
        }
        let prefix = "roomd listening on "
        guard line.hasPrefix(prefix + "ws://"), line.hasSuffix("/ws"), let colon = line.lastIndex(of: ":"),
            let port = Int(line[line.index(after: colon)...].dropLast(3))
        else {
            throw fail("unexpected listening line \"\(line)\"")
        }
        let listeningURL = String(line.dropFirst(prefix.count))
        let listeningHost = line[line.index(line.startIndex, offsetBy: prefix.count + 5)..<colon]
        let connectHost =
            switch listeningHost {
            case "0.0.0.0": "127.0.0.1"
            case "[::]": "[::1]"
            default: String(listeningHost)
            }
        return RoomdProcess(
            process: process,
            stdin: stdin,
            port: port,
            url: "ws://\(connectHost):\(port)/ws",
            listeningURL: listeningURL,
            secret: secret,
            directory: directory,
            stderrFile: stderrFile
        )
    }

    private init(
        process: ChildProcess,
        stdin: ChildPipe,
        port: Int,
        url: String,
        listeningURL: String,
        secret: [UInt8],
        directory: URL,
        stderrFile: URL
    ) {
        self.process = process
        self.stdinPipe = stdin
        self.port = port
        self.url = url
        self.listeningURL = listeningURL
        self.secret = secret
        self.directory = directory
        self.stderrFile = stderrFile
    }

    deinit { stop() }

    /// What the daemon wrote to stderr (its log) so far; after `stop`, all
    /// of it. Put it in failure messages.
    public var stderr: String {
        if let log = finalLog.withLock({ $0 }) { return log }
        return (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
    }

    /// Whether the daemon runs.
    public var isRunning: Bool { process.isRunning }

    /// SIGTERM, then waits (SIGKILL after `timeout` s). Returns the exit
    /// status (0 after a clean shutdown). Idempotent. The same as
    /// `stop(signal: SIGTERM, timeout: timeout).status`.
    @discardableResult
    public func stop(timeout: Double = 5) -> Int32 {
        stop(signal: SIGTERM, timeout: timeout).status
    }

    /// Sends `signal` and waits for the exit, then deletes `directory`
    /// (`stderr` keeps the log). Idempotent: a later call sends nothing and
    /// returns the first one's report.
    ///
    /// - Parameters:
    ///   - signal: SIGTERM or SIGINT (roomd closes its connections with
    ///     1001, delivers what it can and exits 0), SIGKILL (a crash), ….
    ///   - timeout: seconds to wait before a SIGKILL (`Exit.timedOut`).
    /// - Returns: the exit status, the seconds it took, whether it timed out.
    @discardableResult
    public func stop(signal: Int32, timeout: Double = 5) -> Exit {
        // A concurrent call waits for the first one's report.
        outcome.withLock { recorded in
            if let recorded { return recorded }
            let started = Date()
            let deadline = started.addingTimeInterval(timeout)
            var timedOut = false
            var status = process.exitStatus
            if status == nil { process.signal(signal) }
            while status == nil, Date() < deadline {
                usleep(5_000)
                status = process.exitStatus
            }
            if status == nil {
                process.signal(SIGKILL)
                timedOut = true
            }
            let exit = Exit(
                status: status ?? process.waitUntilExit(),
                seconds: Date().timeIntervalSince(started),
                timedOut: timedOut
            )
            Self.running.withLock { _ = $0.removeValue(forKey: process.processIdentifier) }
            let log = (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
            finalLog.withLock { $0 = log }
            try? FileManager.default.removeItem(at: directory)
            recorded = exit
            return exit
        }
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
            var folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
                .deletingLastPathComponent()
            for _ in 0..<4 {  // the program may sit inside a bundle (`X.xctest/…`)
                candidates.append(folder.appendingPathComponent("roomd").path)
                folder.deleteLastPathComponent()
            }
            candidates.append(FileManager.default.currentDirectoryPath + "/.build/debug/roomd")
            candidates.append(packageRoot.appendingPathComponent(".build/debug/roomd").path)
        }
        for path in candidates where FileManager.default.isExecutableFile(atPath: path) {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                return path
            }
        }
        throw RoomdProcessError(
            description: "no roomd binary found (looked at \(candidates.joined(separator: ", "))): "
                + "build it with `swift build --product roomd`, or set ROOMD_BIN"
        )
    }

    /// This package's root (RoomdTesting is built from source, so its file is there).
    package static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    package static var shippedTemplatePath: String { packageRoot.appendingPathComponent("config/roles.json").path }

    // MARK: stopping with the test process

    /// Daemons started and not stopped yet, by pid.
    private static let running: Mutex<[Int32: ChildProcess]> = {
        atexit { RoomdProcess.stopAll() }
        return Mutex([:])
    }()

    /// SIGTERM to every daemon still running (at exit).
    static func stopAll() {
        let processes = running.withLock { Array($0.values) }
        for process in processes { process.terminate() }
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
