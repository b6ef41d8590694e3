import Foundation

/// A bare-bones WebSocket client over a blocking TCP socket, for what a real
/// client library won't do: send invalid UTF-8, or never read (slow consumer).
///
/// `@unchecked Sendable`: one test task uses a socket at a time; the blocking
/// reads' `async` overloads (below) run on a thread of their own while that
/// task waits for them, never two at once.
final class RawSocket: @unchecked Sendable {
    let fd: Int32
    /// The 101's `Sec-WebSocket-Extensions` (nil without it).
    private(set) var extensionsAnswer: String?

    /// Connects and upgrades. `receiveBuffer` shrinks SO_RCVBUF before connecting;
    /// `extensions`: a `Sec-WebSocket-Extensions` offer.
    init(
        port: Int,
        path: String = "/ws",
        receiveBuffer: Int32? = nil,
        readTimeoutSeconds: Int = 5,
        extensions: String? = nil
    ) throws {
        fd = try connectTCP(port: port, receiveBuffer: receiveBuffer)
        var timeout = timeval(tv_sec: readTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request =
            "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + (extensions.map { "Sec-WebSocket-Extensions: \($0)\r\n" } ?? "") + "\r\n"
        try sendAll(Array(request.utf8))
        var response: [UInt8] = []
        let started = Date()
        while !response.ends(with: [13, 10, 13, 10]) {
            var byte: UInt8 = 0
            let got = recv(fd, &byte, 1, 0)
            if got < 0, errno == EINTR { continue }
            guard got == 1 else {
                let why = got == 0 ? "the server closed the connection" : String(cString: strerror(errno))
                let seconds = String(format: "%.1f", Date().timeIntervalSince(started))
                throw DaemonError(
                    description: "handshake failed: \(why) after \(response.count) bytes of the answer, \(seconds) s"
                )
            }
            response.append(byte)
        }
        let head = String(decoding: response, as: UTF8.self)
        guard head.hasPrefix("HTTP/1.1 101") else {
            throw DaemonError(description: "upgrade refused: \(head)")
        }
        for line in head.components(separatedBy: "\r\n")
        where line.lowercased().hasPrefix("sec-websocket-extensions:") {
            extensionsAnswer = line.dropFirst("sec-websocket-extensions:".count).trimmingCharacters(in: .whitespaces)
        }
    }

    deinit { close(fd) }

    func sendAll(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw DaemonError(description: "send failed") }
            offset += sent
        }
    }

    /// Sends one masked frame (opcode 1 text, 2 binary).
    func sendFrame(_ payload: [UInt8], opcode: UInt8 = 1) throws {
        try sendAll(Self.frame(payload, opcode: opcode))
    }

    /// Several text frames in one write (one TCP segment train the server reads at once).
    func sendTexts(_ texts: [String]) throws {
        try sendAll(texts.flatMap { Self.frame(Array($0.utf8), opcode: 1) })
    }

    static func frame(_ payload: [UInt8], opcode: UInt8, rsv1: Bool = false) -> [UInt8] {
        var frame: [UInt8] = [0x80 | (rsv1 ? 0x40 : 0) | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return frame
    }

    func sendText(_ text: String) throws { try sendFrame(Array(text.utf8)) }

    private func readExactly(_ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let got = bytes[offset...].withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if got < 0, errno == EINTR { continue }
            if got <= 0 { return nil }
            offset += got
        }
        return bytes
    }

    /// Reads the next frame: (opcode, payload), nil on EOF/timeout.
    @available(*, noasync, message: "blocks a thread of the test pool: use the async overload")
    func readFrame() -> (opcode: UInt8, payload: [UInt8])? {
        readWireFrame().map { ($0.first & 0x0F, $0.payload) }
    }

    /// Reads the next frame: its first byte (FIN, RSV1 for permessage-deflate, opcode) and payload.
    @available(*, noasync, message: "blocks a thread of the test pool: use the async overload")
    func readWireFrame() -> (first: UInt8, payload: [UInt8])? {
        guard let head = readExactly(2) else { return nil }
        var length = Int(head[1] & 0x7F)
        if length == 126 {
            guard let ext = readExactly(2) else { return nil }
            length = Int(ext[0]) << 8 | Int(ext[1])
        } else if length == 127 {
            guard let ext = readExactly(8) else { return nil }
            length = ext.reduce(0) { $0 << 8 | Int($1) }
        }
        guard let payload = readExactly(length) else { return nil }
        return (head[0], payload)
    }

    /// Whether the server ends the TCP connection (reads until the end, or the read timeout).
    @available(*, noasync, message: "blocks a thread of the test pool: use the async overload")
    func readEnd() -> Bool {
        var byte: UInt8 = 0
        while true {
            let got = recv(fd, &byte, 1, 0)
            if got == 0 { return true }
            if got < 0 { return false }
        }
    }

    /// Whether the server ends the TCP connection within `milliseconds` (nothing is read:
    /// a peek). Only for asserting that it does not: a window never waits for an arrival.
    func endsWithin(milliseconds: Int32) async -> Bool {
        await onThread { self.endsWithin(milliseconds: milliseconds) }
    }

    @available(*, noasync, message: "blocks a thread of the test pool: use the async overload")
    func endsWithin(milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, milliseconds) == 1 else { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 0
    }

    /// Reads frames until a close frame; returns its code (nil if the socket ended first).
    @available(*, noasync, message: "blocks a thread of the test pool: use the async overload")
    func readCloseCode() -> Int? {
        while let frame = readFrame() {
            if frame.opcode == 8 {
                return frame.payload.count >= 2 ? Int(frame.payload[0]) << 8 | Int(frame.payload[1]) : 1005
            }
        }
        return nil
    }
}

