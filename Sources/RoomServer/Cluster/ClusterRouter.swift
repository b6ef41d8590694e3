import Logging
import RoomCluster
import RoomModel

#if canImport(Glibc)
import Glibc
#endif

/// The service thread's side of the cluster (docs/CLUSTER.md), behind the
/// `Router` interface: the edge (`Edge`: this node's clients whose room
/// lives elsewhere), the home (`Home`: other nodes' clients of the rooms
/// homed here), the records between them (NodeRecords.swift), takeovers
/// (Takeover.swift), saved room states (`RoomStateSaver`), REST forwarding
/// (`RestForwarder`) and the per-node batches (`NodeOutboxes`). Records
/// are batched per node for one turn of the loop and sent by `flush()`.
///
/// Its service thread's only (checked in debug builds); the blocking NATS
/// work is `ClusterJobs`'.
final class ClusterRouter: Router {
    /// The server's components the cluster works with.
    struct Parts {
        var thread: ServiceThread
        var registry: RoomRegistry
        var dispatcher: Dispatcher
        var fanOut: FanOut
        var rest: RestAPI
        var feed: RestFeed
        var http: HTTPExchange
        var routes: HTTPRoutes
        var homes: RoomHomes
        var flow: FlowControl
        var sockets: Sockets
        var schedule: Schedule
        var clock: RoomClock
        var logger: Logger
    }

    /// What a draining node answers REST with (PROTOCOL.md section 18, 1.3).
    static let draining = HTTPResponse.error(503, code: 5003, "draining: this node is shutting down, use another node")

    /// A restored room's peers wait at least this long for their clients to attach.
    static let takeoverGraceMillis: Int64 = 5_000

    let thread: ServiceThread
    let cluster: RoomCluster
    let jobs: ClusterJobs
    let node: NodeID
    let homes: RoomHomes
    let outboxes: NodeOutboxes
    let edge: Edge
    let home: Home
    let states: RoomStateSaver
    let rest: RestForwarder
    let registry: RoomRegistry
    let flow: FlowControl
    let schedule: Schedule
    let logger: Logger
    let metrics: ServerMetrics
    private let http: HTTPExchange
    private let routes: HTTPRoutes
    let sockets: Sockets
    /// The drain under way (Drain.swift); nil until SIGTERM.
    var drainState: NodeDrain?
    /// The incarnation each node's messages last came from.
    var incarnations: [NodeID: String] = [:]
    /// The alive nodes as last heard.
    var alive: [NodeID] = []

    /// Joins the cluster at `url` (PROTOCOL.md section 18): node id, the bus
    /// link and its background jobs, the state-saving timer. `post` hands
    /// what the cluster's threads produce to the service thread.
    static func join(
        url: String,
        nodeID: NodeID?,
        serviceThread: Int?,
        port: Int,
        parts: Parts,
        post: @escaping @Sendable (ClusterInput) -> Void
    ) -> ClusterRouter {
        var nodeID = nodeID ?? ClusterConfig.defaultNodeID(hostName: hostName(), port: port)
        if let serviceThread { nodeID = ClusterConfig.threadNodeID(nodeID, thread: serviceThread) }
        let config = ClusterConfig(natsURL: url, nodeID: nodeID)
        parts.homes.statusChanged(ClusterStatus(nodeID: nodeID, nodes: 1, connected: false))
        let cluster = RoomCluster(
            config: config,
            logger: parts.logger,
            onStatus: { post(.status($0)) },
            onMessage: { post(.event(.message($0))) },
            onRequest: { post(.event(.request($0, reply: $1))) }
        )
        let jobs = ClusterJobs(cluster: cluster, logger: parts.logger) { post(.event($0)) }
        let router = ClusterRouter(cluster: cluster, jobs: jobs, parts: parts)
        parts.flow.report = { [unowned edge = router.edge] connection, congested in
            edge.reportFlow(connection, congested: congested)
        }
        jobs.start()
        parts.schedule.every(200) { [unowned states = router.states] in states.saveChanged() }
        parts.logger.notice("cluster: joining", metadata: ["node": "\(nodeID)", "url": "\(url)"])
        cluster.start()
        return router
    }

