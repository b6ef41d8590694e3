import CNats
import Dispatch
import Foundation
import Logging
import Synchronization

/// The cluster thread (`roomd-cluster`): connects to NATS and reconnects,
/// binds the buckets, sends heartbeats, counts the nodes alive and reports
/// the status; it sleeps on `wake` between ticks.
extension ClusterCore {

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
        _ = natsOptions_SetDisconnectedCB(
            options,
            { _, closure in
                Unmanaged<ClusterCore>.fromOpaque(closure!).takeUnretainedValue().connectionChanged("disconnected")
            },
            me
        )
        _ = natsOptions_SetReconnectedCB(
            options,
            { _, closure in
                Unmanaged<ClusterCore>.fromOpaque(closure!).takeUnretainedValue().connectionChanged("reconnected")
            },
            me
        )
        _ = natsOptions_SetClosedCB(
            options,
            { _, closure in
                Unmanaged<ClusterCore>.fromOpaque(closure!).takeUnretainedValue().closed.signal()
            },
            me
        )
        // The first connect retries in the background like a reconnect.
        _ = natsOptions_SetRetryOnFailedConnect(
            options,
            true,
            { _, closure in
                Unmanaged<ClusterCore>.fromOpaque(closure!).takeUnretainedValue().connectionChanged("connected")
            },
            me
        )

        var connection: OpaquePointer?
        while true {
            let status = natsConnection_Connect(&connection, options)
            if status == NATS_OK || status == NATS_NOT_YET_CONNECTED, connection != nil { break }
            logger.error(
                "cluster: cannot connect",
                metadata: ["url": "\(config.natsURL)", "error": "\(natsError("connect", status))"]
            )
            if wait(millis: 1000) { return }
        }
        guard let connection else { return }
        if natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED { connectionChanged("connected") }

        link.withLock { $0 = Link(connection: connection) }
        let inbound = subscribe(
            connection,
            RoomCluster.subject(of: config.nodeID),
            pending: (RoomCluster.maxPendingMessages, RoomCluster.maxPendingBytes)
        ) { _, _, message, closure in
            guard let message else { return }
            let payload = ClusterCore.payload(of: message)
            natsMsg_Destroy(message)
            Unmanaged<ClusterCore>.fromOpaque(closure!).takeUnretainedValue().onMessage(payload)
        }
        let requests = subscribe(
            connection,
            RoomCluster.requestSubject(of: config.nodeID),
            pending: (4096, RoomCluster.maxPendingBytes)
        ) { _, _, message, closure in
            guard let message else { return }
            let payload = ClusterCore.payload(of: message)
            let reply = natsMsg_GetReply(message).map { String(cString: $0) } ?? ""
            natsMsg_Destroy(message)
            if !reply.isEmpty {
                Unmanaged<ClusterCore>.fromOpaque(closure!).takeUnretainedValue().onRequest(payload, reply)
            }
        }
        let subscription = subscribe(connection, RoomCluster.nodesSubject + ".*", pending: nil) {
            _,
            _,
            message,
            closure in
            guard let message else { return }
            let subject = String(cString: natsMsg_GetSubject(message))
            let length = Int(natsMsg_GetDataLength(message))
            let body =
                length > 0 && length <= 64
                ? String(
                    decoding: UnsafeRawBufferPointer(start: natsMsg_GetData(message), count: length),
                    as: UTF8.self
                ) : ""
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
            _ = natsConnection_PublishString(
                connection,
                "\(RoomCluster.nodesSubject).\(config.nodeID)",
                "leave \(incarnation)"
            )
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
        report(connected: false, leaving: true)
        logger.info("cluster: left")
    }

