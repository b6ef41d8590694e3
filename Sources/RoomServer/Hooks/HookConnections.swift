import NIOCore
import NIOHTTP1
import NIOPosix
import RoomConfig

/// The HTTP/1.1 client of an `http://` hook (PROTOCOL.md section 30): kept-alive
/// connections to the hook's one host, on the poster's event loop, each with one
/// exchange at a time: the request (NIOHTTP1's encoder, one flush), the answer
/// (NIOHTTP1's decoder: length, chunked or closed; at most `limit` bytes of its
/// body), one deadline for the whole exchange. Nothing else: no redirects, no
/// retries, no proxies, one host.
///
/// Why not async-http-client, which webhooks and `https://` hooks use
/// (`SignedPoster`): at 5,000 hooked messages a second on one core, its pool,
/// request bag and generic state machines were two thirds of roomd's CPU
/// (perf: the poster's thread at 66 % of roomd's samples, the service thread
/// 34 %), and the core was full. This client does the same exchange with what
/// a hook needs and nothing more (levers.md, "hooks: roomd's own HTTP/1.1
/// client"). TLS stays with async-http-client: an `https://` hook is a backend
/// across a network, where the round trip, not roomd's CPU, is the cost.
///
/// Owned by `eventLoop`'s thread (one thread, the poster's): every method and
/// every field but the constants is used there only.
final class HookConnections: @unchecked Sendable {
    let eventLoop: EventLoop
    private let host: String
    private let port: Int
    private let path: String
    private let hostHeader: String
    private let maxConnections: Int
    private let connectTimeout: TimeAmount
    /// An idle connection kept longer than this is closed: under the common
    /// servers' keep-alive timeouts (Node's 5 s), so that a request is not written
    /// to a connection the server is closing.
    static let idleTimeout = TimeAmount.seconds(4)

    /// Idle connections, the most recently used last (taken first: warm, and the
    /// rest age out).
    private var idle: [HookConnection] = []
    /// Connections open or opening.
    private var opened = 0
    /// Exchanges waiting for a connection, when `maxConnections` are busy.
    /// Finished ones (timed out) stay until they reach the front and are skipped.
    private var waiting = CircularBuffer<HookExchange>()
    private var sweep: RepeatedTask?

    /// nil unless `url` is an `http://` URL.
    init?(url: String, eventLoop: EventLoop, maxConnections: Int, connectTimeoutMs: Int) {
        guard let parsed = WebURL(url), parsed.scheme == "http" else { return nil }
        self.eventLoop = eventLoop
        host = parsed.host.hasPrefix("[") ? String(parsed.host.dropFirst().dropLast()) : parsed.host  // IPv6 literal
        port = parsed.port ?? 80
        path = parsed.target
        hostHeader = parsed.authority
        self.maxConnections = maxConnections
        connectTimeout = .milliseconds(Int64(connectTimeoutMs))
    }

    /// On the event loop: POST `body` with `headers` (`SignedPoster.headers(for:)`), at most
    /// `timeoutMs` for all of it and `limit` bytes of the answer's body read;
    /// `done` is called exactly once, on the event loop.
    func post(
        _ body: [UInt8],
        headers: [(String, String)],
        timeoutMs: Int,
        readingUpTo limit: Int,
        then done: @escaping (SignedPoster.Outcome) -> Void
    ) {
        eventLoop.assertInEventLoop()
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path)
        head.headers.reserveCapacity(headers.count + 4)
        head.headers.add(name: "Host", value: hostHeader)
        head.headers.add(contentsOf: headers)
        head.headers.add(name: "Content-Length", value: String(body.count))
        let exchange = HookExchange(head: head, body: body, limit: limit, done: done)
        exchange.timer = eventLoop.scheduleTask(in: .milliseconds(Int64(timeoutMs))) { [self] in
            timedOut(exchange)
        }
        if let connection = idle.popLast() {
            connection.send(exchange)
        } else if opened < maxConnections {
            connect(for: exchange)
        } else {
            waiting.append(exchange)
        }
    }

    /// The deadline passed: the exchange fails (an answer begun is one not
    /// ended in time), and its connection, if it has one, is closed.
    private func timedOut(_ exchange: HookExchange) {
        exchange.finish(exchange.status.map { .answered(status: $0, body: nil) } ?? .failed("timed out"))
        exchange.connection?.abandon()
    }

    private func connect(for exchange: HookExchange) {
        opened += 1
        let connection = HookConnection(pool: self)
        let bound = NIOLoopBound(connection, eventLoop: eventLoop)
        ClientBootstrap(group: eventLoop)
            .connectTimeout(connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers(enableOutboundHeaderValidation: false)
                    try channel.pipeline.syncOperations.addHandler(bound.value)
                }
            }
            .connect(host: host, port: port)
            .whenComplete { [self] result in
                switch result {
                case .success:
                    if exchange.isPending {
                        bound.value.send(exchange)
                    } else {
                        release(bound.value)
                    }
                case .failure(let error):
                    opened -= 1
                    exchange.finish(.failed("connecting: \(error)"))
                    connectForNextWaiting()
                }
            }
    }

    /// A connection ended its exchange and is kept: the next waiting exchange, or idle.
    func release(_ connection: HookConnection) {
        while let next = waiting.popFirst() {
            if next.isPending {
                connection.send(next)
                return
            }
        }
        connection.lastUsed = .now()
        idle.append(connection)
        if sweep == nil {
            sweep = eventLoop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { [self] _ in
                closeIdle()
            }
        }
    }

    /// A connection closed (by either side): it is forgotten, and a waiting
    /// exchange gets a connection of its own.
    func lost(_ connection: HookConnection) {
        opened -= 1
        if let index = idle.lastIndex(where: { $0 === connection }) {
            idle.remove(at: index)
        }
        connectForNextWaiting()
    }

    private func connectForNextWaiting() {
        while opened < maxConnections, let next = waiting.popFirst() {
            if next.isPending {
                connect(for: next)
                return
            }
        }
    }

    /// Every second while connections are idle: those idle longer than `idleTimeout` are closed.
    private func closeIdle() {
        let oldest = NIODeadline.now() - Self.idleTimeout
        let stale = idle.prefix { $0.lastUsed < oldest }.count
        let closing = idle.prefix(stale)
        idle.removeFirst(stale)
        for connection in closing {
            connection.abandon()
        }
        if idle.isEmpty {
            sweep?.cancel()
            sweep = nil
        }
    }
}

