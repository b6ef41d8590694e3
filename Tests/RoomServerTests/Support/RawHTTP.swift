import Foundation

/// Sends raw bytes on a fresh TCP connection and reads until the server
/// closes it or `timeout` passes: for HTTP that a client library won't send
/// (pipelined requests, bad framing, garbage).
func rawExchange(port: Int, _ bytes: [UInt8], timeout: Double = 3, closeAfterSending: Bool = false)
    throws -> (response: String, closedByServer: Bool)
{
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw DaemonError(description: "socket failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            Foundation.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else { throw DaemonError(description: "connect failed") }
    var offset = 0
    while offset < bytes.count {
        let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent > 0 else { break }
        offset += sent
    }
    if closeAfterSending { return ("", false) }
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
    let (response, _) = try rawExchange(port: port, Array("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n".utf8), timeout: timeout)
    return response.split(separator: "\r\n").first.map(String.init)
}