extension RawSocket {
    /// `readFrame()` off the test pool (OnThread.swift).
    func readFrame() async -> (opcode: UInt8, payload: [UInt8])? {
        await onThread { self.readFrame() }
    }

    /// `readWireFrame()` off the test pool.
    func readWireFrame() async -> (first: UInt8, payload: [UInt8])? {
        await onThread { self.readWireFrame() }
    }

    /// `readEnd()` off the test pool.
    func readEnd() async -> Bool {
        await onThread { self.readEnd() }
    }

    /// `readCloseCode()` off the test pool.
    func readCloseCode() async -> Int? {
        await onThread { self.readCloseCode() }
    }

    /// `closes(of:timeout:)` off the test pool.
    static func closes(of sockets: [RawSocket], timeout: Double) async -> [(code: Int?, at: Date?)] {
        await onThread { () -> [Close] in closes(of: sockets, timeout: timeout).map { Close(code: $0.code, at: $0.at) }
        }
        .map { ($0.code, $0.at) }
    }

    private struct Close: Sendable {
        var code: Int?
        var at: Date?
    }

    /// Waits on every socket at once for its close frame: each one's code
    /// (1005 without one, nil if the socket ended without a close frame or
    /// nothing came within `timeout`) and when it arrived.
    @available(*, noasync, message: "blocks a thread of the test pool: use the async overload")
    static func closes(of sockets: [RawSocket], timeout: Double) -> [(code: Int?, at: Date?)] {
        var results = [(code: Int?, at: Date?)](repeating: (nil, nil), count: sockets.count)
        var waiting = Set(sockets.indices)
        let deadline = Date().addingTimeInterval(timeout)
        while !waiting.isEmpty, Date() < deadline {
            let order = Array(waiting)
            var pollers = order.map { pollfd(fd: sockets[$0].fd, events: Int16(POLLIN), revents: 0) }
            let remaining = Int32(max(1, deadline.timeIntervalSinceNow * 1000))
            guard poll(&pollers, nfds_t(pollers.count), remaining) > 0 else { continue }
            for (index, poller) in zip(order, pollers) where poller.revents != 0 {
                let now = Date()
                guard let frame = sockets[index].readFrame() else {
                    results[index] = (nil, now)
                    waiting.remove(index)
                    continue
                }
                if frame.opcode == 8 {
                    let payload = frame.payload
                    results[index] = (payload.count >= 2 ? Int(payload[0]) << 8 | Int(payload[1]) : 1005, now)
                    waiting.remove(index)
                }
            }
        }
        return results
    }
}

extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}

/// A blocking TCP socket connected to 127.0.0.1:`port`. `receiveBuffer`
/// shrinks SO_RCVBUF before connecting; `source` is the local address to
/// connect from (another loopback address, e.g. "127.0.0.2": another client
/// as roomd's per-address limits see it).
func connectTCP(port: Int, receiveBuffer: Int32? = nil, from source: String? = nil) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw DaemonError(description: "socket failed") }
    if var size = receiveBuffer {
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    if let source {
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            close(fd)
            throw DaemonError(description: "bind to \(source) failed")
        }
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            Foundation.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else {
        close(fd)
        throw DaemonError(description: "connect failed")
    }
    return fd
}
