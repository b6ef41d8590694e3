import Foundation
import FuzzSupport
import Logging
import RoomConfig
import RoomModel
import RoomServer
import RoomTokens

#if canImport(Glibc)
import Glibc
#endif

/// The HTTP request path through the real libwebsockets parser: one daemon
/// (`RoomServer`, the shipped template) serves 127.0.0.1 on a free port on
/// its own thread for the whole run. Each input is written as raw bytes to a
/// new TCP connection, which then half-closes, reads whatever comes back for
/// at most 250 ms and resets. After each input a fresh connection must get a
/// `200` to `GET /healthz` within 5 s, else the run stops with a finding
/// (the input is saved as `crash-…`); libFuzzer's `-timeout` catches a hang
/// of the harness itself.
///
/// Placeholders replaced before sending: `@mgmt@` (a management token for
/// the REST API), `@app@` (an app token: a host of room `fuzz`). Inputs may
/// upgrade to `/ws` and go on with WebSocket frames.
@_cdecl("FuzzHTTP_main")
public func fuzzHTTPMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzHTTP)
}

private let secret = [UInt8](repeating: 0x5A, count: 32)

/// The daemon, started on first use.
private let port: UInt16 = {
    let path = ProcessInfo.processInfo.environment["ROOMD_FUZZ_CONFIG"] ?? "config/roles.json"
    let template: RoleTemplate
    do { template = try RoleTemplate.load(path: path).template } catch {
        fatalError("fuzz-http: cannot load the template \(path) (run from the repository root): \(error)")
    }
    var logger = Logger(label: "fuzz.http")
    logger.logLevel = .critical
    let server = RoomServer(
        options: ServerOptions(host: "127.0.0.1", port: 0, template: template, secret: secret),
        logger: logger
    )
    let port: Int
    do { port = try server.start() } catch { fatalError("fuzz-http: cannot start roomd: \(error)") }
    let thread = Thread { server.run() }
    thread.stackSize = 8 << 20
    thread.start()
    return UInt16(port)
}()

private let placeholders: [String: String] = {
    let minter = TokenMinter(secret: secret)
    do {
        return [
            "@mgmt@": try minter.managementToken(ttl: 30 * 24 * 3600),
            "@app@": try minter.appToken(room: "fuzz", user: "fuzz-user", role: "host", ttl: 30 * 24 * 3600),
        ]
    } catch { fatalError("fuzz-http: minting tokens failed: \(error)") }
}()

private func substitute(_ input: [UInt8]) -> [UInt8] {
    guard input.contains(UInt8(ascii: "@")) else { return input }
    var bytes = input
    for (placeholder, value) in placeholders {
        let needle = Array(placeholder.utf8)
        var index = 0
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        while index < bytes.count {
            if bytes[index] == needle[0], bytes.count - index >= needle.count,
                Array(bytes[index..<index + needle.count]) == needle
            {
                out.append(contentsOf: value.utf8)
                index += needle.count
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        bytes = out
    }
    return bytes
}

private func millis() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}

/// A non-blocking loopback connection to the daemon, or the errno of the
/// last of three attempts. The connect itself is non-blocking and polled:
/// libFuzzer's timeout timer (SIGALRM) would interrupt a blocking connect
/// with EINTR, which is no verdict on the daemon.
private func connectToDaemon() -> Result<Int32, Errno> {
    var last: Int32 = 0
    for attempt in 0..<3 {
        if attempt > 0 { usleep(50_000) }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else {
            last = errno
            continue
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if connected == 0 { return .success(fd) }
        last = errno
        if last == EINPROGRESS || last == EINTR {
            let deadline = millis() + 5000
            var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            while millis() < deadline {
                let ready = poll(&pfd, 1, 100)
                if ready > 0 { break }
                if ready < 0, errno != EINTR { break }
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if pfd.revents & Int16(POLLOUT) != 0, error == 0 { return .success(fd) }
            last = error != 0 ? error : ETIMEDOUT
        }
        reset(fd)
    }
    return .failure(Errno(code: last))
}

struct Errno: Error, CustomStringConvertible {
    var code: Int32
    var description: String { "errno \(code) (\(String(cString: strerror(code))))" }
}

/// Closes with a reset (SO_LINGER 0): no TIME_WAIT on the client side, so a
/// long run does not run out of ephemeral ports.
private func reset(_ fd: Int32) {
    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
    _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    close(fd)
}

/// Writes as much of `bytes` as the daemon takes before `deadline`.
private func send(_ fd: Int32, _ bytes: [UInt8], until deadline: Int64) -> Bool {
    var sent = 0
    while sent < bytes.count {
        let n = bytes.withUnsafeBytes {
            Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
        }
        if n > 0 {
            sent += n
            continue
        }
        if n < 0, errno != EAGAIN, errno != EINTR { return false }
        let left = deadline - millis()
        if left <= 0 { return false }
        var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        _ = poll(&pfd, 1, Int32(left))
    }
    return true
}

/// Reads until the peer closes, `done` says enough, or `deadline`.
private func receive(_ fd: Int32, until deadline: Int64, done: ([UInt8]) -> Bool = { _ in false }) -> [UInt8] {
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 16 * 1024)
    while !done(received) {
        let left = deadline - millis()
        if left <= 0 { break }
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        if poll(&pfd, 1, Int32(left)) <= 0 { continue }
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
        if n > 0 {
            if received.count < 1 << 20 { received.append(contentsOf: buffer[0..<n]) }
        } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
            break
        }
    }
    return received
}

private let healthz = Array("GET /healthz HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n\r\n".utf8)

/// Whether the daemon answers `GET /healthz` with 200 within `timeoutMillis`.
private func daemonAnswers(timeoutMillis: Int64) -> Bool {
    let deadline = millis() + timeoutMillis
    guard case .success(let fd) = connectToDaemon() else { return false }
    defer { reset(fd) }
    guard send(fd, healthz, until: deadline) else { return false }
    let answer = receive(fd, until: deadline) { $0.count >= 12 }
    return answer.starts(with: Array("HTTP/1.1 200".utf8))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzBytes(data, size)
    let bytes = substitute(input)
    let fd: Int32
    switch connectToDaemon() {
    case .success(let connected): fd = connected
    case .failure(let error): fuzzFinding("cannot connect to the daemon on 127.0.0.1:\(port): \(error)", input: input)
    }
    let start = millis()
    if send(fd, bytes, until: start + 250) { _ = shutdown(fd, Int32(SHUT_WR)) }
    _ = receive(fd, until: start + 250)
    reset(fd)
    if !daemonAnswers(timeoutMillis: 5000) {
        fuzzFinding("after this input roomd did not answer GET /healthz with 200 within 5 s", input: input)
    }
    return 0
}
