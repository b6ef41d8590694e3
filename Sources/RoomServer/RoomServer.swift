import CWebSockets
import Logging
import RoomCluster
import RoomConfig
import RoomModel
import Synchronization

/// One service thread of the daemon: the composition root that builds the
/// components, wires them, and runs the loop that owns them. One
/// libwebsockets context served by one thread owns every connection and
/// all room state; other threads only post to the inbox and wake the loop
/// (`shutdown`, `reload`, the cluster's threads, sibling service threads).
/// docs/ARCHITECTURE.md draws the parts and the path of one call.
///
/// `@unchecked Sendable`: every stored property except `inbox`,
/// `siblingBytesPending` (thread-safe) and the immutable configuration
/// belongs to the service thread (`thread`: the one that made the server,
/// until `run()` takes it over), touched inside lws callbacks, timers and
/// `run()` only; debug builds check that at each of those entry points and
/// in the components (ServiceThread.swift).
public final class RoomServer: @unchecked Sendable {
    enum Command: Sendable {
        case shutdown
        case reload(RoleTemplate)
        /// From the cluster's threads (Cluster/).
        case cluster(ClusterInput)
        /// Node records from a service thread of this process (`--threads`),
        /// handed over directly instead of through nats-server.
        case sibling([UInt8])
        /// Hooks' verdicts (section 30, Hooks/): those one turn of the poster's loop read.
        case hooks([HookResult])
    }

    let options: ServerOptions
    let logger: Logger
    /// The thread this server's state belongs to (checked in debug builds).
    let thread: ServiceThread
    let registry: RoomRegistry
    let clock: RoomClock
    let metrics = ServerMetrics()
    private let inbox = Inbox<Command>()
    /// Bytes of `.sibling` records posted and not drained yet: bounded like a
    /// NATS subscription's pending bytes (beyond it records are dropped, as
    /// the bus drops for a slow consumer).
    private let siblingBytesPending = Atomic<Int>(0)

    private let loop: ServiceLoop
    let sockets: Sockets
    let http: HTTPExchange
    let flow: FlowControl
    let homes: RoomHomes
    let schedule: Schedule
    private let webhooks: WebhookRelay
    let fanOut: FanOut
    package let dispatcher: Dispatcher
    let rest: RestAPI
    let routes: HTTPRoutes
    /// Local until `start` joins a cluster (`options.clusterURL`).
    private var routing: ServiceThreadBound<any Router>
    var router: any Router { routing.value }
    /// The other service threads of this process (set by `linkSiblings`
    /// before any runs, read-only afterwards).
    private(set) var siblings: [RoomServer] = []
    private var stopped: ServiceThreadBound<Bool>
    /// Shutting down: every connection is closing (or closed) by now, so the
    /// loop ends once none is left (at once for a single daemon; after the
    /// handover for a cluster's node).
    private var closingAll: ServiceThreadBound<Bool>
    /// A node of a cluster accepts no connection until its bus is up (or
    /// `busWaitMillis` passed): a client of a node that just started waits
    /// in the kernel's backlog instead of being answered 5003.
    private var waitingForBus: ServiceThreadBound<Bool>
    /// How long a starting node of a cluster waits for its bus before it
    /// accepts connections anyway (joins then answer 5003, /healthz 503).
    static let busWaitMillis = 2000

