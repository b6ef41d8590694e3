import Foundation
import RoomWire
import Synchronization

/// A webhook receiver on a free loopback port for tests that assert the
/// events a scenario sends (PROTOCOL.md section 17): it answers every POST
/// with 200 and keeps it; ``events()`` are the requests verified with
/// ``WebhookVerifier`` (one that does not verify throws, saying why), and
/// ``next(_:timeout:)`` waits for the next event of a type. The Python kit's
/// `webhook_sink` fixture is the same.
///
/// ```swift
/// let sink = try WebhookSink()
/// let roomd = try RoomdProcess.start(webhooks: sink)   // the template's webhooks.url is the sink
/// defer { roomd.stop(); sink.close() }
/// // … a scenario …
/// let joined = try await sink.next("peer.join.success")
/// #expect(joined["data"]?["user_id"] == "ada")
/// ```
///
/// Plain HTTP/1.1 over BSD sockets, a thread per connection (roomd keeps
/// its connections alive and sends the next event on them).
public final class WebhookSink: Sendable {
    /// One request as it arrived.
    public struct Request: Sendable {
        public var path: String
        public var headers: [String: String]
        public var body: [UInt8]
    }

    public let port: Int
    /// `http://127.0.0.1:PORT/hooks`.
    public var url: String { "http://127.0.0.1:\(port)/hooks" }

    private struct State {
        var requests: [Request] = []
        var secret: [UInt8]?
        var taken = 0
        var closed = false
    }
    private let state = Mutex(State())
    private let listener: Int32

    /// Listens on 127.0.0.1, a free port. `secret`: what ``events()`` verifies
    /// with (``RoomdProcess/start(binary:template:secret:host:arguments:environment:limits:testMode:webhooks:hooks:timeout:)``
    /// sets it to the daemon's).
    public init(secret: [UInt8]? = nil) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RoomdProcessError(description: "webhook sink: socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            throw RoomdProcessError(description: "webhook sink: cannot listen on 127.0.0.1")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        state.withLock { $0.secret = secret }
        let accepting = Thread { [self] in acceptLoop() }
        accepting.name = "roomd-webhook-sink"
        accepting.start()
    }

    deinit { close() }

    /// The secret ``events()`` verifies with.
    public var secret: [UInt8]? {
        get { state.withLock { $0.secret } }
        set { state.withLock { $0.secret = newValue } }
    }

    /// Every request so far, in arrival order.
    public var requests: [Request] { state.withLock { $0.requests } }

    /// Every event so far, in arrival order, each verified (no age limit:
    /// test mode's manual clock signs with its own time).
    /// - Throws: ``RoomdProcessError`` naming the request that does not verify and why.
    public func events() throws -> [JSON] {
        let (requests, secret) = state.withLock { ($0.requests, $0.secret) }
        guard let secret else {
            throw RoomdProcessError(
                description: "WebhookSink has no secret: start the daemon with webhooks: sink, or set sink.secret"
            )
        }
        return try requests.enumerated().map { index, request in
            switch WebhookVerifier.verify(body: request.body, headers: request.headers, secret: secret, maxAge: nil) {
            case .valid(let event): return event
            case .invalid(let reason): throw RoomdProcessError(description: "webhook request \(index + 1): \(reason)")
            }
        }
    }

    /// The next event not taken yet, of `type` when given (the events skipped are taken too).
    /// - Throws: ``RoomdProcessError`` after `timeout`, listing the types received so far.
    public func next(_ type: String? = nil, timeout: Duration = .seconds(10)) async throws -> JSON {
        let deadline = ContinuousClock.now + timeout
        while true {
            let events = try self.events()
            let found: JSON? = state.withLock { state in
                while state.taken < events.count {
                    let event = events[state.taken]
                    state.taken += 1
                    if type == nil || event["type"]?.stringValue == type { return event }
                }
                return nil
            }
            if let found { return found }
            if ContinuousClock.now >= deadline {
                let seen = events.compactMap { $0["type"]?.stringValue }.joined(separator: ", ")
                throw RoomdProcessError(
                    description: "timed out after \(timeout) waiting for webhook \(type ?? "(any)"); received so far: "
                        + (seen.isEmpty ? "none" : seen)
                )
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Stops listening (connections already open end with their peer).
    public func close() {
        let wasOpen = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        if wasOpen {
            shutdown(listener, Int32(SHUT_RDWR))
            Glibc.close(listener)
        }
    }

    // MARK: - Serving (the sink's own threads)

    private func acceptLoop() {
        while !state.withLock({ $0.closed }) {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let serving = Thread { [self] in serve(client) }
            serving.name = "roomd-webhook-sink-connection"
            serving.start()
        }
    }

    /// Requests on one connection until it closes: head, Content-Length body, a 200.
    private func serve(_ fd: Int32) {
        defer { Glibc.close(fd) }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            guard let headEnd = Self.find([13, 10, 13, 10], in: buffer) else {
                let count = read(fd, &chunk, chunk.count)
                if count <= 0 { return }
                buffer += chunk[..<count]
                continue
            }
            let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
            var lines = head.components(separatedBy: "\r\n")
            let requestLine = lines.removeFirst().split(separator: " ")
            var headers: [String: String] = [:]
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let length =
                headers.first { $0.key.caseInsensitiveCompare("Content-Length") == .orderedSame }
                .flatMap { Int($0.value) } ?? 0
            let bodyStart = headEnd + 4
            while buffer.count < bodyStart + length {
                let count = read(fd, &chunk, chunk.count)
                if count <= 0 { return }
                buffer += chunk[..<count]
            }
            let request = Request(
                path: requestLine.count > 1 ? String(requestLine[1]) : "/",
                headers: headers,
                body: Array(buffer[bodyStart..<(bodyStart + length)])
            )
            buffer.removeFirst(bodyStart + length)
            state.withLock { $0.requests.append(request) }
            let answer = Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".utf8)
            guard answer.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == answer.count else { return }
        }
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count)
        where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }

    /// `template` (a file, default the shipped one) with `settings.webhooks.url` set to this sink.
    public func template(from path: String? = nil) throws -> RoomdProcess.Template {
        let file = path ?? RoomdProcess.shippedTemplatePath
        guard let data = FileManager.default.contents(atPath: file) else {
            throw RoomdProcessError(description: "webhook sink: cannot read \(file)")
        }
        let document = try JSON.parse(Array(data))
        return .json(Self.setting(document, ["settings", "webhooks", "url"], to: .string(url)).text)
    }

    static func setting(_ json: JSON, _ path: [String], to value: JSON) -> JSON {
        guard let key = path.first else { return value }
        var members: [JSON.Member] = []
        if case .object(let existing) = json { members = existing }
        if let index = members.lastIndex(where: { $0.key == key }) {
            members[index].value = setting(members[index].value, Array(path.dropFirst()), to: value)
        } else {
            members.append(.init(key, setting(.object([]), Array(path.dropFirst()), to: value)))
        }
        return .object(members)
    }
}
