import CNats
import Dispatch
import Foundation
import Logging
import Synchronization

/// One node's link to the cluster bus (PROTOCOL.md section 18, docs/CLUSTER.md):
/// a NATS connection that reconnects on its own, node membership by
/// heartbeats on `roomd.nodes.<node-id>`, and the `roomd-rooms` lease bucket.
///
/// Node to node, it carries opaque messages: `send(to:_:)` publishes on the
/// other node's subject `roomd.node.<node-id>.in`, and what arrives on this
/// node's subject goes to `onMessage`, in the order each sender sent it (the
/// primitive calls and deliveries will be routed on; nothing uses it yet).
///
/// It runs on a thread of its own (`roomd-cluster`) plus the C client's
/// threads, and talks to its owner only through callbacks: `onStatus`, on
/// the cluster thread each time the status changes (the server posts it to
/// its inbox), and `onMessage`, on the C client's delivery thread of the
/// node subject. Nothing here runs before `start()`.
public final class RoomCluster: Sendable {
    public static let nodesSubject = "roomd.nodes"
    /// Bound on the nodes remembered at once (a heartbeat from an id beyond it is ignored).
    public static let maxNodes = 1024
    /// Bound on one node-to-node message (nats-server's default `max_payload` is 1 MiB).
    public static let maxMessageBytes = 512 * 1024
    /// Bound on messages received and not yet handed to `onMessage`; beyond it
    /// the C client drops them and logs a slow consumer.
    public static let maxPendingMessages = 65536
    public static let maxPendingBytes = 64 << 20

    /// The subject a node receives node-to-node messages on.
    public static func subject(of node: String) -> String { "roomd.node.\(node).in" }
    /// The subject a node answers requests on (NATS request/reply).
    public static func requestSubject(of node: String) -> String { "roomd.node.\(node).req" }

    let core: ClusterCore

    /// `onRequest` gets a request's payload and the subject to `reply(to:_:)` on.
    public init(config: ClusterConfig, logger: Logger, onStatus: @escaping @Sendable (ClusterStatus) -> Void = { _ in },
                onMessage: @escaping @Sendable ([UInt8]) -> Void = { _ in },
                onRequest: @escaping @Sendable ([UInt8], String) -> Void = { _, _ in }) {
        core = ClusterCore(config: config, logger: logger, onStatus: onStatus, onMessage: onMessage, onRequest: onRequest)
    }

    /// This run of the node: 16 hex digits, new for every process.
    public var incarnation: String { core.incarnation }

    /// Blocking (call it off the service thread): sends `payload` to
    /// `node`'s request subject and waits up to `timeoutMillis` for the answer.
    public func request(to node: String, _ payload: [UInt8], timeoutMillis: Int64) throws(ClusterError) -> [UInt8] {
        try core.request(to: node, payload, timeoutMillis: timeoutMillis)
    }

    /// Thread-safe, does not block: answers a request (its reply subject).
    public func reply(to subject: String, _ payload: [UInt8]) {
        core.link.withLock { link in
            guard let link else { return }
            _ = payload.withUnsafeBytes {
                natsConnection_Publish(link.connection, subject, $0.baseAddress, Int32($0.count))
            }
        }
    }

    /// Thread-safe: publishes `payload` to `node` (fire and forget: core
    /// NATS, no acknowledgement; nobody listening drops it). While the bus
    /// is reconnecting it waits in the client's 1 MiB reconnect buffer, and
    /// fails when that is full. Throws for an invalid node id, a payload over
    /// `maxMessageBytes`, or before `start()` / after `stop()`.
    public func send(to node: String, _ payload: [UInt8]) throws(ClusterError) {
        try core.send(to: node, payload)
    }

    public var config: ClusterConfig { core.config }

    /// Thread-safe: the last status reported.
    public var status: ClusterStatus { core.state.withLock { $0.reported } }

    /// Thread-safe: the lease table, nil until the bucket is bound (and
    /// while a rebind after a reconnect is pending).
    public var leases: RoomLeases? { core.state.withLock { $0.leases } }

    /// Thread-safe: the room states bucket, bound with the lease table.
    public var states: RoomStates? { core.state.withLock { $0.states } }