    public init(options: ServerOptions, logger: Logger) {
        self.options = options
        self.logger = logger
        let thread = ServiceThread()  // this thread's until `run()`
        self.thread = thread
        let template = options.template
        let limits = template.settings.limits
        // Test mode (section 25): a manual clock and seeded ids, the same for every part.
        let clock: RoomClock =
            options.testMode?.clockStart.map { TestModeClock(start: $0, thread: thread) } ?? SystemClock()
        let ids: IDGenerator = options.testMode?.seed.map { SeededIDGenerator(seed: $0) } ?? RandomIDGenerator()
        let registry = RoomRegistry(template: template, clock: clock, ids: ids)
        let flow = FlowControl(maxOutboundBytes: limits.maxOutboundBytes, thread: thread)
        let sockets = Sockets(
            thread: thread,
            limits: limits,
            servers: options.serversInProcess,
            flow: flow,
            clock: clock,
            metrics: metrics,
            logger: logger
        )
        let homes = RoomHomes(clustered: options.clusterURL != nil, thread: thread)
        let schedule = Schedule(registry: registry, clock: clock, sockets: sockets)
        // Webhooks and hooks share one poster: its event loop, its signing, and (webhooks, https:// hooks)
        // its async-http-client (Webhooks/SignedPoster.swift; an http:// hook's client: Hooks/HookConnections.swift).
        let hookSettings = template.settings.hooks
        let poster: SignedPoster? =
            template.settings.webhooks == nil && hookSettings == nil
            ? nil
            : SignedPoster(
                secret: options.webhookSecret ?? options.secret,
                connections: WebhookQueue.defaultMaxInFlight + (hookSettings == nil ? 0 : HookGate.maxInFlight),
                timeoutMs: max(template.settings.webhooks?.timeoutMs ?? 0, hookSettings?.timeoutMs ?? 0)
            )
        let webhooks = WebhookRelay(
            thread: thread,
            registry: registry,
            settings: template.settings.webhooks,
            poster: poster,
            ids: ids,
            metrics: metrics,
            logger: logger
        )
        let policies = Policies(template: template, thread: thread)
        let verifier: TokenVerifier
        if let manual = clock as? TestModeClock {  // token expiry follows the manual clock
            verifier = TokenVerifier(
                secret: options.secret,
                accessKey: options.accessKey,
                maxNameBytes: limits.maxNameBytes,
                appClock: { manual.date }
            )
        } else {
            verifier = TokenVerifier(
                secret: options.secret,
                accessKey: options.accessKey,
                maxNameBytes: limits.maxNameBytes
            )
        }
        let fanOut = FanOut(
            thread: thread,
            registry: registry,
            policies: policies,
            metrics: metrics,
            webhooks: webhooks,
            homes: homes,
            logger: logger
        )
        let dispatcher = Dispatcher(
            thread: thread,
            registry: registry,
            fanOut: fanOut,
            policies: policies,
            verifier: verifier,
            metrics: metrics,
            clock: clock,
            homes: homes,
            logger: logger
        )
        let rest = RestAPI(
            registry: registry,
            fanOut: fanOut,
            verifier: verifier,
            metrics: metrics,
            clock: clock,
            homes: homes,
            logger: logger
        )
        rest.graveyard = dispatcher.graveyard  // one queue frees every cleared chat
        let http = HTTPExchange(maxBody: limits.maxMessageBytes, thread: thread)
        let feed = RestFeed(thread: thread, registry: registry, verifier: verifier, clock: clock, metrics: metrics)
        let audienceMetrics = metrics  // not `self` in the closure below
        let routes = HTTPRoutes(
            thread: thread,
            rest: rest,
            feed: feed,
            registry: registry,
            metrics: metrics,
            homes: homes,
            sockets: sockets,
            test: options.testMode.map { testMode in
                schedule.faults = TestFaults(clock: clock, thread: thread)
                fanOut.testFaults = schedule.faults
                let journal = TestJournal(clock: clock)
                fanOut.journal = journal
                webhooks.journal = journal
                let audience = SyntheticAudience(
                    thread: thread,
                    registry: registry,
                    dispatcher: dispatcher,
                    sockets: sockets,
                    homes: homes,
                    clock: clock,
                    metrics: audienceMetrics,
                    seed: testMode.seed ?? 0,
                    logger: logger
                )
                return TestRoutes(
                    thread: thread,
                    journal: journal,
                    audience: audience,
                    rest: rest,
                    schedule: schedule,
                    sockets: sockets,
                    registry: registry,
                    webhooks: webhooks,
                    clock: clock,
                    logger: logger
                )
            }
        )
        self.registry = registry
        self.clock = clock
        self.flow = flow
        self.sockets = sockets
        self.loop = ServiceLoop(thread: thread, sockets: sockets, metrics: metrics, logger: logger)
        self.homes = homes
        self.schedule = schedule
        self.webhooks = webhooks
        self.fanOut = fanOut
        self.dispatcher = dispatcher
        self.rest = rest
        self.http = http
        self.routes = routes
        routing = ServiceThreadBound(LocalRouter(dispatcher: dispatcher, http: http, routes: routes), on: thread)
        stopped = ServiceThreadBound(false, on: thread)
        closingAll = ServiceThreadBound(false, on: thread)
        waitingForBus = ServiceThreadBound(false, on: thread)
        if let hookSettings, let poster {
            // Verdicts come back through the inbox: the service thread never waits for a hook.
            let client = HookClient(settings: hookSettings, poster: poster, metrics: metrics.hooks) { [weak self] in
                self?.post(.hooks($0))
            }
            dispatcher.hooks = HookGate(client: client, ids: ids)
            routes.test?.hooks = client
            logger.info(
                "hooks on",
                metadata: [
                    "events": "\(hookSettings.events.map(\.rawValue))", "on_error": "\(hookSettings.onError.rawValue)",
                ]
            )
        }
    }