    private init(cluster: RoomCluster, jobs: ClusterJobs, parts: Parts) {
        thread = parts.thread
        self.cluster = cluster
        self.jobs = jobs
        node = cluster.config.nodeID
        homes = parts.homes
        registry = parts.registry
        flow = parts.flow
        schedule = parts.schedule
        logger = parts.logger
        metrics = parts.dispatcher.metrics
        http = parts.http
        routes = parts.routes
        sockets = parts.sockets
        outboxes = NodeOutboxes(thread: parts.thread, cluster: cluster, logger: parts.logger)
        home = Home(
            thread: parts.thread,
            outboxes: outboxes,
            homes: parts.homes,
            jobs: jobs,
            dispatcher: parts.dispatcher,
            fanOut: parts.fanOut,
            registry: parts.registry,
            flow: parts.flow,
            sockets: parts.sockets,
            clock: parts.clock,
            logger: parts.logger
        )
        edge = Edge(
            thread: parts.thread,
            homes: parts.homes,
            jobs: jobs,
            outboxes: outboxes,
            dispatcher: parts.dispatcher,
            home: home,
            registry: parts.registry,
            metrics: parts.dispatcher.metrics,
            logger: parts.logger
        )
        states = RoomStateSaver(
            registry: parts.registry,
            homes: parts.homes,
            writer: RoomStateWriter(
                cluster: cluster,
                bytesWritten: parts.dispatcher.metrics.clusterStateBytes,
                saveTime: parts.dispatcher.metrics.clusterStateSave,
                heldBytes: parts.dispatcher.metrics.clusterRoomStateBytes,
                logger: parts.logger
            )
        )
        rest = RestForwarder(
            thread: parts.thread,
            cluster: cluster,
            jobs: jobs,
            homes: parts.homes,
            registry: parts.registry,
            rest: parts.rest,
            feed: parts.feed,
            http: parts.http
        )
        home.isClaiming = { [unowned edge] room in edge.isClaiming(room) }
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, 255) == 0 else { return "roomd" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: Router

    func inbound(_ message: [UInt8], on connection: Connection) { edge.inbound(message, on: connection) }

    func connectionClosed(_ connection: Connection) { edge.connectionClosed(connection) }

    func serve(_ request: HTTPRequest, on wsi: OpaquePointer) -> Int32 {
        thread.assertIsCurrent()
        if drainState != nil, RestAPI.handles(request.path) || RestFeed.handles(request.path) {
            return http.respond(wsi, Self.draining)
        }
        if rest.takesOver(request, wsi: wsi) { return 0 }
        return http.respond(wsi, routes.route(request))
    }

    func httpClosed(_ wsi: OpaquePointer) { rest.httpClosed(wsi) }

    func answerFeed(_ request: HTTPRequest, reply: @escaping (HTTPResponse) -> Void) -> FeedAnswer {
        thread.assertIsCurrent()
        return drainState != nil ? .now(Self.draining) : rest.answerFeed(request, reply: reply)
    }

    func receive(_ input: ClusterInput) {
        thread.assertIsCurrent()
        switch input {
        case .status(let status): statusChanged(status)
        case .event(let event): handle(event)
        }
    }

    /// Sends every batch built during this turn of the loop, with the
    /// acknowledgements of the messages handled.
    func flush() {
        thread.assertIsCurrent()
        home.flushAcknowledgements()
        outboxes.flushAll()
    }

    func tick(now: Int64) {
        thread.assertIsCurrent()
        if drainState != nil { closeIdle() } else { releaseEndedRooms() }
        flow.excuseStalled(now: now, among: home.remoteConnections)  // other nodes' clients count too
    }

    func link(siblings: [NodeID: @Sendable ([UInt8]) -> Bool]) {
        thread.assertIsCurrent()
        outboxes.siblings = siblings
    }

    func stop() {
        thread.assertIsCurrent()
        // The last node of a cluster (or a drain that timed out): what changed
        // since the last save is saved before the node leaves.
        states.saveChanged()
        states.writer.flush()
        jobs.stop()
        cluster.stop()
    }

    // MARK: the bus

    private func handle(_ event: ClusterEvent) {
        switch event {
        case .message(let bytes): received(bytes)
        case .request(let bytes, let reply):
            if drainState != nil {
                // Draining: the room is (being) handed over; the node that asked answers 503 and the caller retries.
                cluster.reply(to: reply, ForwardedHTTP.encode(Self.draining))
            } else {
                rest.answer(bytes, reply: reply)
            }
        case .resolved(let room, let claim, let found, let snapshot):
            if found == .here, let snapshot { restore(room, from: snapshot) }
            edge.resolved(room, claim: claim, found)
            if claim { home.claimSettled(room) }
            closeIdle()
        case .handedOver(let moved, let kept): handedOver(moved: moved, kept: kept)
        case .leaseLost(let room): leaseLost(room)
        case .restAnswer(let serial, let response): rest.finish(serial, response)
        case .restLocal(let serial): rest.answerHere(serial)
        case .restList(let serial, let pages): rest.merge(serial, pages: pages)
        case .restClaimed(let serial, let room):
            homes.claimed(room)
            rest.answerHere(serial)
        }
    }
}
