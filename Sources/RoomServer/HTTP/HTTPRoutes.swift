import RoomModel
import RoomWire

/// What plain HTTP serves: /healthz, /metrics, the browser client, the console (/admin/), and the
/// REST API (PROTOCOL.md sections 9 and 18). Its service thread's only
/// (`route` checks it in debug builds).
final class HTTPRoutes {
    private let thread: ServiceThread
    private let rest: RestAPI
    /// The audience feed (RestFeed.swift).
    let feed: RestFeed
    private let registry: RoomRegistry
    private let metrics: ServerMetrics
    private let homes: RoomHomes
    private let sockets: Sockets
    /// The metrics of the other service threads of this process (`--threads`),
    /// summed into /metrics; set before the loop runs.
    var siblingMetrics: [ServerMetrics] = []

    /// `/v2/test/*`: test mode only (PROTOCOL.md section 25); nil otherwise, and the routes do not exist.
    let test: TestRoutes?

    init(
        thread: ServiceThread,
        rest: RestAPI,
        feed: RestFeed,
        registry: RoomRegistry,
        metrics: ServerMetrics,
        homes: RoomHomes,
        sockets: Sockets,
        test: TestRoutes? = nil
    ) {
        self.thread = thread
        self.rest = rest
        self.feed = feed
        self.test = test
        self.registry = registry
        self.metrics = metrics
        self.homes = homes
        self.sockets = sockets
    }

    func route(_ request: HTTPRequest) -> HTTPResponse {
        thread.assertIsCurrent()
        switch (request.method, request.path) {
        case (.get, "/healthz"):
            // With a cluster: 503 also while the bus is unreachable (section 18).
            let busDown = homes.status.map { !$0.connected } ?? false
            let draining = sockets.draining
            var members: [JSON.Member] = [
                JSON.Member("status", .string(draining ? "draining" : busDown ? "cluster unavailable" : "ok")),
                JSON.Member("rooms", .int(registry.rooms.count)),
                JSON.Member("peers", .int(registry.peerCount)),
            ]
            if test != nil { members.append(JSON.Member("test_mode", .bool(true))) }
            if let cluster = homes.status {
                members.append(
                    JSON.Member(
                        "cluster",
                        [
                            "node_id": .string(cluster.nodeID.rawValue), "nodes": .int(cluster.nodes),
                            "connected": .bool(cluster.connected),
                        ]
                    )
                )
            }
            return .json(draining || busDown ? 503 : 200, .object(members))
        case (.get, "/metrics"):
            recordGauges()
            return HTTPResponse(
                status: 200,
                body: metrics.exposition(siblings: siblingMetrics),
                contentType: "text/plain; version=0.0.4; charset=utf-8"
            )
        case (.get, "/client/roomd.js"):
            return ClientFiles.module
        case (.get, "/client/"):
            return ClientFiles.page
        case (_, "/ws"):
            return .error(400, code: 400, "/ws expects a WebSocket upgrade")
        default:
            if AdminFiles.handles(request.path) {
                return AdminFiles.serve(request, enabled: registry.settings.admin.enabled)  // section 32
            }
            if RestAPI.handles(request.path) { return rest.handle(request) }
            if RestFeed.handles(request.path) { return feed.handle(request) }
            if request.path.hasPrefix(TestRoutes.prefix) {
                if let test { return test.handle(request) }
                // A harness that forgot the flag learns why, not just that the route is missing.
                return .error(
                    404,
                    code: 404,
                    "no route for \(request.path): this daemon was not started with --test-mode (PROTOCOL.md section 25)"
                )
            }
            return .error(404, code: 404, "no route for \(request.path)")
        }
    }

    /// The gauges as they are now (a scrape; with sibling threads, once a second too).
    func recordGauges() {
        thread.assertIsCurrent()
        metrics.recordGauges(connections: sockets.count, peers: registry.peerCount, rooms: registry.rooms.count)
        metrics.recordFeedCache(entries: feed.cache.count, bytes: feed.cache.bytes)
    }
}