    /// Creates the context and binds the listening socket. Returns the port
    /// (the chosen one when the port is 0). `port`: instead of `options.port`
    /// (the other service threads of a process take the port the first one bound).
    public func start(port requestedPort: Int? = nil) throws -> Int {
        thread.assertIsCurrent()  // the thread that made the server
        LWSLog.install(LWSLog(logger: logger))
        let maxMessageBytes = options.template.settings.limits.maxMessageBytes
        let port = try loop.open(
            host: options.host,
            port: requestedPort ?? options.port,
            shared: options.reusePort,
            rxBufferSize: max(64 * 1024, min(maxMessageBytes, 1 << 20)),
            deflate: options.permessageDeflate,
            user: Unmanaged.passUnretained(self).toOpaque()
        )
        if options.permessageDeflate { sockets.deflater = MessageDeflater(metrics: metrics) }
        http.countsParsedHeaders = !loop.readsRequestHeads
        loop.answerFeed { [unowned self] request, reply in router.answerFeed(request, reply: reply) }
        loop.wake()  // what was posted before the loop had a context to wake (`Inbox.post` wakes once)
        schedule.start(
            context: loop.context!,
            fired: { [unowned self] in deadlinePassed($0) },
            tick: { [unowned self] in tick($0) }
        )
        if let url = options.clusterURL {
            routing.value = ClusterRouter.join(
                url: url,
                nodeID: options.nodeID,
                serviceThread: options.serviceThread,
                port: port,
                parts: ClusterRouter.Parts(
                    thread: thread,
                    registry: registry,
                    dispatcher: dispatcher,
                    fanOut: fanOut,
                    rest: rest,
                    feed: routes.feed,
                    http: http,
                    routes: routes,
                    homes: homes,
                    flow: flow,
                    sockets: sockets,
                    schedule: schedule,
                    clock: clock,
                    logger: logger
                ),
                post: { [weak self] input in self?.post(.cluster(input)) }
            )
            waitForBus()
        }
        return port
    }

    /// Accepts nothing until the bus is up (`busConnected`), at most
    /// `busWaitMillis`: the connections that come meanwhile wait in the
    /// kernel's backlog (libev loop; lws' poll loop accepts at once).
    private func waitForBus() {
        waitingForBus.value = true
        loop.pauseListening()
        schedule.once(afterMillis: Self.busWaitMillis) { [unowned self] in
            guard waitingForBus.value else { return }
            waitingForBus.value = false
            logger.warning(
                "cluster: the bus is not up 2 s after the start: accepting connections (joins answer 5003 until it is)"
            )
            if !sockets.draining { loop.resumeListening() }
        }
    }

    /// After a cluster input: the first time the bus is up, connections are accepted.
    private func busConnected() {
        guard waitingForBus.value, homes.status?.connected == true else { return }
        waitingForBus.value = false
        if !sockets.draining { loop.resumeListening() }
    }

    /// This node's cluster id, nil without a cluster (valid after `start()`).
    public var clusterNodeID: NodeID? { homes.status?.nodeID }

    /// The other service threads of this process (`--threads`), after every
    /// one has started and before any runs: records for them skip
    /// nats-server (one post to their inbox instead of a publish, a hop
    /// through nats-server and the C client's delivery thread). Leases,
    /// discovery and REST still go over the bus. `/metrics` sums theirs too.
    public func linkSiblings(_ servers: [RoomServer]) {
        thread.assertIsCurrent()  // before `run()`: the thread that made the server
        siblings = servers.filter { $0 !== self }
        var byNode: [NodeID: @Sendable ([UInt8]) -> Bool] = [:]
        for server in siblings {
            if let id = server.clusterNodeID { byNode[id] = { [server] bytes in server.postFromSibling(bytes) } }
        }
        router.link(siblings: byNode)
        routes.siblingMetrics = siblings.map(\.metrics)
    }

    /// Thread-safe: node records from a sibling service thread. False when
    /// too many wait already (the caller counts it as a record not sent).
    func postFromSibling(_ bytes: [UInt8]) -> Bool {
        let pending = siblingBytesPending.add(bytes.count, ordering: .relaxed).newValue
        if pending > RoomCluster.maxPendingBytes {
            siblingBytesPending.subtract(bytes.count, ordering: .relaxed)
            return false
        }
        post(.sibling(bytes))
        return true
    }

    /// Thread-safe: hands `command` to the service thread and wakes it.
    private func post(_ command: Command) {
        if inbox.post(command) { loop.wake() }
    }