    /// Starts the cluster thread, which connects (retrying until the bus answers).
    public func start() {
        let core = self.core
        let first = core.state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started && !state.stopping
        }
        guard first else { return }
        let thread = Thread {
            cnats_name_thread("roomd-cluster")  // in ps and /proc (Thread.name is not)
            core.run()
        }
        thread.name = "roomd-cluster"
        thread.start()
    }

    /// Announces the node's departure, closes the connection and waits for
    /// the cluster thread to end (at most about 4 s). Idempotent.
    public func stop() {
        let started = core.state.withLock { state -> Bool in
            state.stopping = true
            return state.started
        }
        core.wake.signal()
        // Signalled again after the wait: a second stop() returns at once.
        if started, core.finished.wait(timeout: .now() + .seconds(4)) == .success { core.finished.signal() }
    }
}

/// The state shared by the cluster thread and the C client's callback threads.
final class ClusterCore: Sendable {
    struct State {
        var started = false
        var stopping = false
        /// Last heartbeat of each node (monotonic ms), this node's own included.
        var seen: [String: Int64] = [:]
        /// Heartbeat now, not at the next tick: a node appeared, or we reconnected.
        var announce = true
        /// (Re)bind the bucket: after a (re)connect, nats-server may have lost it.
        var rebind = true
        var leases: RoomLeases?
        var states: RoomStates?
        var reported: ClusterStatus
        /// When a heartbeat of another process with this node's id was last logged (monotonic ms).
        var lastDuplicateWarning: Int64 = -10_000_000
    }

    /// The C connection, for `send` from other threads. `@unchecked
    /// Sendable`: a `natsConnection` may be used from any thread (the C
    /// client locks it); the cluster thread clears this under the lock
    /// before it closes and destroys the connection.
    struct Link: @unchecked Sendable { let connection: OpaquePointer }

    let config: ClusterConfig
    /// This run of the node (16 hex digits, random): heartbeats carry it, so
    /// that another process using the same node id is noticed.
    let incarnation: String
    let logger: Logger
    let onStatus: @Sendable (ClusterStatus) -> Void
    let onMessage: @Sendable ([UInt8]) -> Void
    let onRequest: @Sendable ([UInt8], String) -> Void
    let link = Mutex<Link?>(nil)
    /// Requests using the connection outside `link`'s lock: `run()` waits
    /// for them to end before it destroys the connection.
    let requestsInFlight = Atomic<Int>(0)
    let state: Mutex<State>
    let wake = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    let closed = DispatchSemaphore(value: 0)
    let unsubscribed = DispatchSemaphore(value: 0)

    init(config: ClusterConfig, logger: Logger, onStatus: @escaping @Sendable (ClusterStatus) -> Void,
         onMessage: @escaping @Sendable ([UInt8]) -> Void, onRequest: @escaping @Sendable ([UInt8], String) -> Void) {
        self.config = config
        incarnation = String(UInt64.random(in: 0...UInt64.max), radix: 16).leftPadded(to: 16)
        var logger = logger
        logger[metadataKey: "node"] = "\(config.nodeID)"
        self.logger = logger
        self.onStatus = onStatus
        self.onMessage = onMessage
        self.onRequest = onRequest
        state = Mutex(State(reported: ClusterStatus(nodeID: config.nodeID, nodes: 1, connected: false)))
    }

    func send(to node: String, _ payload: [UInt8]) throws(ClusterError) {
        guard ClusterConfig.isValidNodeID(node) else {
            throw ClusterError(operation: "send", status: "invalid node id", detail: String(node.prefix(100)))
        }
        guard payload.count <= RoomCluster.maxMessageBytes else {
            throw ClusterError(operation: "send", status: "too large",
                               detail: "\(payload.count) bytes, at most \(RoomCluster.maxMessageBytes)")
        }
        let status: natsStatus? = link.withLock { link in
            guard let link else { return nil }
            return payload.withUnsafeBytes {
                natsConnection_Publish(link.connection, RoomCluster.subject(of: node), $0.baseAddress, Int32($0.count))
            }
        }
        guard let status else { throw ClusterError(operation: "send", status: "not started", detail: "") }
        if status != NATS_OK { throw natsError("send to \(node)", status) }
    }

