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
/// A handler on the kit's one loopback HTTP receiver (LoopbackHTTPServer.swift,
/// as ``WebhookSink`` is): a thread per connection (roomd keeps its
/// connections alive and sends the next request on them), so a delayed
/// answer holds only its own connection.
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

    public var port: Int { server.port }
    /// `http://127.0.0.1:PORT/hook`.
    public var url: String { "http://127.0.0.1:\(port)/hook" }

    private let book: AnswerBook
    private let server: LoopbackHTTPServer

    /// Listens on 127.0.0.1, a free port. `secret`: what requests are verified with
    /// (``RoomdProcess/start(binary:template:secret:host:arguments:environment:limits:testMode:webhooks:hooks:timeout:)``
    /// sets it to the daemon's). `keepingRequests` false: ``requests()`` stays empty (a load
    /// test's hook, whose memory must not grow with the requests).
    public init(secret: [UInt8]? = nil, keepingRequests: Bool = true) throws {
        let book = AnswerBook()
        self.book = book
        server = try LoopbackHTTPServer(
            .init(
                server: "hook server",
                request: "hook request",
                numbered: "hook request",
                noSecret: "HookServer has no secret: start the daemon with hooks: server, or set server.secret",
                thread: "roomd-hook-server"
            ),
            secret: secret,
            backlog: 256,
            keepingRequests: keepingRequests
        ) { server, request in Self.reply(book.answer { server.event(of: request) }) }
    }

    deinit { close() }

    /// The secret requests are verified with.
    public var secret: [UInt8]? {
        get { server.secret }
        set { server.secret = newValue }
    }

    /// The answer when nothing is queued and ``decide`` has no word (`.allow` at first).
    public var defaultAnswer: Answer {
        get { book.state.withLock { $0.fallback } }
        set { book.state.withLock { $0.fallback = newValue } }
    }

    /// Answers the next requests with these, in order (after those queued before).
    public func answer(_ answers: Answer...) {
        book.state.withLock { $0.queued += answers }
    }

    /// Decides each request from its verified event (`type`, `data`) when no answer is
    /// queued; nil from it: ``defaultAnswer``. Runs on the server's threads.
    public func decide(_ decide: @escaping @Sendable (JSON) -> Answer?) {
        book.state.withLock { $0.decide = decide }
    }

    /// Every request so far, verified, in arrival order.
    /// - Throws: ``RoomdProcessError`` naming the request that does not verify and why.
    public func requests() throws -> [JSON] { try server.events() }

    /// The next request not taken yet, of `type` when given (those skipped are taken too).
    /// - Throws: ``RoomdProcessError`` after `timeout`, listing the types received so far.
    public func next(_ type: String? = nil, timeout: Duration = .seconds(10)) async throws -> JSON {
        try await server.next(type, timeout: timeout)
    }

    /// The connections roomd opened to this server so far (it keeps them alive
    /// and sends the next requests on them).
    public var connections: Int { server.accepted }

    /// Stops listening (connections already open end with their peer).
    public func close() { server.close() }

    /// `template` (a file, default the shipped one) with `settings.hooks` set to this
    /// server, with `events`, `timeout_ms` and `on_error` when given (else as in the file).
    public func template(
        from path: String? = nil,
        events: [String]? = nil,
        timeoutMs: Int? = nil,
        onError: String? = nil
    ) throws -> RoomdProcess.Template {
        var changes: [([String], JSON)] = [(["settings", "hooks", "url"], .string(url))]
        if let events { changes.append((["settings", "hooks", "events"], .array(events.map(JSON.string)))) }
        if let timeoutMs { changes.append((["settings", "hooks", "timeout_ms"], .int(timeoutMs))) }
        if let onError { changes.append((["settings", "hooks", "on_error"], .string(onError))) }
        return try server.template(from: path, changes)
    }

    // MARK: - Answering (the server's threads)

    /// What the test said to answer with: queued answers, ``decide``, the default.
    private final class AnswerBook: Sendable {
        struct State {
            var queued: [Answer] = []
            var decide: (@Sendable (JSON) -> Answer?)?
            var fallback = Answer.allow
        }
        let state = Mutex(State())

        /// The next answer: queued, else decided from the verified `event`, else the default.
        func answer(_ event: () -> JSON?) -> Answer {
            let (queued, decide, fallback) = state.withLock {
                state -> (Answer?, (@Sendable (JSON) -> Answer?)?, Answer) in
                if !state.queued.isEmpty { return (state.queued.removeFirst(), nil, state.fallback) }
                return (nil, state.decide, state.fallback)
            }
            if let queued { return queued }
            guard let decide, let event = event() else { return fallback }
            return decide(event) ?? fallback
        }
    }

    /// `answer` on the wire, after its delays.
    private static func reply(_ answer: Answer) -> LoopbackHTTPServer.Reply {
        var answer = answer
        while case .delayed(let delay, let then) = answer {
            Thread.sleep(
                forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
            )
            answer = then
        }
        let json = "application/json"
        switch answer {
        case .allow: return .answer(status: 200, contentType: json, body: Array(#"{"allow":true}"#.utf8))
        case .deny(let reason):
            var members: [JSON.Member] = [.init("allow", .bool(false))]
            if let reason { members.append(.init("reason", .string(reason))) }
            return .answer(status: 200, contentType: json, body: JSON.object(members).bytes)
        case .rewrite(let fields):
            let members =
                [JSON.Member("allow", .bool(true))] + fields.sorted { $0.key < $1.key }.map { .init($0.key, $0.value) }
            return .answer(status: 200, contentType: json, body: JSON.object(members).bytes)
        case .shadow: return .answer(status: 200, contentType: json, body: Array(#"{"allow":true,"shadow":true}"#.utf8))
        case .status(let code): return .answer(status: code, contentType: json, body: [])
        case .body(let bytes): return .answer(status: 200, contentType: json, body: bytes)
        case .silence: return .silence  // roomd's timeout_ms ends it
        case .delayed: preconditionFailure("unwrapped above")
        }
    }
}