    /// Serves until `shutdown()` has closed every connection (or 2 s passed).
    public func run() {
        thread.adopt()  // from now on everything under this server is this thread's
        while !stopped.value {
            if !loop.runOnce() { break }
            if fanOut.pace() { loop.wake() }  // a paced push's next recipients; another turn follows
            router.flush()  // what this turn queued for other nodes, one message per node
            schedule.afterTurn()  // the deadlines this turn moved
            // What this turn queued: one write per connection, before the loop waits (the
            // rest of a large fan-out at the next turn's end, which then comes without waiting).
            if sockets.writeAfterTurn() { loop.wake() }
        }
        router.stop()
        webhooks.drain(timeout: .seconds(2))  // events of the last leaves, up to 2 s
        logger.notice("shutdown complete")
    }

    /// "libev/epoll", or "poll" (lws' own loop: `ROOMD_EVENT_LOOP=poll`, or
    /// no libev plugin).
    public var eventLoop: String { loop.name }

    /// Thread-safe: a reloaded template (SIGHUP) for the service thread.
    public func reload(_ template: RoleTemplate) { post(.reload(template)) }

    /// Thread-safe: stop accepting, close every connection with 1001, then
    /// let `run()` return.
    public func shutdown() { post(.shutdown) }

    // MARK: service thread

    /// LWS_CALLBACK_EVENT_WAIT_CANCELLED: what other threads posted.
    func drainInbox() {
        thread.assertIsCurrent()
        for command in inbox.drain() {
            switch command {
            case .shutdown: beginDrain()
            case .reload(let template):
                dispatcher.reload(template)
                logger.notice(
                    "template reloaded",
                    metadata: [
                        "template": "\(template.name)",
                        "roles": "\(registry.template.roleNames.joined(separator: ","))",
                    ]
                )
                if template.settings != options.template.settings {
                    logger.warning("template reloaded: settings changes apply after a restart")
                }
            case .cluster(let input):
                router.receive(input)
                busConnected()
            case .sibling(let bytes):
                siblingBytesPending.subtract(bytes.count, ordering: .relaxed)
                router.receive(.event(.message(bytes)))
            case .hooks(let results):
                for result in results { dispatcher.hookAnswered(result) }
            }
        }
    }

    /// A deadline of the model passed (Schedule.swift re-arms it after).
    private func deadlinePassed(_ deadline: Schedule.Deadline) {
        switch deadline {
        case .model:
            for expired in registry.expireDue() {
                fanOut.apply(expired.effects)
                if let log = expired.log {
                    logger.info("\(log.message)", metadata: log.metadata.mapValues { .string($0) })
                }
            }
        case .joinDeadline:
            sockets.closeUnjoined(now: sockets.joinClockNow)
            return  // no room changed
        case .faultEnd:
            schedule.faults?.expire()
            return
        }
        homes.touchAll()
    }

    private func tick(_ tick: Schedule.Tick) {
        // This tick's last push still going out to a large audience: its rest
        // goes out at once first (the paced queue holds at most one tick's
        // pushes of a kind). Pacing ends by half the tick's period anyway
        // (FanOut.pace), so this happens only on test mode's manual clock,
        // whose ticks may come faster than the loop turns.
        if fanOut.isPacing(tick) { fanOut.finishPacing(tick) }
        switch tick {
        // The audience's coalesced pushes are paced over loop turns (FanOut.fanOutPaced);
        // room-state and the call-in queue are not (snapshots other pushes must not overtake).
        case .activeSpeakers:
            fanOut.fanOutPaced(registry.tickActiveSpeakers(), of: tick, within: schedule.period(of: tick) / 2)
        case .roomState: fanOut.fanOut(registry.tickRoomState())
        case .pollStats: fanOut.fanOutPaced(registry.tickPollStats(), of: tick, within: schedule.period(of: tick) / 2)
        case .questions: fanOut.fanOutPaced(registry.tickQuestions(), of: tick, within: schedule.period(of: tick) / 2)
        case .stage: fanOut.fanOut(registry.tickStage())
        case .reactions:
            let deliveries = registry.tickReactions()
            // What the peers last heard is saved for a takeover (Reactions/ReactionSnapshot.swift).
            for delivery in deliveries { homes.touch(delivery.audience.first?.room.id) }
            fanOut.fanOutPaced(deliveries, of: tick, within: schedule.period(of: tick) / 2)
        case .keepalive: keepalive()
        }
    }

