import RoomCluster

/// Where a client's messages are handled, and what else a service thread
/// owes the other nodes of a cluster — LiveKit's pkg/routing shape: one
/// interface, a local and a distributed implementation, and callers that
/// never branch on which one they have.
///
/// `LocalRouter` handles everything here. `ClusterRouter` (Cluster/) sends
/// the messages of a client whose room lives on another node to that node,
/// serves other nodes' clients of the rooms homed here, saves room states
/// for a takeover and forwards REST requests to a room's home.
///
/// Its service thread's only: `LocalRouter` hands everything to components
/// that check it (debug builds), `ClusterRouter` checks it itself.
/// A feed request's answer (`Router.answerFeed`).
enum FeedAnswer {
    /// Here and now: a cached span, a span this node builds, an error.
    case now(HTTPResponse)
    /// From the room's home: the router calls `reply` with it.
    case later
}

protocol Router: AnyObject {
    /// A complete message from a client of this node.
    func inbound(_ message: [UInt8], on connection: Connection)
    /// A client connection of this node closed (before its peer is let go).
    func connectionClosed(_ connection: Connection)
    /// A complete HTTP request: answered now, or later when the room's home
    /// node answers it. Returns lws' callback result.
    func serve(_ request: HTTPRequest, on wsi: OpaquePointer) -> Int32
    /// An HTTP connection closed (maybe before its answer came).
    func httpClosed(_ wsi: OpaquePointer)
    /// A feed request roomd read itself on a connection it keeps
    /// (RequestHeads.swift): its answer now, or `.later` when only the
    /// room's home (another node) can build it; then `reply` gets the
    /// answer on this thread once the home sends it (or the bus fails).
    func answerFeed(_ request: HTTPRequest, reply: @escaping (HTTPResponse) -> Void) -> FeedAnswer
    /// Something the cluster's threads posted to the inbox.
    func receive(_ input: ClusterInput)
    /// The end of one turn of the loop: what it queued for other nodes leaves.
    func flush()
    /// Once a second, from the keepalive sweep.
    func tick(now: Int64)
    /// The other service threads of this process (`--threads`), by node id:
    /// a record for one of them is posted to its inbox instead of the bus.
    func link(siblings: [NodeID: @Sendable ([UInt8]) -> Bool])
    /// SIGTERM/SIGINT on a node of a cluster (PROTOCOL.md section 18, 1.3):
    /// hand every room homed here to another node, then close this node's
    /// connections with 1012; `finished` once every one is closing. False:
    /// nothing to hand over (a single daemon keeps section 0's shutdown).
    func drain(finished: @escaping () -> Void) -> Bool
    /// The loop ended: background work stops.
    func stop()
}

/// What the cluster's threads hand the service thread.
enum ClusterInput: Sendable {
    /// The bus connection or the alive nodes changed.
    case status(ClusterStatus)
    /// A node message, a forwarded request, a lookup's outcome (Cluster/ClusterJobs.swift).
    case event(ClusterEvent)
}

/// A single daemon: every room lives here.
final class LocalRouter: Router {
    private let dispatcher: Dispatcher
    private let http: HTTPExchange
    private let routes: HTTPRoutes

    init(dispatcher: Dispatcher, http: HTTPExchange, routes: HTTPRoutes) {
        self.dispatcher = dispatcher
        self.http = http
        self.routes = routes
    }

    func inbound(_ message: [UInt8], on connection: Connection) { dispatcher.handle(message, from: connection) }
    func connectionClosed(_ connection: Connection) {}
    func serve(_ request: HTTPRequest, on wsi: OpaquePointer) -> Int32 { http.respond(wsi, routes.route(request)) }
    func httpClosed(_ wsi: OpaquePointer) {}
    func answerFeed(_ request: HTTPRequest, reply: @escaping (HTTPResponse) -> Void) -> FeedAnswer {
        .now(routes.feed.handle(request))
    }
    func receive(_ input: ClusterInput) {}
    func flush() {}
    func tick(now: Int64) {}
    func link(siblings: [NodeID: @Sendable ([UInt8]) -> Bool]) {}
    func drain(finished: @escaping () -> Void) -> Bool { false }
    func stop() {}
}
