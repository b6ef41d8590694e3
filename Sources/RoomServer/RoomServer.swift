import CWebSockets
#if canImport(Glibc)
import Glibc
#endif
import Logging
import RoomCluster
import RoomConfig
import RoomModel
import Synchronization

/// How the daemon is configured at start.
public struct ServerOptions: Sendable {
    public var host: String
    public var port: Int
    public var template: RoleTemplate
    /// HS256 secret, at least 32 bytes.
    public var secret: [UInt8]
    /// When set, app tokens must carry this `access_key`.
    public var accessKey: String?
    /// Signs webhooks (`ROOMD_WEBHOOK_SECRET`); nil: the HS256 `secret`.
    public var webhookSecret: [UInt8]?
    /// `nats://HOST:PORT` (validated): run as a node of a cluster (section
    /// 18). Nil: a single daemon, and nothing of NATS is touched.
    public var clusterURL: String?
    /// This node's id (`ClusterConfig.isValidNodeID`); nil: `HOSTNAME-PORT`
    /// with the bound port (`ClusterConfig.defaultNodeID`).
    public var nodeID: String?
    /// Listen with `SO_REUSEPORT`: other roomd service threads or processes
    /// (nodes of the same cluster) may listen on the same port, and the
    /// kernel spreads new connections among them (`roomd --threads`,
    /// `--reuse-port`). Needs the libev loop.
    public var reusePort = false
    /// Servers in this process that share its open-file limit (`--threads`):
    /// each may hold its share of sockets.
    public var serversInProcess = 1
    /// This server's number among the process' service threads (`--threads`):
    /// its cluster node id gets `-tN` appended.
    public var serviceThread: Int?

    public init(host: String = "127.0.0.1", port: Int = 7880, template: RoleTemplate, secret: [UInt8],
                accessKey: String? = nil, clusterURL: String? = nil, nodeID: String? = nil) {
        self.host = host
        self.port = port
        self.template = template
        self.secret = secret
        self.accessKey = accessKey
        self.clusterURL = clusterURL
        self.nodeID = nodeID
    }
}

public struct ServerError: Error, CustomStringConvertible {
    public var description: String
}

/// The daemon: one libwebsockets context served by one thread, which owns
/// every connection and all room state. Other threads only call `shutdown()`,
/// which posts to the inbox and wakes the loop.
///
/// `@unchecked Sendable`: every stored property except `inbox` (thread-safe)
/// and the immutable configuration is touched only by the service thread,
/// i.e. inside lws callbacks and `run()`.
public final class RoomServer: @unchecked Sendable {
    enum Command: Sendable {
        case shutdown
        case reload(RoleTemplate)
        /// The cluster's status changed (posted by the cluster thread).
        case cluster(ClusterStatus)
        /// A node message, a forwarded request, or a lookup's outcome (Cluster/).
        case bus(ClusterEvent)
        /// Node records from a service thread of this process (`--threads`),
        /// handed over directly instead of through nats-server.
        case sibling([UInt8])
    }

    let options: ServerOptions
    let logger: Logger
    let registry: RoomRegistry
    let clock = SystemClock()
    package private(set) var dispatcher: Dispatcher!
    private let inbox = Inbox<Command>()
    /// Bytes of `.sibling` records posted and not drained yet: bounded like a
    /// NATS subscription's pending bytes (beyond it records are dropped, as
    /// the bus drops for a slow consumer).
    private let siblingBytesPending = Atomic<Int>(0)

