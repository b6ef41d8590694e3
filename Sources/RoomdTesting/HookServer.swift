import Foundation
import RoomWire
import Synchronization

/// The app's hook (PROTOCOL.md section 30) for tests of hook logic: a
/// server on a free loopback port that verifies each request's signature
/// (``WebhookVerifier``, as a real backend would) and answers it as the test
/// says — the next answers queued with ``answer(_:)``, else ``decide``, else
/// ``defaultAnswer``. ``requests()`` are the verified requests so far,
/// ``next(_:timeout:)`` waits for the next one of a type. The Python kit's
/// `hook_server` fixture is the same.
///
/// ```swift
/// let hook = try HookServer()
/// let roomd = try RoomdProcess.start(hooks: hook)   // the template's hooks.url is this server
/// defer { roomd.stop(); hook.close() }
/// hook.answer(.deny("not on the guest list"))
/// // a join now fails with 40305 "not on the guest list"
/// ```
///
/// Plain HTTP/1.1 over BSD sockets, a thread per connection (roomd keeps its
/// connections alive and sends the next request on them); a delayed answer
/// holds only its own connection.
public final class HookServer: Sendable {
    /// How the server answers one request.
    public indirect enum Answer: Sendable {
        /// `{"allow":true}`.
        case allow
        /// `{"allow":false, "reason"}` (no `reason` when nil).
        case deny(String?)
        /// `{"allow":true}` with these members added: `name`, `role`, `attributes` (join),
        /// `info` (message), `text` (question), `note` (stage request).
        case rewrite([String: JSON])
        /// `{"allow":true, "shadow":true}` (message).
        case shadow
        /// That status with an empty body (a failed hook).
        case status(Int)
        /// 200 with these bytes as the body (garbage, or an oversize body: a failed hook).
        case body([UInt8])
        /// No answer at all (roomd's `timeout_ms` ends it: a failed hook).
        case silence
        /// The answer after a delay.
        case delayed(Duration, Answer)
    }

    /// One request as it arrived, and its event once verified.
    public struct Request: Sendable {
        public var headers: [String: String]
        public var body: [UInt8]
    }

    public let port: Int
    /// `http://127.0.0.1:PORT/hook`.
    public var url: String { "http://127.0.0.1:\(port)/hook" }

    private struct State {
        var requests: [Request] = []
        var queued: [Answer] = []
        var decide: (@Sendable (JSON) -> Answer?)?
        var fallback = Answer.allow
        var secret: [UInt8]?
        var taken = 0
        var closed = false
    }
    private let state = Mutex(State())
    private let listener: Int32
    private let keepsRequests: Bool