    func request(to node: String, _ payload: [UInt8], timeoutMillis: Int64) throws(ClusterError) -> [UInt8] {
        guard ClusterConfig.isValidNodeID(node) else {
            throw ClusterError(operation: "request", status: "invalid node id", detail: String(node.prefix(100)))
        }
        guard payload.count <= RoomCluster.maxMessageBytes else {
            throw ClusterError(operation: "request", status: "too large",
                               detail: "\(payload.count) bytes, at most \(RoomCluster.maxMessageBytes)")
        }
        // The connection is used outside the lock (the C client locks it):
        // `run()` destroys it only after `link` is cleared and the close waited for.
        guard let link = link.withLock({ link -> Link? in
            if link != nil { requestsInFlight.add(1, ordering: .relaxed) }
            return link
        }) else { throw ClusterError(operation: "request", status: "not started", detail: "") }
        defer { requestsInFlight.subtract(1, ordering: .releasing) }
        var reply: OpaquePointer?
        let status = payload.withUnsafeBytes {
            natsConnection_Request(&reply, link.connection, RoomCluster.requestSubject(of: node), $0.baseAddress,
                                   Int32($0.count), timeoutMillis)
        }
        guard status == NATS_OK, let reply else { throw natsError("request to \(node)", status) }
        defer { natsMsg_Destroy(reply) }
        let length = Int(natsMsg_GetDataLength(reply))
        return length > 0 ? Array(UnsafeRawBufferPointer(start: natsMsg_GetData(reply), count: length)) : []
    }

    // MARK: callbacks (C client threads): record, wake the cluster thread, return

    func heard(subject: String, body: String) {
        let prefix = RoomCluster.nodesSubject + "."
        guard subject.hasPrefix(prefix) else { return }
        let node = String(subject.dropFirst(prefix.count))
        guard ClusterConfig.isValidNodeID(node) else { return }
        // "up INCARNATION" or "leave INCARNATION".
        let words = body.split(separator: " ", maxSplits: 1)
        let (kind, from) = (words.first.map(String.init) ?? "", words.count > 1 ? String(words[1]) : "")
        guard kind == "up" || kind == "leave" else { return }
        let now = monotonicMillis()
        if node == config.nodeID, from != incarnation {
            let warn = state.withLock { state -> Bool in
                defer { if now - state.lastDuplicateWarning >= 10_000 { state.lastDuplicateWarning = now } }
                return now - state.lastDuplicateWarning >= 10_000
            }
            if warn {
                logger.error("cluster: another process uses this node id: give every node its own --node-id",
                             metadata: ["other": "\(from.prefix(16))"])
            }
            return
        }
        let wakeUp = state.withLock { state -> Bool in
            if kind == "leave" { return state.seen.removeValue(forKey: node) != nil }
            let known = state.seen[node] != nil
            if !known, state.seen.count >= RoomCluster.maxNodes { return false }
            state.seen[node] = now
            if !known, node != config.nodeID { state.announce = true }
            return !known
        }
        if wakeUp { wake.signal() }
    }

    func connectionChanged(_ event: String) {
        state.withLock { state in
            switch event {
            case "disconnected":
                // Others cannot be heard now: count only this node until they are again.
                state.seen = state.seen.filter { $0.key == config.nodeID }
            default:
                state.rebind = true
                state.announce = true
            }
        }
        logger.info("cluster: NATS connection \(event)")
        wake.signal()
    }

    // MARK: the cluster thread

