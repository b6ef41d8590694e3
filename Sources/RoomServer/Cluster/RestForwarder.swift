import Logging
import RoomCluster
import RoomModel

/// REST in a cluster: a request about a room homed on another node is
/// forwarded to that node (NATS request/reply) and its answer relayed; the
/// room list gathers every node's page; requests forwarded by other nodes
/// are answered here. Its service thread's only (checked in debug builds);
/// the waiting happens on `ClusterJobs`' queue.
final class RestForwarder {
    private let thread: ServiceThread
    private let cluster: RoomCluster
    private let jobs: ClusterJobs
    private let homes: RoomHomes
    private let registry: RoomRegistry
    private let rest: RestAPI
    private let feed: RestFeed
    private let http: HTTPExchange
    /// Where a forwarded request's answer goes: an HTTP connection of lws,
    /// or one roomd keeps itself (RequestHeads.swift).
    private enum Asker {
        case lws(OpaquePointer)
        case kept((HTTPResponse) -> Void)
    }
    /// HTTP requests waiting for the bus, by serial (a feed request with its checked span).
    private var pending: [Int: (asker: Asker, request: HTTPRequest, feed: RestFeed.Query?)] = [:]
    private var nextSerial = 0

    init(
        thread: ServiceThread,
        cluster: RoomCluster,
        jobs: ClusterJobs,
        homes: RoomHomes,
        registry: RoomRegistry,
        rest: RestAPI,
        feed: RestFeed,
        http: HTTPExchange
    ) {
        self.thread = thread
        self.feed = feed
        self.cluster = cluster
        self.jobs = jobs
        self.homes = homes
        self.registry = registry
        self.rest = rest
        self.http = http
    }

    /// A REST request this node cannot answer alone: the room list (every
    /// node's rooms) or a room whose home is another node. False: answer here.
    func takesOver(_ request: HTTPRequest, wsi: OpaquePointer) -> Bool {
        thread.assertIsCurrent()
        if RestFeed.handles(request.path) { return takesOverFeed(request, wsi: wsi) }
        guard RestAPI.handles(request.path), let status = homes.status, status.connected else { return false }
        if request.path == RestAPI.createPath {
            // Room creation: the node that claims the room (or its home) answers.
            guard request.method == .post, let room = RestAPI.createdRoomID(request.body),
                !homes.isHome(of: room), registry.room(room) == nil
            else { return false }
            nextSerial += 1
            pending[nextSerial] = (.lws(wsi), request, nil)
            http.wait(wsi, seconds: Int(cluster.config.requestTimeoutMillis / 1000) + 5)
            jobs.forward(ForwardedHTTP.encode(request), room: room, serial: nextSerial, claim: true)
            return true
        }
        let isList = request.path == RestAPI.listPath || request.path == RestAPI.prefix
        let room = RestAPI.roomID(in: request.path) ?? RoomID("")
        if !isList, room.rawValue.isEmpty || homes.isHome(of: room) || registry.room(room) != nil { return false }
        if isList, request.method != .get || status.alive.count <= 1 { return false }
        nextSerial += 1
        pending[nextSerial] = (.lws(wsi), request, nil)
        http.wait(wsi, seconds: Int(cluster.config.requestTimeoutMillis / 1000) + 5)
        if isList {
            jobs.gatherList(ForwardedHTTP.encode(request), serial: nextSerial)
        } else {
            jobs.forward(ForwardedHTTP.encode(request), room: room, serial: nextSerial)
        }
        return true
    }

