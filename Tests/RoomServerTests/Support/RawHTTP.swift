import Foundation

/// Sends raw bytes on a fresh TCP connection and reads until the server
/// closes it or `timeout` passes: for HTTP that a client library won't send
/// (pipelined requests, bad framing, garbage).
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

/// `GET /healthz` on a fresh connection: the status line, or nil when the
/// daemon did not answer within `timeout`.
func healthStatusLine(port: Int, timeout: Double = 2) throws -> String? {
    let (response, _) = try rawExchange(
        port: port,
        Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
        timeout: timeout
    )
    return response.split(separator: "\r\n").first.map(String.init)
}