    func run() {
        defer { finished.signal() }
        let me = Unmanaged.passUnretained(self).toOpaque()
        var options: OpaquePointer?
        guard natsOptions_Create(&options) == NATS_OK, let options else {
            logger.error("cluster: cannot create NATS options")
            return
        }
        defer { natsOptions_Destroy(options) }
        _ = natsOptions_SetURL(options, config.natsURL)
        _ = natsOptions_SetName(options, "roomd-\(config.nodeID)")
        _ = natsOptions_SetTimeout(options, config.requestTimeoutMillis)
        _ = natsOptions_SetAllowReconnect(options, true)
        _ = natsOptions_SetMaxReconnect(options, -1)
        _ = natsOptions_SetReconnectWait(options, config.reconnectWaitMillis)
        // Publications while disconnected wait here, bounded (then they fail).
        _ = natsOptions_SetReconnectBufSize(options, 1 << 20)
        // A half-open connection is noticed within about 3 pings.
        _ = natsOptions_SetPingInterval(options, 2000)
        _ = natsOptions_SetMaxPingsOut(options, 2)
        _ = natsOptions_SetDisconnectedCB(options, { _, closure in
            Unmanaged<ClusterCore>.fromOpaque(closure!).takeUnretainedValue().connectionChanged("disconnected")
        }, me)
        _ = natsOptions_SetReconnectedCB(options, { _, closure in
            Unmanaged<ClusterCore>.fromOpaque(closure!).takeUnretainedValue().connectionChanged("reconnected")
        }, me)
        _ = natsOptions_SetClosedCB(options, { _, closure in
            Unmanaged<ClusterCore>.fromOpaque(closure!).takeUnretainedValue().closed.signal()
        }, me)
        // The first connect retries in the background like a reconnect.
        _ = natsOptions_SetRetryOnFailedConnect(options, true, { _, closure in
            Unmanaged<ClusterCore>.fromOpaque(closure!).takeUnretainedValue().connectionChanged("connected")
        }, me)

        var connection: OpaquePointer?
        while true {
            let status = natsConnection_Connect(&connection, options)
            if status == NATS_OK || status == NATS_NOT_YET_CONNECTED, connection != nil { break }
            logger.error("cluster: cannot connect", metadata: ["url": "\(config.natsURL)", "error": "\(natsError("connect", status))"])
            if wait(millis: 1000) { return }
        }
        guard let connection else { return }
        if natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED { connectionChanged("connected") }

        link.withLock { $0 = Link(connection: connection) }
        let inbound = subscribe(connection, RoomCluster.subject(of: config.nodeID),
                                pending: (RoomCluster.maxPendingMessages, RoomCluster.maxPendingBytes)) { _, _, message, closure in
            guard let message else { return }
            let payload = ClusterCore.payload(of: message)
            natsMsg_Destroy(message)
            Unmanaged<ClusterCore>.fromOpaque(closure!).takeUnretainedValue().onMessage(payload)
        }
        let requests = subscribe(connection, RoomCluster.requestSubject(of: config.nodeID),
                                 pending: (4096, RoomCluster.maxPendingBytes)) { _, _, message, closure in
            guard let message else { return }
            let payload = ClusterCore.payload(of: message)
            let reply = natsMsg_GetReply(message).map { String(cString: $0) } ?? ""
            natsMsg_Destroy(message)
            if !reply.isEmpty { Unmanaged<ClusterCore>.fromOpaque(closure!).takeUnretainedValue().onRequest(payload, reply) }
        }
        let subscription = subscribe(connection, RoomCluster.nodesSubject + ".*", pending: nil) { _, _, message, closure in
            guard let message else { return }
            let subject = String(cString: natsMsg_GetSubject(message))
            let length = Int(natsMsg_GetDataLength(message))
            let body = length > 0 && length <= 64
                ? String(decoding: UnsafeRawBufferPointer(start: natsMsg_GetData(message), count: length), as: UTF8.self) : ""
            natsMsg_Destroy(message)
            Unmanaged<ClusterCore>.fromOpaque(closure!).takeUnretainedValue().heard(subject: subject, body: body)
        }

        var jsOptions = jsOptions()
        jsOptions_Init(&jsOptions)
        jsOptions.Wait = config.requestTimeoutMillis
        var js: OpaquePointer?
        _ = natsConnection_JetStream(&js, connection, &jsOptions)

        serve(connection, js)

        // Leaving: say so (the others drop this node at once), then close.
        if natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED {
            _ = natsConnection_PublishString(connection, "\(RoomCluster.nodesSubject).\(config.nodeID)", "leave \(incarnation)")
            _ = natsConnection_FlushTimeout(connection, 500)
        }
        var drained = true
        for case let sub? in [inbound, requests, subscription] {
            _ = natsSubscription_Unsubscribe(sub)
            drained = unsubscribed.wait(timeout: .now() + .seconds(2)) == .success && drained
            natsSubscription_Destroy(sub)
        }
        link.withLock { $0 = nil }
        natsConnection_Close(connection)  // a request waiting for its answer returns now
        let deadline = monotonicMillis() + 3000
        while requestsInFlight.load(ordering: .acquiring) > 0, monotonicMillis() < deadline { usleep(1000) }
        drained = closed.wait(timeout: .now() + .seconds(2)) == .success && drained
        if !drained {
            // A C callback may still come: keep this object alive for it.
            _ = Unmanaged.passRetained(self)
        }
        state.withLock {
            $0.leases = nil
            $0.states = nil
        }
        if let js { jsCtx_Destroy(js) }
        natsConnection_Destroy(connection)
        report(connected: false, forceNodes: 1)
        logger.info("cluster: left")
    }

