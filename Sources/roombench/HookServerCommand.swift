import ArgumentParser
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import RoomWire
import RoomdTesting

/// `roombench hook-server`: the app's hook (PROTOCOL.md section 30) for `make bench`'s
/// hooks rows: answers `{"allow":true}` after --delay-ms, or never for the messages of
/// --silent-room (roomd's timeout_ms ends them). Prints `hook listening on URL`, serves
/// until its stdin closes.
///
/// SwiftNIO, one event loop, a timer per delayed answer: no thread per connection.
/// RoomdTesting's `HookServer` (a thread per connection, for tests) made the `timeout`
/// row measure itself: each timed-out call closes its connection, roomd opens another,
/// and at 5,000 calls/s a thread started per new connection on the load tool's core
/// could snowball to ~1,000 threads in a run (levers.md).
struct HookServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hook-server",
        abstract: "(r) A hook for the hooks rows: allow after --delay-ms; never answer --silent-room's messages."
    )

    @Option(help: "Milliseconds before each answer.") var delayMs = 5
    @Option(help: "A room whose hooked calls are never answered (roomd's timeout_ms fails them).")
    var silentRoom: String?
    @Option(help: "roomd's HS256 secret file: requests are verified with it (needed for --silent-room).")
    var secretFile: String?

    func run() throws {
        let secret = try secretFile.map { path -> [UInt8] in
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
            return bytes
        }
        let rules = BenchHook.Rules(secret: secret, silentRoom: silentRoom, delay: .milliseconds(Int64(delayMs)))
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let channel = try ServerBootstrap(group: loops)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withPipeliningAssistance: true)
                    try channel.pipeline.syncOperations.addHandler(BenchHook(rules: rules))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        print("hook listening on http://127.0.0.1:\(channel.localAddress?.port ?? 0)/hook")
        fflush(nil)
        while readLine() != nil {}  // until stdin closes
        try? channel.close().wait()
        try? loops.syncShutdownGracefully()
    }
}

/// One connection of `roombench hook-server`: every request verified and parsed (in both
/// rows, so that they differ only by the silent room), then answered after the delay on
/// the connection's event loop, or never.
private final class BenchHook: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    struct Rules: Sendable {
        let secret: [UInt8]?
        let silentRoom: String?
        let delay: TimeAmount
    }

    private static let allow = Array(#"{"allow":true}"#.utf8)
    private let rules: Rules
    private var headers: [String: String] = [:]
    private var body: [UInt8] = []

    init(rules: Rules) {
        self.rules = rules
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            headers = Dictionary(head.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
            body.removeAll(keepingCapacity: true)
        case .body(let part):
            body.append(contentsOf: part.readableBytesView)
        case .end:
            if silent() { return }  // roomd's timeout_ms ends it, and closes the connection
            let context = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.value.eventLoop.assumeIsolated().scheduleTask(in: rules.delay) { [self] in
                answer(context.value)
            }
        }
    }

    /// Whether the request is the silent room's (its body verified and parsed either way).
    private func silent() -> Bool {
        guard let secret = rules.secret,
            case .valid(let event) = WebhookVerifier.verify(body: body, headers: headers, secret: secret, maxAge: nil)
        else { return false }
        guard let silentRoom = rules.silentRoom else { return false }
        return event["data"]?["room_id"]?.stringValue == silentRoom
    }

    private func answer(_ context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        headers.add(name: "Content-Length", value: String(Self.allow.count))
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))),
            promise: nil
        )
        context.write(
            wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: Self.allow)))),
            promise: nil
        )
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
