import Foundation

/// Sends raw bytes on a fresh TCP connection and reads until the server
/// closes it or `timeout` passes: for HTTP that a client library won't send
/// (pipelined requests, bad framing, garbage).
@available(*, noasync, message: "blocks a thread of the test pool: use the async overload")
func rawExchange(
    port: Int,
    _ bytes: [UInt8],
    timeout: Double = 3,
    closeAfterSending: Bool = false,
    shutdownAfterSending: Bool = false
)
    throws -> (response: String, closedByServer: Bool)
{
    let fd = try connectTCP(port: port)
    defer { close(fd) }
    var offset = 0
    while offset < bytes.count {
        let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent > 0 else { break }
        offset += sent
    }
    if closeAfterSending { return ("", false) }
    if shutdownAfterSending { shutdown(fd, Int32(SHUT_WR)) }
    let deadline = Date().addingTimeInterval(timeout)
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while Date() < deadline {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let remaining = Int32(max(1, deadline.timeIntervalSinceNow * 1000))
        guard poll(&poller, 1, remaining) > 0 else { break }
        let count = recv(fd, &buffer, buffer.count, 0)
        if count <= 0 { return (String(decoding: response, as: UTF8.self), true) }
        response += buffer[..<count]
    }
    return (String(decoding: response, as: UTF8.self), false)
}

/// `rawExchange` off the test pool (OnThread.swift).
func rawExchange(
    port: Int,
    _ bytes: [UInt8],
    timeout: Double = 3,
    closeAfterSending: Bool = false,
    shutdownAfterSending: Bool = false
) async throws -> (response: String, closedByServer: Bool) {
    let answer = try await onThread { () throws -> Exchange in
        let (response, closed) = try rawExchange(
            port: port,
            bytes,
            timeout: timeout,
            closeAfterSending: closeAfterSending,
            shutdownAfterSending: shutdownAfterSending
        )
        return Exchange(response: response, closed: closed)
    }
    return (answer.response, answer.closed)
}

private struct Exchange: Sendable {
    var response: String
    var closed: Bool
}

/// `healthStatusLine` off the test pool.
func healthStatusLine(port: Int, timeout: Double = 2) async throws -> String? {
    try await onThread { () throws -> String? in try healthStatusLine(port: port, timeout: timeout) }
}

/// `GET /healthz` on a fresh connection: the status line, or nil when the
/// daemon did not answer within `timeout`.
@available(*, noasync, message: "blocks a thread of the test pool: use the async overload")
func healthStatusLine(port: Int, timeout: Double = 2) throws -> String? {
    let (response, _) = try rawExchange(
        port: port,
        Array("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8),  // read to the close
        timeout: timeout
    )
    return response.split(separator: "\r\n").first.map(String.init)
}

/// One kept-alive HTTP/1.1 connection, read answer by answer
/// (`content-length` framed).
///
/// `@unchecked Sendable`: one test task uses a connection at a time; the
/// `async` overloads of its blocking reads run on a thread of their own
/// while that task waits for them.
final class RawHTTPConnection: @unchecked Sendable {
    let fd: Int32
    private var pending: [UInt8] = []

    /// `receiveBuffer` shrinks SO_RCVBUF before connecting (a slow reader).
    init(port: Int, receiveBuffer: Int32? = nil) throws {
        fd = try connectTCP(port: port, receiveBuffer: receiveBuffer)
    }
    deinit { close(fd) }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return }
            offset += sent
        }
    }

    enum Fill { case data, closed, timedOut }

    /// More bytes within the deadline, the connection's end, or the deadline.
    private func fill(until deadline: Date) -> Fill {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return .timedOut }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, (remaining * 1000).rounded(.up))))
            if ready == 0 || (ready < 0 && errno == EINTR) { continue }
            guard ready > 0 else { return .closed }
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { return .closed }
            pending += buffer[..<count]
            return .data
        }
    }

    /// The next answer: its head (status line and headers, lowercased) and
    /// body; nil if none is whole within `timeout`.
    @available(*, noasync, message: "blocks a thread of the test pool: use the async overload")
    func answer(timeout: Double = 3) -> (head: String, body: String)? {
        exactAnswer(timeout: timeout).map { ($0.head.lowercased(), String(decoding: $0.body, as: UTF8.self)) }
    }

    /// The next answer as sent: its head (without the empty line) and its body.
    @available(*, noasync, message: "blocks a thread of the test pool: use the async overload")
    func exactAnswer(timeout: Double = 3) -> (head: String, body: [UInt8])? {
        let deadline = Date().addingTimeInterval(timeout)
        let separator = Array("\r\n\r\n".utf8)
        while true {
            if let end = pending.indices.first(where: { pending[$0...].starts(with: separator) }) {
                let head = String(decoding: pending[..<end], as: UTF8.self)
                let length =
                    head.lowercased().split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
                let bodyStart = end + separator.count
                if pending.count >= bodyStart + length {
                    let body = Array(pending[bodyStart..<(bodyStart + length)])
                    pending.removeFirst(bodyStart + length)
                    return (head, body)
                }
            }
            guard fill(until: deadline) == .data else { return nil }
        }
    }

    /// Bytes read and not yet taken as an answer.
    var buffered: Int { pending.count }

    /// Whether the daemon closes the connection within `timeout` (what
    /// arrives meanwhile is kept: `buffered`).
    @available(*, noasync, message: "blocks a thread of the test pool: use the async overload")
    func closes(within timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            switch fill(until: deadline) {
            case .data: continue
            case .closed: return true
            case .timedOut: return false
            }
        }
    }
}

extension RawHTTPConnection {
    /// `answer(timeout:)` off the test pool (OnThread.swift).
    func answer(timeout: Double = 3) async -> (head: String, body: String)? {
        await onThread { () -> [String]? in self.answer(timeout: timeout).map { [$0.head, $0.body] } }
            .map { ($0[0], $0[1]) }
    }

    /// `exactAnswer(timeout:)` off the test pool.
    func exactAnswer(timeout: Double = 3) async -> (head: String, body: [UInt8])? {
        await onThread { () -> ExactAnswer? in
            self.exactAnswer(timeout: timeout).map { ExactAnswer(head: $0.head, body: $0.body) }
        }
        .map { ($0.head, $0.body) }
    }

    /// `closes(within:)` off the test pool.
    func closes(within timeout: Double) async -> Bool {
        await onThread { self.closes(within: timeout) }
    }
}

private struct ExactAnswer: Sendable {
    var head: String
    var body: [UInt8]
}