/// One request and its answer so far. Owned by the pool's event loop thread
/// (`HookConnections.eventLoop`): made there, and its deadline's task and
/// connection's callbacks run there.
final class HookExchange: @unchecked Sendable {
    let head: HTTPRequestHead
    let body: [UInt8]
    let limit: Int
    private var done: ((SignedPoster.Outcome) -> Void)?
    var timer: Scheduled<Void>?
    /// The connection it was written to, while it is.
    weak var connection: HookConnection?
    var status: Int?
    var answer: [UInt8] = []

    init(head: HTTPRequestHead, body: [UInt8], limit: Int, done: @escaping (SignedPoster.Outcome) -> Void) {
        self.head = head
        self.body = body
        self.limit = limit
        self.done = done
    }

    var isPending: Bool { done != nil }

    /// The first call hands over the outcome and cancels the deadline; later ones do nothing.
    func finish(_ outcome: SignedPoster.Outcome) {
        guard let done else { return }
        self.done = nil
        timer?.cancel()
        timer = nil
        done(outcome)
    }
}

/// One kept-alive connection to the hook, the last handler of its pipeline
/// (after NIOHTTP1's client handlers). Owned by the pool's event loop.
final class HookConnection: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private let pool: HookConnections
    private var context: ChannelHandlerContext?
    /// The exchange written to this connection and not ended yet.
    private var exchange: HookExchange?
    private var keepAlive = true
    private var closed = false
    var lastUsed = NIODeadline.now()

    init(pool: HookConnections) {
        self.pool = pool
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func send(_ exchange: HookExchange) {
        guard let context, !closed else {
            exchange.finish(.failed("connection closed"))
            return
        }
        self.exchange = exchange
        exchange.connection = self
        keepAlive = true
        context.write(wrapOutboundOut(.head(exchange.head)), promise: nil)
        context.write(
            wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: exchange.body)))),
            promise: nil
        )
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard let exchange, exchange.isPending else {
            abandon()  // an answer nobody asked for, or one whose deadline passed
            return
        }
        switch unwrapInboundIn(data) {
        case .head(let head):
            exchange.status = Int(head.status.code)
            keepAlive = head.isKeepAlive
        case .body(var buffer):
            guard exchange.answer.count + buffer.readableBytes <= exchange.limit else {
                // Not read past the cap: the connection goes with it.
                exchange.finish(.answered(status: exchange.status ?? 0, body: nil))
                abandon()
                return
            }
            exchange.answer += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            self.exchange = nil
            exchange.connection = nil
            exchange.finish(.answered(status: exchange.status ?? 0, body: exchange.answer))
            if keepAlive && !closed {
                pool.release(self)
            } else {
                abandon()
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // A malformed answer (NIOHTTP1's parser), a reset: the exchange fails with it.
        if let exchange {
            exchange.finish(
                exchange.status.map { .answered(status: $0, body: nil) } ?? .failed("\(error)")
            )
        }
        abandon()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        if let exchange {
            self.exchange = nil
            exchange.finish(exchange.status.map { .answered(status: $0, body: nil) } ?? .failed("connection closed"))
        }
        pool.lost(self)
        context.fireChannelInactive()
    }

    /// Closes the connection; `channelInactive` then tells the pool.
    func abandon() {
        guard !closed else { return }
        closed = true
        context?.close(promise: nil)
    }
}
