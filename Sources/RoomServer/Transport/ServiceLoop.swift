import CWebSockets
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// One libwebsockets context and the loop it runs on: libev (epoll) with
/// roomd's own listening socket, or lws' poll() loop (`ROOMD_EVENT_LOOP=poll`,
/// where lws listens itself). Its callbacks (Callback.swift) and timers run
/// on the thread that calls `runOnce`: the service thread, which each of
/// them checks in debug builds (`thread`).
final class ServiceLoop {
    /// The context; nil until `open`. Read by `wake` from other threads:
    /// set once, before any other thread can post (see `RoomServer.start`).
    private(set) var context: OpaquePointer?
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
    private var vhost: OpaquePointer?
    private var cStrings: [UnsafeMutablePointer<CChar>] = []
    /// roomd's own listening socket (libev loop); nil on lws' poll() loop.
    private var listener: Listener?
    /// The request heads roomd reads before lws (libev loop); nil on lws' poll() loop.
    private var heads: RequestHeads?

    private let thread: ServiceThread
    private let sockets: Sockets
    private let metrics: ServerMetrics
    private let logger: Logger

    init(thread: ServiceThread, sockets: Sockets, metrics: ServerMetrics, logger: Logger) {
        self.thread = thread
        self.sockets = sockets
        self.metrics = metrics
        self.logger = logger
    }

    deinit {
        heads = nil
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

    /// Creates the context and binds the listening socket; returns the port
    /// (the chosen one for port 0). `user`: what lws hands every callback
    /// (the server). `shared`: `SO_REUSEPORT` (needs the libev loop).
    func open(
        host: String,
        port requestedPort: Int,
        shared: Bool,
        rxBufferSize: Int,
        deflate: Bool,
        user: UnsafeMutableRawPointer
    ) throws(ServerError) -> Int {
        let protocols = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 2)
        protocols.initialize(to: lws_protocols())
        protocols[0].name = UnsafePointer(keep("roomd"))
        protocols[0].callback = roomdCallback
        protocols[0].per_session_data_size = 0
        protocols[0].rx_buffer_size = rxBufferSize
        (protocols + 1).initialize(to: cws_protocol_list_term())
        self.protocols = protocols

        var info = lws_context_creation_info()
        info.port = Int32(requestedPort)
        // lws takes an interface name or an address: resolve the usual loopback name.
        info.iface = UnsafePointer(keep(host == "localhost" ? "127.0.0.1" : host))
        info.protocols = UnsafePointer(protocols)
        // An unknown method or a line that is not HTTP falls back to a raw
        // socket (answered 400 in the callback) instead of lws' HTML 403.
        info.options =
            UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8) | UInt64(LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG)
        if !host.contains(":") { info.options |= UInt64(LWS_SERVER_OPTION_DISABLE_IPV6) }
        info.pt_serv_buf_size = 64 * 1024
        info.max_http_header_data = UInt16(HTTPExchange.headerTableBytes)
        info.count_threads = 1
        info.user = user
        info.timeout_secs = 10
        // An HTTP connection kept alive after a GET's answer waits this long
        // for its next request (PROTOCOL.md section 9; lws' default, said here).
        info.keepalive_timeout = 5
        info.retry_and_idle_policy = UnsafePointer(retryPolicy)
        // permessage-deflate: lws negotiates and inflates; roomd compresses (Deflate.swift).
        if deflate { info.extensions = cws_pmd_extensions() }
        if getenv("ROOMD_EVENT_LOOP").map({ String(cString: $0) }) != "poll", let loop = cws_ev_loop_new() {
            evLoop = loop
            foreignLoops.pointee = loop
            info.options |= UInt64(LWS_SERVER_OPTION_LIBEV)
            info.foreign_loops = foreignLoops
            // roomd listens itself (Listener.swift) and lws serves what it accepts.
            do throws(Listener.Failure) {
                listener = try Listener(host: host, port: requestedPort, shared: shared, loop: loop)
            } catch {
                throw ServerError(description: "cannot listen on \(host):\(requestedPort): \(error.description)")
            }
            info.port = Int32(CWS_PORT_NO_LISTEN_SERVER)
        } else if shared {
            throw ServerError(
                description: "sharing a port (SO_REUSEPORT) needs the libev loop, not ROOMD_EVENT_LOOP=poll"
            )
        }