    private var context: OpaquePointer?
    /// The libev loop lws runs on (epoll: each wake-up costs the sockets that
    /// are ready, not every socket as lws' poll() loop does); nil on poll().
    private var evLoop: UnsafeMutableRawPointer?
    private let foreignLoops = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 1)
    /// No lws validity timers (all zero): lws 4.1 otherwise re-arms a timer in
    /// a sorted list on every frame received — O(connections) each, 85 % of
    /// roomd's CPU with 19,000 idle peers answering keepalive pings (a `make
    /// bench` profile). roomd's own keepalive sweep does that job once a second.
    private let retryPolicy: UnsafeMutablePointer<lws_retry_bo_t> = {
        let policy = UnsafeMutablePointer<lws_retry_bo_t>.allocate(capacity: 1)
        policy.initialize(to: lws_retry_bo_t())
        return policy
    }()
    private var protocols: UnsafeMutablePointer<lws_protocols>?
    /// roomd's own listening socket (libev loop); nil on lws' poll() loop,
    /// where lws listens itself.
    private var listener: Listener?
    private var vhost: OpaquePointer?
    private var cStrings: [UnsafeMutablePointer<CChar>] = []

    var connections: [OpaquePointer: Connection] = [:]
    private var nextConnectionID = 0
    var httpResponses: [OpaquePointer: HTTPResponse] = [:]
    var httpRequests: [OpaquePointer: HTTPRequest] = [:]
    let metrics = ServerMetrics()
    private(set) lazy var flow = FlowControl(maxOutboundBytes: options.template.settings.limits.maxOutboundBytes)
    private(set) var rest: RestAPI!
    /// Reused buffer for coalesced writes.
    var writeScratch: [UInt8] = []
    /// Bytes handed to lws per write. Several queued frames leave in one
    /// write; lws copies what the kernel does not take, so this also bounds
    /// that copy per connection — and a connection whose last write was
    /// partial gets the smaller chunk until it catches up.
    static let writeChunk = 64 * 1024
    static let backedUpWriteChunk = 16 * 1024
    /// Request headers over this get 431 (PROTOCOL.md section 1, 1.1).
    static let maxHeaderBytes = 8192
    /// lws' header table per request (names and values of every header):
    /// twice the limit, so that roomd sees and answers requests over it;
    /// lws closes a request that overflows the table without an answer.
    static let headerTableBytes = 16384
    /// Bytes written since the heap was last trimmed (see `sweepIdleConnections`).
    var bytesSinceTrim = 0
    private var lastTrim: Int64 = 0

    /// Sockets lws holds (WSI_CREATE minus WSI_DESTROY), and how many it
    /// may hold: the open-file limit less a reserve for everything else the
    /// process opens. At the budget new connections are refused at once —
    /// so `accept` never fails with EMFILE, which lws would retry in a spin.
    var openSockets = 0
    private(set) lazy var socketBudget: Int = {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        let soft = Int(clamping: min(limit.rlim_cur, 1 << 20))  // RLIM_INFINITY is UInt.max
        let servers = max(1, options.serversInProcess)
        return max(8, (soft - RoomServer.reservedFiles * servers) / servers)
    }()
    static let reservedFiles = 64
    private var lastRefusalLog: Int64 = 0
    private var refusedSinceLog = 0

    /// The cluster link, when `options.clusterURL` is set; created and
    /// started by `start()` once the port is bound, stopped when `run()` ends.
    private(set) var cluster: RoomCluster?
    /// The cluster's status as the service thread last heard it (healthz, join).
    private(set) var clusterStatus: ClusterStatus?
    /// Room homes and node-to-node records (Cluster/ClusterRouter.swift); nil without a cluster.
    private(set) var router: ClusterRouter?

    private(set) var draining = false
    private var stopped = false
    private var drainTimer: LoopTimer?
    private var speakerTimer: LoopTimer?
    private var roleChangeTimer: LoopTimer?
    private var roomStateTimer: LoopTimer?
    private var graceTimer: LoopTimer?
    private var keepaliveTimer: LoopTimer?
    private var pollStatsTimer: LoopTimer?
    private var pollTimer: LoopTimer?
    private var cueTimer: LoopTimer?
    /// Saves the changed rooms' states for a takeover (cluster only).
    private var stateTimer: LoopTimer?
    /// Webhook delivery (Webhooks/), nil without `settings.webhooks`.
    var webhooks: WebhookSender?

    public init(options: ServerOptions, logger: Logger) {
        self.options = options
        self.logger = logger
        self.registry = RoomRegistry(template: options.template)
        self.dispatcher = Dispatcher(server: self)
        self.rest = RestAPI(server: self)
        setUpWebhooks()  // Webhooks/ServerWebhooks.swift
    }

    deinit {
        listener?.close()
        if let context { lws_context_destroy(context) }
        if let evLoop { cws_ev_loop_destroy(evLoop) }
        foreignLoops.deallocate()
        retryPolicy.deallocate()
        protocols?.deallocate()
        for string in cStrings { free(string) }
    }

    private func keep(_ string: String) -> UnsafeMutablePointer<CChar> {
        let pointer = strdup(string)!
        cStrings.append(pointer)
        return pointer
    }

    /// Creates the context and binds the listening socket. Returns the port
    /// (the chosen one when the port is 0). `port`: instead of `options.port`
    /// (the other service threads of a process take the port the first one bound).
    public func start(port requestedPort: Int? = nil) throws -> Int {
        let requestedPort = requestedPort ?? options.port
        LWSLog.install(LWSLog(logger: logger))
        let limits = options.template.settings.limits

        let protocols = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 2)
        protocols.initialize(to: lws_protocols())
        protocols[0].name = UnsafePointer(keep("roomd"))
        protocols[0].callback = roomdCallback
        protocols[0].per_session_data_size = 0
        protocols[0].rx_buffer_size = max(64 * 1024, min(limits.maxMessageBytes, 1 << 20))
        (protocols + 1).initialize(to: cws_protocol_list_term())
        self.protocols = protocols

        var info = lws_context_creation_info()
        info.port = Int32(requestedPort)
        // lws takes an interface name or an address: resolve the usual loopback name.
        info.iface = UnsafePointer(keep(options.host == "localhost" ? "127.0.0.1" : options.host))
        info.protocols = UnsafePointer(protocols)
        // An unknown method or a line that is not HTTP falls back to a raw
        // socket (answered 400 in the callback) instead of lws' HTML 403.
        info.options = UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8) | UInt64(LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG)
        if !options.host.contains(":") { info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6) }
        info.pt_serv_buf_size = 64 * 1024
        info.max_http_header_data = UInt16(Self.headerTableBytes)
        info.count_threads = 1
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.timeout_secs = 10
        info.retry_and_idle_policy = UnsafePointer(retryPolicy)
        if getenv("ROOMD_EVENT_LOOP").map({ String(cString: $0) }) != "poll", let loop = cws_ev_loop_new() {
            evLoop = loop
            foreignLoops.pointee = loop
            info.options |= UInt64(LWS_SERVER_OPTION_LIBEV)
            info.foreign_loops = foreignLoops
            // roomd listens itself (Transport/Listener.swift) and lws serves what it accepts.
            do throws(Listener.Failure) {
                listener = try Listener(host: options.host, port: requestedPort, shared: options.reusePort, loop: loop)
            } catch {
                throw ServerError(description: "cannot listen on \(options.host):\(requestedPort): \(error.description)")
            }
            info.port = Int32(CWS_PORT_NO_LISTEN_SERVER)
        } else if options.reusePort {
            throw ServerError(description: "sharing a port (SO_REUSEPORT) needs the libev loop, not ROOMD_EVENT_LOOP=poll")
        }

        guard let context = lws_create_context(&info) else {
            throw ServerError(description: "cannot listen on \(options.host):\(requestedPort)")
        }
        self.context = context
        guard let vhost = lws_get_vhost_by_name(context, "default") else {
            throw ServerError(description: "no default vhost")
        }
        self.vhost = vhost
        let port: Int
        if let listener {
            port = listener.port
            listener.start(self)
        } else {
            port = Int(lws_get_vhost_listen_port(vhost))
        }
        if port <= 0 { throw ServerError(description: "cannot listen on \(options.host):\(requestedPort)") }
        startTimers(context)
        if let url = options.clusterURL { startCluster(url: url, port: port) }
        return port
    }

    /// This node's cluster id, nil without a cluster (valid after `start()`).
    public var clusterNodeID: String? { cluster?.config.nodeID }

    /// The other service threads of this process (`--threads`), after every
    /// one has started and before any runs: records for them skip
    /// nats-server (one post to their inbox instead of a publish, a hop
    /// through nats-server and the C client's delivery thread). Leases,
    /// discovery and REST still go over the bus.
    public func linkSiblings(_ servers: [RoomServer]) {
        var byNode: [String: RoomServer] = [:]
        for server in servers where server !== self {
            if let id = server.clusterNodeID { byNode[id] = server }
        }
        router?.siblings = byNode
        siblings = servers.filter { $0 !== self }
    }

    /// The other service threads of this process (set by `linkSiblings`
    /// before any runs, read-only afterwards): `/metrics` sums theirs too.
    private(set) var siblings: [RoomServer] = []

    /// Thread-safe: node records from a sibling service thread. False when
    /// too many wait already (the caller counts it as a record not sent).
    func postFromSibling(_ bytes: [UInt8]) -> Bool {
        let pending = siblingBytesPending.add(bytes.count, ordering: .relaxed).newValue
        if pending > RoomCluster.maxPendingBytes {
            siblingBytesPending.subtract(bytes.count, ordering: .relaxed)
            return false
        }
        inbox.post(.sibling(bytes))
        if let context { lws_cancel_service(context) }
        return true
    }

    private func startCluster(url: String, port: Int) {
        var nodeID = options.nodeID ?? ClusterConfig.defaultNodeID(hostName: Self.hostName(), port: port)
        if let thread = options.serviceThread { nodeID = ClusterConfig.threadNodeID(nodeID, thread: thread) }
        let config = ClusterConfig(natsURL: url, nodeID: nodeID)
        clusterStatus = ClusterStatus(nodeID: nodeID, nodes: 1, connected: false)
        let post: @Sendable (Command) -> Void = { [weak self] command in
            guard let self else { return }
            self.inbox.post(command)
            if let context = self.context { lws_cancel_service(context) }
        }
        let cluster = RoomCluster(config: config, logger: logger,
                                  onStatus: { post(.cluster($0)) },
                                  onMessage: { post(.bus(.message($0))) },
                                  onRequest: { post(.bus(.request($0, reply: $1))) })
        self.cluster = cluster
        let jobs = ClusterJobs(cluster: cluster, logger: logger) { post(.bus($0)) }
        let router = ClusterRouter(server: self, cluster: cluster, jobs: jobs)
        self.router = router
        flow.report = { [unowned router] connection, congested in router.reportFlow(connection, congested: congested) }
        jobs.start()
        if let context {
            stateTimer = LoopTimer(context: context, every: 200) { [unowned router] in router.saveDirtyRooms() }
        }
        logger.notice("cluster: joining", metadata: ["node": "\(nodeID)", "url": "\(url)"])
        cluster.start()
    }

    static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, 255) == 0 else { return "roomd" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Serves until `shutdown()` has closed every connection (or 2 s passed).
    public func run() {
        guard let context else { return }
        while !stopped {
            if let evLoop {
                _ = cws_ev_run_once(evLoop)  // lws' callbacks and timers run inside
            } else if lws_service(context, 0) < 0 {
                break
            }
            router?.flush()  // what this turn queued for other nodes, one message per node
        }
        router?.jobs.stop()
        drainWebhooks(timeout: .seconds(2))  // events of the last leaves, up to 2 s
        cluster?.stop()
        logger.notice("shutdown complete")
    }

    /// "libev/epoll", or "poll" (lws' own loop: `ROOMD_EVENT_LOOP=poll`, or
    /// no libev plugin).
    public var eventLoop: String {
        guard let evLoop else { return "poll" }
        return cws_ev_backend(evLoop) == 4 ? "libev/epoll" : "libev/backend \(cws_ev_backend(evLoop))"
    }

    /// Thread-safe: a reloaded template (SIGHUP) for the service thread.
    public func reload(_ template: RoleTemplate) {
        inbox.post(.reload(template))
        if let context { lws_cancel_service(context) }
    }

    /// Thread-safe: stop accepting, close every connection with 1001, then
    /// let `run()` return.
    public func shutdown() {
        inbox.post(.shutdown)
        if let context { lws_cancel_service(context) }
    }

    // MARK: service thread

    private func startTimers(_ context: OpaquePointer) {
        let settings = options.template.settings
        speakerTimer = LoopTimer(context: context, every: settings.activeSpeakers.intervalMs) { [unowned self] in
            dispatcher.fanOut(registry.tickActiveSpeakers())
        }
        roomStateTimer = LoopTimer(context: context, every: settings.room.roomStateIntervalMs) { [unowned self] in
            dispatcher.fanOut(registry.tickRoomState())
        }
        keepaliveTimer = LoopTimer(context: context, every: 1000) { [unowned self] in sweepIdleConnections() }
        graceTimer = LoopTimer(context: context) { [unowned self] in
            dispatcher.expireGraces()
            router?.touchAll()
            scheduleGraceExpiry()
        }
        roleChangeTimer = LoopTimer(context: context) { [unowned self] in
            dispatcher.apply(registry.expireRoleChangeRequests())
            router?.touchAll()
            scheduleRoleChangeExpiry()
        }
        // One slice of the peers per tick: see RoomRegistry.pollStatsSlices.
        pollStatsTimer = LoopTimer(context: context, every: registry.pollStatsTickMs) { [unowned self] in
            dispatcher.fanOut(registry.tickPollStats())
        }
        pollTimer = LoopTimer(context: context) { [unowned self] in
            dispatcher.expirePolls()
            router?.touchAll()
            schedulePollExpiry()
        }
        cueTimer = LoopTimer(context: context) { [unowned self] in
            registry.expireCues()
            router?.touchAll()
            scheduleCueExpiry()
        }
    }

    /// Keepalive, once a second: a connection silent for a third of
    /// `idle_timeout_s` gets a ping (leaving the answer two thirds of the
    /// window); one silent for all of it is dropped
    /// (its peer enters the reconnect grace). One pass over the connections
    /// per second, instead of lws' per-connection validity timers, whose
    /// sorted list makes a round of n pings cost O(n²).
    private func sweepIdleConnections() {
        let idle = Int64(options.template.settings.limits.idleTimeoutS) * 1000
        let joinDeadline = Int64(options.template.settings.limits.joinTimeoutS) * 1000
        let now = monotonicMillis()
        // After heavy traffic (a join storm, a large fan-out) glibc keeps the
        // freed heap: give it back, at most every 10 s (it measured 380 MB →
        // 96 MB for 10,000 idle peers).
        if bytesSinceTrim >= 16 << 20, now - lastTrim >= 10_000 {
            malloc_trim(0)
            bytesSinceTrim = 0
            lastTrim = now
        }
        router?.releaseEndedRooms()
        if !siblings.isEmpty { metrics.recordGauges(self) }  // what a sibling's scrape reads
        if let listener, listener.isPaused, !draining { listener.start(self) }
        for connection in flow.excuseStalled(now: now, among: connections.values) {
            logger.debug("behind while its room was paused: held to the slow-consumer rule", metadata: metadata(connection))
        }
        if let router {  // other nodes' clients of rooms homed here count too
            _ = flow.excuseStalled(now: now, among: router.remoteConnections)
        }
        for connection in connections.values where !connection.isClosing {
            let silent = now - connection.lastHeard
            if !connection.hasJoined, now - connection.openedAt >= joinDeadline {
                // An unauthenticated socket may not hold a file descriptor for long.
                logger.info("no join in time, closing", metadata: metadata(connection))
                metrics.joinTimeouts.increment()
                connection.close(1008)
            } else if silent >= idle {
                logger.info("idle connection dropped", metadata: metadata(connection))
                lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
            } else if silent >= idle / 3, !connection.pinged {
                connection.pinged = true
                connection.enqueue(Frame.ping)
            }
        }
    }

    /// Arms the timer for the earliest end of a reconnect grace.
    func scheduleGraceExpiry() {
        graceTimer?.schedule(at: registry.nextGraceExpiry, now: clock.nowMillis())
    }

    /// Arms the timer for the earliest end of a live HLS cue.
    func scheduleCueExpiry() {
        cueTimer?.schedule(at: registry.nextCueExpiry, now: clock.nowMillis())
    }

    /// Arms the expiry timer for the earliest pending role-change request.
    func scheduleRoleChangeExpiry() {
        roleChangeTimer?.schedule(at: registry.nextRoleChangeExpiry, now: clock.nowMillis())
    }

    /// Arms the timer for the earliest end of a timed poll.
    func schedulePollExpiry() {
        pollTimer?.schedule(at: registry.nextPollDeadline, now: clock.nowMillis())
    }

    func drainInbox() {
        for command in inbox.drain() {
            switch command {
            case .shutdown: beginDrain()
            case .reload(let template):
                dispatcher.reload(template)
                logger.notice("template reloaded", metadata: [
                    "template": "\(template.name)", "roles": "\(registry.template.roleNames.joined(separator: ","))"])
                if template.settings != options.template.settings {
                    logger.warning("template reloaded: settings changes apply after a restart")
                }
            case .cluster(let status):
                router?.statusChanged(status, previous: clusterStatus)
                clusterStatus = status
            case .bus(let event):
                router?.handle(event)
            case .sibling(let bytes):
                siblingBytesPending.subtract(bytes.count, ordering: .relaxed)
                router?.handle(.message(bytes))
            }
        }
    }

    private func beginDrain() {
        guard !draining, let context else { return }
        draining = true
        listener?.close()  // a sibling on the same port takes new connections
        listener = nil
        logger.notice("shutting down", metadata: ["connections": "\(connections.count)"])
        for connection in connections.values { connection.close(1001) }
        let timer = LoopTimer(context: context) { [unowned self] in self.stopped = true }
        timer.schedule(afterMillis: 1500)
        drainTimer = timer
        checkDrained()
    }

    func checkDrained() {
        if draining, connections.isEmpty {
            stopped = true
            if let context { lws_cancel_service(context) }
        }
    }

    /// The listening socket is readable: accepts what waits, at most 64 per
    /// turn of the loop (the rest waits for the next turn, behind the sockets
    /// already served), each admitted by the socket budget and handed to lws.
    func acceptPending() {
        guard let listener, let vhost else { return }
        for _ in 0..<64 {
            guard let socket = listener.accept() else {
                if errno == EMFILE || errno == ENFILE {
                    // Out of files despite the budget (other files of the process):
                    // stop watching until the keepalive sweep, instead of spinning.
                    logger.warning("accept: out of open files, pausing new connections for a second")
                    metrics.acceptErrors.increment()
                    listener.pause()
                }
                return
            }
            guard admitSocket() else {
                close(socket)
                continue
            }
            // On failure lws closes the socket itself.
            if lws_adopt_socket_vhost(vhost, socket) == nil { metrics.acceptErrors.increment() }
        }
    }

    /// LWS_CALLBACK_FILTER_NETWORK_CONNECTION: false refuses (lws closes the
    /// just-accepted socket). Logged at most once a second, counted always.
    func admitSocket() -> Bool {
        if openSockets < socketBudget { return true }
        metrics.acceptErrors.increment()
        refusedSinceLog += 1
        let now = monotonicMillis()
        if now - lastRefusalLog >= 1000 {
            logger.warning("open-file limit reached: refusing new connections", metadata: [
                "open": "\(openSockets)", "budget": "\(socketBudget)", "refused": "\(refusedSinceLog)"])
            lastRefusalLog = now
            refusedSinceLog = 0
        }
        return false
    }

    func nextID() -> Int {
        nextConnectionID += 1
        return nextConnectionID
    }

    func makeConnection(_ wsi: OpaquePointer) -> Connection {
        let limits = options.template.settings.limits
        let connection = Connection(
            wsi: wsi, id: nextID(), maxQueuedBytes: limits.maxOutboundBytes,
            rate: TokenBucket(rate: limits.messagesPerSecond, burst: limits.messageBurst,
                              nowMillis: clock.nowMillis()),
            now: monotonicMillis())
        connection.flow = flow
        connections[wsi] = connection
        return connection
    }

    func connectionClosed(_ wsi: OpaquePointer) {
        guard let connection = connections.removeValue(forKey: wsi) else { return }
        flow.forget(connection)
        router?.connectionClosed(connection)
        dispatcher.connectionLost(connection)
        checkDrained()
    }
}