    /// The feed (PROTOCOL.md section 24): the span, the token and the cache
    /// are checked here, whichever node was asked; only a body this node has
    /// not cached goes to the room's home, and its answer is cached here too.
    private func takesOverFeed(_ request: HTTPRequest, wsi: OpaquePointer) -> Bool {
        let query: RestFeed.Query
        switch feed.prepare(request) {
        case .answer(let response):
            _ = http.respond(wsi, response)
            return true
        case .build(let checked): query = checked
        }
        guard needsHome(query) else {
            _ = http.respond(wsi, feed.build(query))
            return true
        }
        nextSerial += 1
        pending[nextSerial] = (.lws(wsi), request, query)
        http.wait(wsi, seconds: Int(cluster.config.requestTimeoutMillis / 1000) + 5)
        jobs.forward(ForwardedHTTP.encode(request), room: query.key.room, serial: nextSerial)
        return true
    }

    /// A feed request read by roomd itself (Router.answerFeed): answered
    /// here, or, when its body must come from the room's home, forwarded as
    /// `takesOverFeed` forwards lws' requests, the answer (cached here too)
    /// going to `reply`.
    func answerFeed(_ request: HTTPRequest, reply: @escaping (HTTPResponse) -> Void) -> FeedAnswer {
        thread.assertIsCurrent()
        let query: RestFeed.Query
        switch feed.prepare(request) {
        case .answer(let response): return .now(response)
        case .build(let checked): query = checked
        }
        guard needsHome(query) else { return .now(feed.build(query)) }
        nextSerial += 1
        pending[nextSerial] = (.kept(reply), request, query)
        jobs.forward(ForwardedHTTP.encode(request), room: query.key.room, serial: nextSerial)
        return .later
    }

    /// Whether only the room's home (another node) can build this span.
    private func needsHome(_ query: RestFeed.Query) -> Bool {
        let room = query.key.room
        guard let status = homes.status, status.connected else { return false }
        return !homes.isHome(of: room) && registry.room(room) == nil && !registry.holdsFeed(of: room)
    }

    /// The HTTP connection closed before its answer came.
    func httpClosed(_ wsi: OpaquePointer) {
        thread.assertIsCurrent()
        for (serial, waiting) in pending {
            if case .lws(let asker) = waiting.asker, asker == wsi { pending.removeValue(forKey: serial) }
        }
    }

    /// The answer of the room's home.
    func finish(_ serial: Int, _ response: HTTPResponse) {
        thread.assertIsCurrent()
        guard let waiting = pending.removeValue(forKey: serial) else { return }
        let response = waiting.feed.map { feed.keep($0, response) } ?? response
        switch waiting.asker {
        case .lws(let wsi): _ = http.respond(wsi, response)
        case .kept(let reply): reply(response)
        }
    }

    /// The room has no home elsewhere: answered here.
    func answerHere(_ serial: Int) {
        thread.assertIsCurrent()
        guard let waiting = pending[serial] else { return }
        finish(serial, waiting.feed.map(feed.build) ?? rest.handle(waiting.request))
    }

    /// Every other node's page of the room list: merged with this node's.
    func merge(_ serial: Int, pages: [[UInt8]]) {
        thread.assertIsCurrent()
        guard let waiting = pending[serial] else { return }
        let local = rest.handle(waiting.request)
        let limit = waiting.request.query["limit"].flatMap(Int.init) ?? RestAPI.defaultListLimit
        finish(serial, local.status == 200 ? ForwardedHTTP.mergeLists([local.body] + pages, limit: limit) : local)
    }

    /// A REST request forwarded by another node: answered as if asked here.
    func answer(_ bytes: [UInt8], reply: String) {
        thread.assertIsCurrent()
        guard let request = ForwardedHTTP.decodeRequest(bytes) else {
            cluster.reply(
                to: reply,
                ForwardedHTTP.encode(HTTPResponse.error(400, code: 400, "malformed forwarded request"))
            )
            return
        }
        let response =
            RestAPI.handles(request.path)
            ? rest.handle(request)
            : RestFeed.handles(request.path)
                ? feed.handle(request, forwarded: true)
                : HTTPResponse.error(404, code: 404, "no route for \(request.path)")
        cluster.reply(to: reply, ForwardedHTTP.encode(response))
    }
}