    /// Subscribes `handler` (a C callback; its closure argument is this
    /// object) to `subject`, with the given pending limits (messages, bytes);
    /// `unsubscribed` is signalled when the subscription is done. Nil (logged)
    /// when the subscription fails.
    private func subscribe(_ connection: OpaquePointer, _ subject: String, pending: (messages: Int, bytes: Int)?,
                           _ handler: natsMsgHandler) -> OpaquePointer? {
        let me = Unmanaged.passUnretained(self).toOpaque()
        var subscription: OpaquePointer?
        guard natsConnection_Subscribe(&subscription, connection, subject, handler, me) == NATS_OK, let subscription else {
            logger.error("cluster: cannot subscribe to \(subject)")
            return nil
        }
        if let pending {
            _ = natsSubscription_SetPendingLimits(subscription, Int32(pending.messages), Int32(pending.bytes))
        }
        _ = natsSubscription_SetOnCompleteCB(subscription, { closure in
            Unmanaged<ClusterCore>.fromOpaque(closure!).takeUnretainedValue().unsubscribed.signal()
        }, me)
        return subscription
    }

    /// A message's data, copied.
    static func payload(of message: OpaquePointer) -> [UInt8] {
        let length = Int(natsMsg_GetDataLength(message))
        return length > 0 ? Array(UnsafeRawBufferPointer(start: natsMsg_GetData(message), count: length)) : []
    }

    /// Heartbeats, bucket binding and status until `stop()`.
    private func serve(_ connection: OpaquePointer, _ js: OpaquePointer?) {
        var nextBeat: Int64 = 0
        var lastBindError = ""
        let subject = "\(RoomCluster.nodesSubject).\(config.nodeID)"
        while true {
            let (stopping, announce, rebind) = state.withLock { state in
                defer { state.announce = false; state.rebind = false }
                return (state.stopping, state.announce, state.rebind || state.leases == nil)
            }
            if stopping { return }
            let up = natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED
            if up, rebind, let js {
                do throws(ClusterError) {
                    let leases = try bind(js)
                    let states = try bindStates(js)
                    state.withLock {
                        $0.leases = leases
                        $0.states = states
                    }
                    if !lastBindError.isEmpty { logger.notice("cluster: lease bucket bound", metadata: ["bucket": "\(RoomLeases.bucket)"]) }
                    lastBindError = ""
                } catch {
                    state.withLock {
                        $0.leases = nil
                        $0.states = nil
                    }
                    if error.description != lastBindError {
                        logger.error("cluster: cannot bind the lease bucket (is JetStream on? nats-server -js)",
                                     metadata: ["bucket": "\(RoomLeases.bucket)", "error": "\(error)"])
                        lastBindError = error.description
                    }
                }
            }
            let now = monotonicMillis()
            if up, announce || now >= nextBeat {
                _ = natsConnection_PublishString(connection, subject, "up \(incarnation)")
                nextBeat = now + config.heartbeatMillis
            }
            let bound = state.withLock { $0.leases != nil }
            report(connected: up && bound)
            let untilBeat = max(10, min(nextBeat - monotonicMillis(), config.heartbeatMillis))
            if wait(millis: up && bound ? untilBeat : min(untilBeat, 250)) { return }
        }
    }