    /// Once a second.
    private func keepalive() {
        let now = monotonicMillis()
        router.tick(now: now)
        if !siblings.isEmpty { routes.recordGauges() }  // what a sibling's scrape reads
        if !sockets.draining, !waitingForBus.value { loop.resumeListening() }
        loop.expireRequestHeads(now: now)
        for wsi in http.expiredIdle(now: now) {  // kept HTTP connections idle for 5 s
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_SYNC)
        }
        for connection in flow.excuseStalled(now: now, among: sockets.connections.values) {
            logger.debug(
                "behind while its room was paused: held to the slow-consumer rule",
                metadata: connection.logMetadata
            )
        }
        sockets.sweep(now: now)
        registry.sweepFeeds()  // ended sessions' feeds past their window
    }

    private func beginDrain() {
        guard !sockets.draining else { return }
        sockets.draining = true
        // A node of a cluster hands its rooms over first, still listening so
        // that /healthz says "draining"; new upgrades and REST get 503.
        if router.drain(finished: { [unowned self] in drainFinished() }) {
            logger.notice(
                "draining: handing the rooms homed here to other nodes",
                metadata: ["connections": "\(sockets.count)", "timeout_ms": "\(options.drainTimeoutMillis)"]
            )
            schedule.once(afterMillis: options.drainTimeoutMillis) { [unowned self] in
                guard !stopped.value else { return }
                logger.warning("draining: --drain-timeout passed, closing what is left (1012)")
                sockets.closeAll(1012)
                drainFinished()
                schedule.once(afterMillis: 1500) { [unowned self] in stopped.value = true }
            }
            return
        }
        loop.stopListening()  // a sibling on the same port takes new connections
        logger.notice("shutting down", metadata: ["connections": "\(sockets.count)"])
        sockets.closeAll(1001)
        closingAll.value = true
        schedule.once(afterMillis: 1500) { [unowned self] in stopped.value = true }
        checkDrained()
    }

    /// The cluster's drain is done: every connection is closing.
    private func drainFinished() {
        guard !closingAll.value else { return }
        closingAll.value = true
        loop.stopListening()
        logger.notice("draining: done, closing", metadata: ["connections": "\(sockets.count)"])
        schedule.once(afterMillis: 1500) { [unowned self] in stopped.value = true }
        checkDrained()
    }

    private func checkDrained() {
        if sockets.draining, closingAll.value, sockets.count == 0 {
            stopped.value = true
            loop.wake()
        }
    }

    /// A complete client message (lws' fragments put together).
    func received(_ fragment: UnsafeRawBufferPointer, on connection: Connection, first: Bool, final: Bool, binary: Bool)
    {
        switch connection.receive(
            fragment,
            first: first,
            final: final,
            binary: binary,
            limit: options.template.settings.limits.maxMessageBytes
        ) {
        case .partial: break
        case .complete(let message):
            router.inbound(message, on: connection)
            sockets.messageHandled()
        case .refused(_, let reason):
            // No more of its bytes are read (nor inflated: a compressed bomb stops at the limit).
            connection.pauseReading()
            logger.info("\(reason)", metadata: connection.logMetadata)
        }
    }

    /// LWS_CALLBACK_ESTABLISHED: a WebSocket is open; its join deadline runs.
    func connectionOpened(_ wsi: OpaquePointer) {
        sockets.opened(wsi)  // its join deadline's timer is set at the end of this turn
    }

    /// An HTTP request's progress: routed once complete (it no longer
    /// counts as an unjoined connection: it is being answered).
    func serve(_ progress: HTTPExchange.Progress, on wsi: OpaquePointer) -> Int32 {
        switch progress {
        case .waiting(let result):
            return result
        case .complete(let request):
            sockets.unjoined.settle(wsi: wsi)
            return router.serve(request, on: wsi)
        }
    }

    /// LWS_CALLBACK_HTTP_WRITEABLE: an answer's body goes out. A connection
    /// kept alive for its next request counts among its address's unjoined
    /// connections again while it waits (the per-address cap, and the first
    /// to go when the socket budget is full), like a socket that has not
    /// sent its first request; the 1-s sweep closes it after 5 idle seconds.
    func httpWritable(_ wsi: OpaquePointer) -> Int32 {
        let result = http.writable(wsi)
        if result == 0, http.isKeptAlive(wsi), sockets.unjoined[wsi] == nil {
            sockets.unjoined.arrived(
                from: PeerAddress(peerOf: lws_get_socket_fd(wsi)) ?? .unknown,
                socket: .lws(wsi),
                at: monotonicMillis()
            )
        }
        return result
    }

    /// LWS_CALLBACK_CLOSED: a client connection is gone.
    func connectionClosed(_ wsi: OpaquePointer) {
        guard let connection = sockets.closed(wsi) else { return }
        flow.forget(connection)
        router.connectionClosed(connection)
        fanOut.connectionLost(connection)
        checkDrained()
    }
}
