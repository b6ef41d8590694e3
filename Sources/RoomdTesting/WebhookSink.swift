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
/// A handler on the kit's one loopback HTTP receiver (LoopbackHTTPServer.swift,
/// as ``HookServer`` is): a thread per connection (roomd keeps its
/// connections alive and sends the next event on them).
public final class WebhookSink: Sendable {
    /// One request as it arrived.
    public struct Request: Sendable {
        public var path: String
        public var headers: [String: String]
        public var body: [UInt8]
    }

    public var port: Int { server.port }
    /// `http://127.0.0.1:PORT/hooks`.
    public var url: String { "http://127.0.0.1:\(port)/hooks" }

    private let server: LoopbackHTTPServer

    /// Listens on 127.0.0.1, a free port. `secret`: what ``events()`` verifies
    /// with (``RoomdProcess/start(binary:template:secret:host:arguments:environment:limits:testMode:webhooks:hooks:timeout:)``
    /// sets it to the daemon's).
    public init(secret: [UInt8]? = nil) throws {
        server = try LoopbackHTTPServer(
            .init(
                server: "webhook sink",
                request: "webhook",
                numbered: "webhook request",
                noSecret: "WebhookSink has no secret: start the daemon with webhooks: sink, or set sink.secret",
                thread: "roomd-webhook-sink"
            ),
            secret: secret,
            backlog: 64
        ) { _, _ in .answer(status: 200, contentType: nil, body: []) }
    }

    deinit { close() }

    /// The secret ``events()`` verifies with.
    public var secret: [UInt8]? {
        get { server.secret }
        set { server.secret = newValue }
    }

    /// Every request so far, in arrival order.
    public var requests: [Request] {
        server.requests.map { Request(path: $0.path, headers: $0.headers, body: $0.body) }
    }

    /// Every event so far, in arrival order, each verified (no age limit:
    /// test mode's manual clock signs with its own time).
    /// - Throws: ``RoomdProcessError`` naming the request that does not verify and why.
    public func events() throws -> [JSON] { try server.events() }

    /// The next event not taken yet, of `type` when given (the events skipped are taken too).
    /// - Throws: ``RoomdProcessError`` after `timeout`, listing the types received so far.
    public func next(_ type: String? = nil, timeout: Duration = .seconds(10)) async throws -> JSON {
        try await server.next(type, timeout: timeout)
    }

    /// Stops listening (connections already open end with their peer).
    public func close() { server.close() }

    /// `template` (a file, default the shipped one) with `settings.webhooks.url` set to this sink.
    public func template(from path: String? = nil) throws -> RoomdProcess.Template {
        try server.template(from: path, [(["settings", "webhooks", "url"], .string(url))])
    }
}
