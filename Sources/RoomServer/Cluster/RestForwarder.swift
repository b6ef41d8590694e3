import Logging
import RoomCluster
import RoomModel

/// REST in a cluster: a request about a room homed on another node is
/// forwarded to that node (NATS request/reply) and its answer relayed; the
/// room list gathers every node's page; requests forwarded by other nodes
/// are answered here. Service thread only; the waiting happens on
/// `ClusterJobs`' queue.
final class RestForwarder {
    private let cluster: RoomCluster
    private let jobs: ClusterJobs
    private let homes: RoomHomes
    private let registry: RoomRegistry
    private let rest: RestAPI
    private let http: HTTPExchange
    /// HTTP requests waiting for the bus, by serial.
    private var pending: [Int: (wsi: OpaquePointer, request: HTTPRequest)] = [:]
    private var nextSerial = 0

    init(
        cluster: RoomCluster,
        jobs: ClusterJobs,
        homes: RoomHomes,
        registry: RoomRegistry,
        rest: RestAPI,
        http: HTTPExchange
    ) {
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
        guard RestAPI.handles(request.path), let status = homes.status, status.connected else { return false }
        if request.path == RestAPI.createPath {
            // Room creation: the node that claims the room (or its home) answers.
            guard request.method == .post, let room = RestAPI.createdRoomID(request.body),
                !homes.isHome(of: room), registry.room(room) == nil
            else { return false }
            nextSerial += 1
            pending[nextSerial] = (wsi, request)
            http.wait(wsi, seconds: Int(cluster.config.requestTimeoutMillis / 1000) + 5)
            jobs.forward(ForwardedHTTP.encode(request), room: room, serial: nextSerial, claim: true)
            return true
        }
        let isList = request.path == RestAPI.listPath || request.path == RestAPI.prefix
        let room = RestAPI.roomID(in: request.path) ?? ""
        if !isList, room.isEmpty || homes.isHome(of: room) || registry.room(room) != nil { return false }
        if isList, request.method != .get || status.alive.count <= 1 { return false }
        nextSerial += 1
        pending[nextSerial] = (wsi, request)
        http.wait(wsi, seconds: Int(cluster.config.requestTimeoutMillis / 1000) + 5)
        if isList {
            jobs.gatherList(ForwardedHTTP.encode(request), serial: nextSerial)
        } else {
            jobs.forward(ForwardedHTTP.encode(request), room: room, serial: nextSerial)
        }
        return true
    }

    /// The HTTP connection closed before its answer came.
    func httpClosed(_ wsi: OpaquePointer) {
        for (serial, waiting) in pending where waiting.wsi == wsi { pending.removeValue(forKey: serial) }
    }

    /// The answer of the room's home.
    func finish(_ serial: Int, _ response: HTTPResponse) {
        guard let waiting = pending.removeValue(forKey: serial) else { return }
        _ = http.respond(waiting.wsi, response)
    }

    /// The room has no home elsewhere: answered here.
    func answerHere(_ serial: Int) {
        guard let waiting = pending[serial] else { return }
        finish(serial, rest.handle(waiting.request))
    }

    /// Every other node's page of the room list: merged with this node's.
    func merge(_ serial: Int, pages: [[UInt8]]) {
        guard let waiting = pending[serial] else { return }
        let local = rest.handle(waiting.request)
        let limit = waiting.request.query["limit"].flatMap(Int.init) ?? RestAPI.defaultListLimit
        finish(serial, local.status == 200 ? ForwardedHTTP.mergeLists([local.body] + pages, limit: limit) : local)
    }

    /// A REST request forwarded by another node: answered as if asked here.
    func answer(_ bytes: [UInt8], reply: String) {
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
            : HTTPResponse.error(404, code: 404, "no route for \(request.path)")
        cluster.reply(to: reply, ForwardedHTTP.encode(response))
    }
}