    /// Listens on 127.0.0.1, a free port. `secret`: what requests are verified with
    /// (``RoomdProcess/start(binary:template:secret:host:arguments:environment:limits:testMode:webhooks:hooks:timeout:)``
    /// sets it to the daemon's). `keepingRequests` false: ``requests()`` stays empty (a load
    /// test's hook, whose memory must not grow with the requests).
    public init(secret: [UInt8]? = nil, keepingRequests: Bool = true) throws {
        keepsRequests = keepingRequests
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RoomdProcessError(description: "hook server: socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 256) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            throw RoomdProcessError(description: "hook server: cannot listen on 127.0.0.1")
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        state.withLock { $0.secret = secret }
        let accepting = Thread { [self] in acceptLoop() }
        accepting.name = "roomd-hook-server"
        accepting.start()
    }

    deinit { close() }

    /// The secret requests are verified with.
    public var secret: [UInt8]? {
        get { state.withLock { $0.secret } }
        set { state.withLock { $0.secret = newValue } }
    }

    /// The answer when nothing is queued and ``decide`` has no word (`.allow` at first).
    public var defaultAnswer: Answer {
        get { state.withLock { $0.fallback } }
        set { state.withLock { $0.fallback = newValue } }
    }

    /// Answers the next requests with these, in order (after those queued before).
    public func answer(_ answers: Answer...) {
        state.withLock { $0.queued += answers }
    }

    /// Decides each request from its verified event (`type`, `data`) when no answer is
    /// queued; nil from it: ``defaultAnswer``. Runs on the server's threads.
    public func decide(_ decide: @escaping @Sendable (JSON) -> Answer?) {
        state.withLock { $0.decide = decide }
    }

    /// Every request so far, verified, in arrival order.
    /// - Throws: ``RoomdProcessError`` naming the request that does not verify and why.
    public func requests() throws -> [JSON] {
        let (requests, secret) = state.withLock { ($0.requests, $0.secret) }
        return try requests.enumerated().map { index, request in
            try Self.verify(request, secret: secret, index: index)
        }
    }

    /// The next request not taken yet, of `type` when given (those skipped are taken too).
    /// - Throws: ``RoomdProcessError`` after `timeout`, listing the types received so far.
    public func next(_ type: String? = nil, timeout: Duration = .seconds(10)) async throws -> JSON {
        let deadline = ContinuousClock.now + timeout
        while true {
            let events = try requests()
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
                    description: "timed out after \(timeout) waiting for hook request \(type ?? "(any)"); "
                        + "received so far: " + (seen.isEmpty ? "none" : seen)
                )
            }
            try await Task.sleep(for: .milliseconds(10))
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

    /// `template` (a file, default the shipped one) with `settings.hooks` set to this
    /// server, with `events`, `timeout_ms` and `on_error` when given (else as in the file).
    public func template(
        from path: String? = nil,
        events: [String]? = nil,
        timeoutMs: Int? = nil,
        onError: String? = nil
    ) throws -> RoomdProcess.Template {
        let file = path ?? RoomdProcess.shippedTemplatePath
        guard let data = FileManager.default.contents(atPath: file) else {
            throw RoomdProcessError(description: "hook server: cannot read \(file)")
        }
        var document = try JSON.parse(Array(data))
        document = WebhookSink.setting(document, ["settings", "hooks", "url"], to: .string(url))
        if let events {
            document = WebhookSink.setting(
                document,
                ["settings", "hooks", "events"],
                to: .array(events.map(JSON.string))
            )
        }
        if let timeoutMs {
            document = WebhookSink.setting(document, ["settings", "hooks", "timeout_ms"], to: .int(timeoutMs))
        }
        if let onError {
            document = WebhookSink.setting(document, ["settings", "hooks", "on_error"], to: .string(onError))
        }
        return .json(document.text)
    }

    // MARK: - Serving (the server's own threads)

    private static func verify(_ request: Request, secret: [UInt8]?, index: Int) throws -> JSON {
        guard let secret else {
            throw RoomdProcessError(
                description: "HookServer has no secret: start the daemon with hooks: server, or set server.secret"
            )
        }
        switch WebhookVerifier.verify(body: request.body, headers: request.headers, secret: secret, maxAge: nil) {
        case .valid(let event): return event
        case .invalid(let reason): throw RoomdProcessError(description: "hook request \(index + 1): \(reason)")
        }
    }

    private func acceptLoop() {
        while !state.withLock({ $0.closed }) {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let serving = Thread { [self] in serve(client) }
            serving.name = "roomd-hook-server-connection"
            serving.start()
        }
    }

    /// The answer to `request`: queued, decided, or the default.
    private func answer(to request: Request) -> Answer {
        let (queued, decide, fallback, secret) = state.withLock {
            state -> (Answer?, (@Sendable (JSON) -> Answer?)?, Answer, [UInt8]?) in
            if !state.queued.isEmpty { return (state.queued.removeFirst(), nil, state.fallback, state.secret) }
            return (nil, state.decide, state.fallback, state.secret)
        }
        if let queued { return queued }
        guard let decide, let event = try? Self.verify(request, secret: secret, index: 0) else { return fallback }
        return decide(event) ?? fallback
    }

    /// Requests on one connection until it closes: head, Content-Length body, the answer.
    private func serve(_ fd: Int32) {
        defer { Glibc.close(fd) }
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while true {
            guard let headEnd = WebhookSink.find([13, 10, 13, 10], in: buffer) else {
                let count = read(fd, &chunk, chunk.count)
                if count <= 0 { return }
                buffer += chunk[..<count]
                continue
            }
            let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
            var lines = head.components(separatedBy: "\r\n")
            lines.removeFirst()
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
            let request = Request(headers: headers, body: Array(buffer[bodyStart..<(bodyStart + length)]))
            buffer.removeFirst(bodyStart + length)
            if keepsRequests { state.withLock { $0.requests.append(request) } }
            var answer = answer(to: request)
            while case .delayed(let delay, let then) = answer {
                Thread.sleep(
                    forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
                )
                answer = then
            }
            let (status, body): (Int, [UInt8])
            switch answer {
            case .allow: (status, body) = (200, Array(#"{"allow":true}"#.utf8))
            case .deny(let reason):
                var members: [JSON.Member] = [.init("allow", .bool(false))]
                if let reason { members.append(.init("reason", .string(reason))) }
                (status, body) = (200, JSON.object(members).bytes)
            case .rewrite(let fields):
                let members =
                    [JSON.Member("allow", .bool(true))]
                    + fields.sorted { $0.key < $1.key }.map { .init($0.key, $0.value) }
                (status, body) = (200, JSON.object(members).bytes)
            case .shadow: (status, body) = (200, Array(#"{"allow":true,"shadow":true}"#.utf8))
            case .status(let code): (status, body) = (code, [])
            case .body(let bytes): (status, body) = (200, bytes)
            case .silence:
                // Hold the connection until roomd gives up on it.
                while read(fd, &chunk, chunk.count) > 0 {}
                return
            case .delayed: preconditionFailure("unwrapped above")
            }
            let answerHead =
                "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Status")\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.count)\r\n\r\n"
            let answerBytes = Array(answerHead.utf8) + body
            var written = 0
            while written < answerBytes.count {
                let count = answerBytes[written...].withUnsafeBytes {
                    send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                if count <= 0 { return }
                written += count
            }
        }
    }
}
