import Foundation
import RoomWire
import Synchronization

/// The one loopback HTTP receiver under the kit's test servers: ``WebhookSink``
/// and ``HookServer`` are two handlers on it (the Python kit's
/// `roomd._loopback.LoopbackReceiver`). It listens on 127.0.0.1, a free port,
/// keeps every request (unless told not to), answers each with what its
/// handler returns, and verifies what it kept with ``WebhookVerifier`` for
/// ``events()`` and ``next(_:timeout:)``.
///
/// Plain HTTP/1.1 over BSD sockets, a thread per connection (roomd keeps its
/// connections alive and sends the next request on them): a handler that
/// takes its time holds only its own connection. Bounds: `backlog`
/// connections waiting to be accepted.
final class LoopbackHTTPServer: Sendable {
    /// One request as it arrived.
    struct Request: Sendable {
        var path: String
        var headers: [String: String]
        var body: [UInt8]
    }

    /// What a handler answers one request with.
    enum Reply: Sendable {
        /// This status and body (`Content-Type` when given).
        case answer(status: Int, contentType: String?, body: [UInt8])
        /// No answer: the connection is held until the client closes it.
        case silence
    }

    /// What the server is called in its errors and threads.
    struct Naming: Sendable {
        /// "webhook sink": the errors of ``LoopbackHTTPServer/init(_:secret:backlog:keepingRequests:reply:)``.
        var server: String
        /// "webhook", "hook request": what ``next(_:timeout:)`` waits for.
        var request: String
        /// "webhook request", "hook request": a request that does not verify, in the errors of ``events()``.
        var numbered: String
        /// The error when no secret is set: how a daemon gives the server its secret.
        var noSecret: String
        /// The accepting thread's name; each connection's is this with "-connection".
        var thread: String
    }

    let port: Int
    let naming: Naming

    private struct State {
        var requests: [Request] = []
        var secret: [UInt8]?
        var taken = 0
        var closed = false
        var accepted = 0
    }
    private let state = Mutex(State())
    private let listener: Int32
    private let keepsRequests: Bool
    private let reply: @Sendable (LoopbackHTTPServer, Request) -> Reply

    /// Listens on 127.0.0.1, a free port; `reply` answers each request (given this
    /// server, for ``event(of:)``), on its connection's thread, after it was kept. `keepingRequests` false:
    /// ``requests`` stays empty (memory does not grow with the requests).
    init(
        _ naming: Naming,
        secret: [UInt8]?,
        backlog: Int32,
        keepingRequests: Bool = true,
        reply: @escaping @Sendable (LoopbackHTTPServer, Request) -> Reply
    ) throws {
        self.naming = naming
        self.reply = reply
        keepsRequests = keepingRequests
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RoomdProcessError(description: "\(naming.server): socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, backlog) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            throw RoomdProcessError(description: "\(naming.server): cannot listen on 127.0.0.1")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        state.withLock { $0.secret = secret }
        let accepting = Thread { [self] in acceptLoop() }
        accepting.name = naming.thread
        accepting.start()
    }

    deinit { close() }

    /// The secret ``events()`` verifies with.
    var secret: [UInt8]? {
        get { state.withLock { $0.secret } }
        set { state.withLock { $0.secret = newValue } }
    }

    /// Every request kept so far, in arrival order.
    var requests: [Request] { state.withLock { $0.requests } }

    /// The connections accepted so far.
    var accepted: Int { state.withLock { $0.accepted } }

    /// Every request so far, in arrival order, each verified (no age limit:
    /// test mode's manual clock signs with its own time).
    /// - Throws: ``RoomdProcessError`` naming the request that does not verify and why.
    func events() throws -> [JSON] {
        let (requests, secret) = state.withLock { ($0.requests, $0.secret) }
        guard let secret else { throw RoomdProcessError(description: naming.noSecret) }
        return try requests.enumerated().map { index, request in
            switch WebhookVerifier.verify(body: request.body, headers: request.headers, secret: secret, maxAge: nil) {
            case .valid(let event): return event
            case .invalid(let reason):
                throw RoomdProcessError(description: "\(naming.numbered) \(index + 1): \(reason)")
            }
        }
    }

    /// `request`'s event when it verifies with the secret, else nil.
    func event(of request: Request) -> JSON? {
        guard let secret else { return nil }
        guard
            case .valid(let event) = WebhookVerifier.verify(
                body: request.body,
                headers: request.headers,
                secret: secret,
                maxAge: nil
            )
        else { return nil }
        return event
    }

    /// The next event not taken yet, of `type` when given (those skipped are taken too).
    /// - Throws: ``RoomdProcessError`` after `timeout`, listing the types received so far.
    func next(_ type: String?, timeout: Duration) async throws -> JSON {
        let deadline = ContinuousClock.now + timeout
        while true {
            let events = try events()
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
                    description: "timed out after \(timeout) waiting for \(naming.request) \(type ?? "(any)"); "
                        + "received so far: " + (seen.isEmpty ? "none" : seen)
                )
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Stops listening (connections already open end with their peer).
    func close() {
        let wasOpen = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        if wasOpen {
            shutdown(listener, Int32(SHUT_RDWR))
            Glibc.close(listener)
        }
    }

    // MARK: - Serving (the server's own threads)

    private func acceptLoop() {
        while !state.withLock({ $0.closed }) {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            state.withLock { $0.accepted += 1 }
            let serving = Thread { [self] in serve(client) }
            serving.name = naming.thread + "-connection"
            serving.start()
        }
    }

    /// Requests on one connection until it closes: head, Content-Length body, the handler's answer.
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
            if keepsRequests { state.withLock { $0.requests.append(request) } }
            switch reply(self, request) {
            case .silence:
                // Hold the connection until the client gives up on it.
                while read(fd, &chunk, chunk.count) > 0 {}
                return
            case .answer(let status, let contentType, let body):
                let head =
                    "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Status")\r\n"
                    + (contentType.map { "Content-Type: \($0)\r\n" } ?? "") + "Content-Length: \(body.count)\r\n\r\n"
                guard sendAll(Array(head.utf8) + body, on: fd) else { return }
            }
        }
    }

    private func sendAll(_ bytes: [UInt8], on fd: Int32) -> Bool {
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { return false }
            written += count
        }
        return true
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count)
        where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }

    /// `json` with the member at `path` set to `value` (objects made on the way): the servers' templates.
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

    /// `template` (a file, default the shipped one) with `changes` made (a path of keys, the value).
    func template(from path: String?, _ changes: [([String], JSON)]) throws -> RoomdProcess.Template {
        let file = path ?? RoomdProcess.shippedTemplatePath
        guard let data = FileManager.default.contents(atPath: file) else {
            throw RoomdProcessError(description: "\(naming.server): cannot read \(file)")
        }
        var document = try JSON.parse(Array(data))
        for (keys, value) in changes { document = Self.setting(document, keys, to: value) }
        return .json(document.text)
    }
}