    /// Binds `roomd-rooms`, creating it when nats-server has none.
    private func bind(_ js: OpaquePointer) throws(ClusterError) -> RoomLeases {
        var kv: OpaquePointer?
        var status = js_KeyValue(&kv, js, RoomLeases.bucket)
        if status == NATS_NOT_FOUND {
            var config = kvConfig()
            kvConfig_Init(&config)
            config.History = 1
            config.TTL = self.config.leaseTTLMillis * 1_000_000
            config.MaxValueSize = RoomLeases.maxValueBytes
            config.MaxBytes = RoomLeases.maxBucketBytes
            status = RoomLeases.bucket.withCString { name in
                config.Bucket = name
                return js_CreateKeyValue(&kv, js, &config)
            }
            if status == NATS_OK { logger.notice("cluster: created the lease bucket", metadata: ["bucket": "\(RoomLeases.bucket)"]) }
        }
        guard status == NATS_OK, let kv else { throw natsError("bind \(RoomLeases.bucket)", status) }
        var ttl = config.leaseTTLMillis
        var kvStatus: OpaquePointer?
        if kvStore_Status(&kvStatus, kv) == NATS_OK, let kvStatus {
            let actual = kvStatus_TTL(kvStatus) / 1_000_000
            kvStatus_Destroy(kvStatus)
            if actual > 0, actual != ttl {
                logger.warning("cluster: the lease bucket has another TTL than configured: using it",
                               metadata: ["ttl_ms": "\(actual)", "configured_ms": "\(ttl)"])
                ttl = actual
            }
        }
        return RoomLeases(kv: kv, nodeID: config.nodeID, ttlMillis: ttl)
    }

    /// Binds `roomd-state`, creating it when nats-server has none.
    private func bindStates(_ js: OpaquePointer) throws(ClusterError) -> RoomStates {
        var kv: OpaquePointer?
        var status = js_KeyValue(&kv, js, RoomStates.bucket)
        if status == NATS_NOT_FOUND {
            var config = kvConfig()
            kvConfig_Init(&config)
            config.History = 1
            config.MaxValueSize = RoomStates.maxValueBytes
            config.MaxBytes = RoomStates.maxBucketBytes
            status = RoomStates.bucket.withCString { name in
                config.Bucket = name
                return js_CreateKeyValue(&kv, js, &config)
            }
        }
        guard status == NATS_OK, let kv else { throw natsError("bind \(RoomStates.bucket)", status) }
        return RoomStates(kv: kv)
    }

    /// Recounts the nodes alive and calls `onStatus` when the status changed.
    private func report(connected: Bool, forceNodes: Int? = nil) {
        let now = monotonicMillis()
        let (status, previous) = state.withLock { state -> (ClusterStatus, ClusterStatus) in
            state.seen = state.seen.filter { $0.key == config.nodeID || now - $0.value <= config.aliveWindowMillis }
            let others = state.seen.keys.filter { $0 != config.nodeID }.sorted()
            let alive = forceNodes == nil ? (others + [config.nodeID]).sorted() : [config.nodeID]
            let status = ClusterStatus(nodeID: config.nodeID, nodes: forceNodes ?? others.count + 1, connected: connected,
                                       alive: alive)
            defer { state.reported = status }
            return (status, state.reported)
        }
        guard status != previous else { return }
        if status.connected != previous.connected {
            if status.connected {
                logger.notice("cluster: bus connected", metadata: ["nodes": "\(status.nodes)"])
            } else {
                logger.warning("cluster: bus unreachable", metadata: ["url": "\(config.natsURL)"])
            }
        } else {
            logger.info("cluster: nodes alive changed", metadata: ["nodes": "\(status.nodes)", "was": "\(previous.nodes)"])
        }
        onStatus(status)
    }

    /// Sleeps until woken or `millis` passed; true when stopping.
    private func wait(millis: Int64) -> Bool {
        _ = wake.wait(timeout: .now() + .milliseconds(Int(max(1, millis))))
        return state.withLock { $0.stopping }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
