import Foundation
import Synchronization

/// A real `nats-server` with JetStream on free loopback ports, for cluster
/// tests and harnesses: `nats-server -a 127.0.0.1 -p PORT -js -sd DIR -m MONPORT`,
/// its store in a temporary directory of its own. `stop()` and `start()`
/// again keep the ports and the store (a bus outage and its recovery);
/// `kill()` is a SIGKILL. The server goes with this object.
///
/// ```swift
/// let nats = try NatsServerProcess.start()
/// defer { nats.remove() }
/// let roomd = try RoomdProcess.start(arguments: ["--cluster", nats.url, "--node-id", "a"])
/// ```
public final class NatsServerProcess: Sendable {
    /// `nats://127.0.0.1:PORT`.
    public var url: String { "nats://127.0.0.1:\(port)" }
    public let port: Int
    /// The monitoring port (`/varz`, `/healthz`, `/connz`).
    public let monitorPort: Int
    /// The JetStream store and the log.
    public let directory: URL
    private let binary: String
    private let process = Mutex<ChildProcess?>(nil)

    /// Starts a server and waits until it answers (at most `timeout` s per try;
    /// only a hang reaches the default on a loaded machine).
    public static func start(binary: String? = nil, timeout: Double = 30) throws -> NatsServerProcess {
        let executable = try locateBinary(binary)
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("nats-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Free ports can be taken between the probe and the bind: a few tries.
        var lastError: Error?
        for _ in 0..<3 {
            // A failed try's server removes the directory when it goes (deinit).
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let server = NatsServerProcess(
                binary: executable,
                port: try freePort(),
                monitorPort: try freePort(),
                directory: directory
            )
            do {
                try server.start(timeout: timeout)
                return server
            } catch {
                lastError = error
                server.stop()
            }
        }
        try? FileManager.default.removeItem(at: directory)
        throw lastError ?? RoomdProcessError(description: "nats-server did not start")
    }

    private init(binary: String, port: Int, monitorPort: Int, directory: URL) {
        self.binary = binary
        self.port = port
        self.monitorPort = monitorPort
        self.directory = directory
    }

    deinit { remove() }

    public var isRunning: Bool { process.withLock { $0?.isRunning ?? false } }
    public var pid: Int32? { process.withLock { $0?.processIdentifier } }

    /// (Re)starts the server on the same ports and store; waits until its
    /// monitoring endpoint answers `/healthz` with 200.
    public func start(timeout: Double = 10) throws {
        if isRunning { return }
        let log = directory.appendingPathComponent("nats-server.log")
        if !FileManager.default.fileExists(atPath: log.path) {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        }
        let handle = try FileHandle(forWritingTo: log)
        handle.seekToEndOfFile()
        defer { try? handle.close() }  // the child has its copy
        let process = try ChildProcess.spawn(
            binary,
            [
                "-a", "127.0.0.1", "-p", "\(port)", "-js", "-sd", directory.appendingPathComponent("store").path, "-m",
                "\(monitorPort)",
            ],
            stdout: .descriptor(handle.fileDescriptor),
            stderr: .descriptor(handle.fileDescriptor)
        )
        self.process.withLock { $0 = process }
        NatsServerProcess.running.withLock { $0[process.processIdentifier] = process }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let status = process.exitStatus {
                throw RoomdProcessError(description: "nats-server exited (\(status)): \(self.log.suffix(2000))")
            }
            if let (status, _) = httpGet(port: monitorPort, path: "/healthz"), status == 200 { return }
            usleep(20_000)
        }
        throw RoomdProcessError(description: "nats-server did not answer within \(timeout) s: \(self.log.suffix(2000))")
    }

    /// SIGTERM (SIGKILL after `timeout` s), then waits for the exit. The store stays.
    public func stop(timeout: Double = 5) {
        signalAndWait(SIGTERM, timeout: timeout)
    }

    /// SIGKILL: the bus dies as in a crash.
    public func kill() {
        signalAndWait(SIGKILL, timeout: 5)
    }

    /// Stops the server and deletes its store and log.
    public func remove() {
        signalAndWait(SIGTERM, timeout: 5)
        try? FileManager.default.removeItem(at: directory)
    }

    /// The server's log so far (for failure messages).
    public var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("nats-server.log"), encoding: .utf8)) ?? ""
    }

    /// GET on the monitoring port (`/varz`, `/connz`, …): (status, body), nil when it does not answer.
    public func monitor(_ path: String) -> (status: Int, body: String)? { httpGet(port: monitorPort, path: path) }

    private func signalAndWait(_ signal: Int32, timeout: Double) {
        guard let process = process.withLock({ $0 }) else { return }
        if process.isRunning {
            process.signal(signal)
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning, Date() < deadline { usleep(5_000) }
            process.signal(SIGKILL)
            process.waitUntilExit()
        }
        NatsServerProcess.running.withLock { _ = $0.removeValue(forKey: process.processIdentifier) }
    }

    /// `explicit`, else `$NATS_SERVER_BIN`, else `nats-server` on the PATH,
    /// in /usr/sbin (Debian) or /usr/local/bin.
    public static func locateBinary(_ explicit: String? = nil) throws -> String {
        var candidates: [String] = []
        if let explicit { candidates.append(explicit) }
        if let env = ProcessInfo.processInfo.environment["NATS_SERVER_BIN"], !env.isEmpty { candidates.append(env) }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            candidates.append("\(folder)/nats-server")
        }
        candidates += ["/usr/sbin/nats-server", "/usr/local/bin/nats-server"]
        for path in candidates where FileManager.default.isExecutableFile(atPath: path) { return path }
        throw RoomdProcessError(
            description:
                "no nats-server found: install it (apt-get install nats-server, or make deps), or set NATS_SERVER_BIN"
        )
    }

    /// Servers started and not stopped yet, by pid: SIGKILLed at exit.
    private static let running: Mutex<[Int32: ChildProcess]> = {
        atexit { NatsServerProcess.stopAll() }
        return Mutex([:])
    }()

    static func stopAll() {
        let processes = running.withLock { Array($0.values) }
        for process in processes { process.signal(SIGKILL) }
    }
}

/// A free TCP port on 127.0.0.1 (bound, read, closed).
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw RoomdProcessError(description: "socket: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw RoomdProcessError(description: "bind: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A one-shot HTTP/1.0 GET to 127.0.0.1:port (1 s timeouts): (status, body).
func httpGet(port: Int, path: String) -> (Int, String)? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var timeout = timeval(tv_sec: 1, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
    guard connected else { return nil }
    let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
    guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else { return nil }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16384)
    while response.count < 4 << 20 {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n <= 0 { break }
        response += buffer[0..<n]
    }
    let text = String(decoding: response, as: UTF8.self)
    guard text.hasPrefix("HTTP/"), let space = text.firstIndex(of: " ") else { return nil }
    let status = Int(text[text.index(after: space)...].prefix(3)) ?? 0
    let body = text.range(of: "\r\n\r\n").map { String(text[$0.upperBound...]) } ?? ""
    return (status, body)
}