        guard let context = lws_create_context(&info) else {
            throw ServerError(description: "cannot listen on \(host):\(requestedPort)")
        }
        self.context = context
        guard let vhost = lws_get_vhost_by_name(context, "default") else {
            throw ServerError(description: "no default vhost")
        }
        self.vhost = vhost
        let port: Int
        if let listener, let evLoop {
            port = listener.port
            let heads = RequestHeads(thread: thread, loop: evLoop, sockets: sockets, logger: logger, metrics: metrics) {
                [unowned self] fd, arrival in
                handOver(fd, arrival, to: vhost)
            }
            sockets.closeHead = { [unowned heads] in heads.close($0) }
            self.heads = heads
            listener.start(self)
        } else {
            port = Int(lws_get_vhost_listen_port(vhost))
        }
        if port <= 0 { throw ServerError(description: "cannot listen on \(host):\(requestedPort)") }
        return port
    }

    /// One turn of the loop: lws' callbacks and timers run inside. False
    /// when the loop failed.
    func runOnce() -> Bool {
        thread.assertIsCurrent()
        guard let context else { return false }
        if let evLoop {
            _ = cws_ev_run_once(evLoop)
            return true
        }
        return lws_service(context, 0) >= 0
    }

    /// Thread-safe: wakes the loop (LWS_CALLBACK_EVENT_WAIT_CANCELLED follows on the service thread).
    func wake() {
        if let context { lws_cancel_service(context) }
    }

    /// "libev/epoll", or "poll" (lws' own loop: `ROOMD_EVENT_LOOP=poll`, or
    /// no libev plugin).
    var name: String {
        guard let evLoop else { return "poll" }
        return cws_ev_backend(evLoop) == 4 ? "libev/epoll" : "libev/backend \(cws_ev_backend(evLoop))"
    }

    /// Stops accepting for good: a sibling on the same port takes new connections.
    func stopListening() {
        thread.assertIsCurrent()
        listener?.close()
        listener = nil
    }

    /// Stops watching the listening socket (the backlog waits in the kernel)
    /// until `resumeListening`.
    func pauseListening() {
        thread.assertIsCurrent()
        listener?.pause()
    }

    /// Watches the listening socket again after `acceptPending` paused it.
    func resumeListening() {
        thread.assertIsCurrent()
        if let listener, listener.isPaused { listener.start(self) }
    }

    /// roomd reads each request head before lws does (the libev loop): a
    /// head over 8 KiB is answered 431 whatever its headers (RequestHeads.swift).
    var readsRequestHeads: Bool { heads != nil }

    /// The answer to a feed request roomd read itself (RequestHeads.swift,
    /// `Router.answerFeed`); set once the router is known.
    func answerFeed(with answer: @escaping (HTTPRequest, @escaping (HTTPResponse) -> Void) -> FeedAnswer) {
        heads?.answerFeed = answer
    }

    /// Once a second: request heads that took too long are closed.
    func expireRequestHeads(now: Int64) { heads?.expire(now: now) }

    /// The listening socket is readable: accepts what waits, at most 64 per
    /// turn of the loop (the rest waits for the next turn, behind the sockets
    /// already served), each admitted by the socket budget and the
    /// per-address cap of unjoined connections; its request head is read
    /// (RequestHeads), then it is handed to lws.
    func acceptPending() {
        thread.assertIsCurrent()
        guard let listener, let heads else { return }
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
            guard let arrival = sockets.admit(from: PeerAddress(peerOf: socket) ?? .unknown, as: .head(socket)) else {
                Glibc.close(socket)
                continue
            }
            heads.take(socket, arrival)
        }
    }

    /// A socket whose request head is fine goes to lws (`vhost`).
    private func handOver(_ socket: Int32, _ arrival: Arrival, to vhost: OpaquePointer) {
        arrival.socket = .adopting
        sockets.adopting = arrival  // its wsi comes with LWS_CALLBACK_WSI_CREATE
        // On failure lws closes the socket itself.
        if lws_adopt_socket_vhost(vhost, socket) == nil { metrics.acceptErrors.increment() }
        if sockets.adopting === arrival {  // lws made no wsi of it
            sockets.adopting = nil
            sockets.unjoined.settle(arrival)
        }
    }
}