    /// Subscribes `handler` (a C callback; its closure argument is this
    /// object) to `subject`, with the given pending limits (messages, bytes);
    /// `unsubscribed` is signalled when the subscription is done. Nil (logged)
    /// when the subscription fails.
    private func subscribe(
        _ connection: OpaquePointer,
        _ subject: String,
        pending: (messages: Int, bytes: Int)?,
        _ handler: natsMsgHandler
    ) -> OpaquePointer? {
        let me = Unmanaged.passUnretained(self).toOpaque()
        var subscription: OpaquePointer?
        guard natsConnection_Subscribe(&subscription, connection, subject, handler, me) == NATS_OK, let subscription
        else {
            logger.error("cluster: cannot subscribe to \(subject)")
            return nil
        }
        if let pending {
            _ = natsSubscription_SetPendingLimits(subscription, Int32(pending.messages), Int32(pending.bytes))
        }
        _ = natsSubscription_SetOnCompleteCB(
            subscription,
            { closure in
                Unmanaged<ClusterCore>.fromOpaque(closure!).takeUnretainedValue().unsubscribed.signal()
            },
            me
        )
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
            let (stopping, announce, rebind, drains) = state.withLock { state in
                defer {
                    state.announce = false
                    state.rebind = false
                }
                return (state.stopping, state.announce, state.rebind || state.leases == nil, state.drainingSelf)
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
                    if !lastBindError.isEmpty {
                        logger.notice("cluster: lease bucket bound", metadata: ["bucket": "\(RoomLeases.bucket)"])
                    }
                    lastBindError = ""
                } catch {
                    state.withLock {
                        $0.leases = nil
                        $0.states = nil
                    }
                    if error.description != lastBindError {
                        logger.error(
                            "cluster: cannot bind the lease bucket (is JetStream on? nats-server -js)",
                            metadata: ["bucket": "\(RoomLeases.bucket)", "error": "\(error)"]
                        )
                        lastBindError = error.description
                    }
                }
            }
            let now = monotonicMillis()
            if up, announce || now >= nextBeat {
                _ = natsConnection_PublishString(connection, subject, "\(drains ? "drain" : "up") \(incarnation)")
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
            if status == NATS_OK {
                logger.notice("cluster: created the lease bucket", metadata: ["bucket": "\(RoomLeases.bucket)"])
            }
        }
        guard status == NATS_OK, let kv else { throw natsError("bind \(RoomLeases.bucket)", status) }
        var ttl = config.leaseTTLMillis
        var kvStatus: OpaquePointer?
        if kvStore_Status(&kvStatus, kv) == NATS_OK, let kvStatus {
            let actual = kvStatus_TTL(kvStatus) / 1_000_000
            kvStatus_Destroy(kvStatus)
            if actual > 0, actual != ttl {
                logger.warning(
                    "cluster: the lease bucket has another TTL than configured: using it",
                    metadata: ["ttl_ms": "\(actual)", "configured_ms": "\(ttl)"]
                )
                ttl = actual
            }
        }
        return RoomLeases(kv: kv, nodeID: config.nodeID, run: incarnation, ttlMillis: ttl)
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
    /// `leaving`: this node left (stop): it counts only itself, and its bus
    /// is not "unreachable".
    private func report(connected: Bool, leaving: Bool = false) {
        let forceNodes: Int? = leaving ? 1 : nil
        let now = monotonicMillis()
        let (status, previous) = state.withLock { state -> (ClusterStatus, ClusterStatus) in
            state.seen = state.seen.filter { $0.key == config.nodeID || now - $0.value <= config.aliveWindowMillis }
            state.runs = state.runs.filter { state.seen[$0.key] != nil }
            state.draining = state.draining.filter { state.seen[$0] != nil }
            let others = state.seen.keys.filter { $0 != config.nodeID }.sorted()
            let alive = forceNodes == nil ? (others + [config.nodeID]).sorted() : [config.nodeID]
            var runs = state.runs.filter { alive.contains($0.key) }
            runs[config.nodeID] = incarnation
            var draining = state.draining.filter { alive.contains($0) }
            if state.drainingSelf { draining.insert(config.nodeID) }
            let status = ClusterStatus(
                nodeID: config.nodeID,
                nodes: forceNodes ?? others.count + 1,
                connected: connected,
                alive: alive,
                runs: runs,
                draining: draining
            )
            defer { state.reported = status }
            return (status, state.reported)
        }
        guard status != previous else { return }
        if status.connected != previous.connected {
            if status.connected {
                logger.notice("cluster: bus connected", metadata: ["nodes": "\(status.nodes)"])
            } else if !leaving {
                logger.warning("cluster: bus unreachable", metadata: ["url": "\(config.natsURL)"])
            }
        } else if status.alive != previous.alive {
            logger.info(
                "cluster: nodes alive changed",
                metadata: ["nodes": "\(status.nodes)", "was": "\(previous.nodes)"]
            )
        } else if status.draining != previous.draining {
            logger.info(
                "cluster: nodes draining changed",
                metadata: ["draining": "\(status.draining.map(\.rawValue).sorted().joined(separator: ","))"]
            )
        } else {
            let restarted = status.runs.filter { previous.runs[$0.key] != nil && previous.runs[$0.key] != $0.value }
            logger.info(
                "cluster: a node restarted",
                metadata: ["nodes": "\(restarted.keys.sorted().map(\.rawValue).joined(separator: ","))"]
            )
        }
        onStatus(status)
    }

    /// Sleeps until woken or `millis` passed; true when stopping.
    private func wait(millis: Int64) -> Bool {
        _ = wake.wait(timeout: .now() + .milliseconds(Int(max(1, millis))))
        return state.withLock { $0.stopping }
    }
}
