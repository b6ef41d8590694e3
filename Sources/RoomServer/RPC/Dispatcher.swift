import Logging
import RoomConfig
import RoomModel
import RoomWire

/// decode → RoomModel → encode once → fan out. Runs on the service thread.
/// (`package`: `roombench micro` measures `fanOut`.)
package final class Dispatcher {
    typealias Handler = (Dispatcher) -> (Params, Connection) throws(RoomError) -> [UInt8]

    struct Method {
        var needsJoin: Bool
        var handler: Handler
    }

    static let maxBatch = 64
    /// Consecutive -32700/-32600/42900 errors that close a connection (4029).
    static let maxErrorStreak = 10

    unowned let server: RoomServer
    let verifier: TokenVerifier
    var registry: RoomRegistry { server.registry }
    var logger: Logger { server.logger }
    /// `Policy` objects are the same for every peer of a role: encoded once.
    private(set) var policies: [String: [UInt8]]
    /// `on-policy-change` frames, one per role, shared by every push.
    private(set) var policyChanges: [String: Frame]
    private var methods: [String: Method] = [:]
    /// Set by a handler: close the caller's connection after its response.
    var closeAfterReply: UInt16?
    /// Set by a resume: held pushes that follow the response (bounded by
    /// `HeldPushes.limit`, so not counted against `max_outbound_bytes`).
    var replayAfterReply: [Frame] = []
    /// The connection whose message is being handled. An identity, not a
    /// weak reference: a weak reference would move every connection's
    /// reference counting to the slow side-table path.
    private var current: ObjectIdentifier?
    /// `fanOut`'s work queue, and whether a `fanOut` is draining it.
    private var pendingFanOut: [[Delivery]] = []
    private var fanningOut = false

    init(server: RoomServer) {
        self.server = server
        self.verifier = TokenVerifier(secret: server.options.secret, accessKey: server.options.accessKey)
        (policies, policyChanges) = Self.policies(of: server.options.template)
        methods = Self.registeredMethods
    }

    /// The `Policy` of every role of `template`, encoded once, and the
    /// `on-policy-change` frame of each.
    static func policies(of template: RoleTemplate) -> ([String: [UInt8]], [String: Frame]) {
        var policies: [String: [UInt8]] = [:]
        for name in template.roleNames {
            var w = JSONWriter()
            w.object { w in
                w.field("name", name)
                w.key("known_roles")
                w.object { w in
                    for known in template.roleNames {
                        w.key(known)
                        w.role(template.roles[known]!)
                    }
                }
            }
            policies[name] = w.bytes
        }
        return (policies, policies.mapValues { Envelope.notification("on-policy-change", params: $0) })
    }

    /// SIGHUP: the reloaded template's roles from now on. The policies of
    /// roles that vanished stay, for the peers that still have them.
    func reload(_ template: RoleTemplate) {
        registry.replaceRoles(with: template)
        let (fresh, changes) = Self.policies(of: registry.template)
        policies.merge(fresh) { $1 }
        policyChanges.merge(changes) { $1 }
    }

    /// The names of `registeredMethods`, sorted.
    static var methodNames: [String] { registeredMethods.keys.sorted() }

    /// Every method roomd serves, by name: the dispatcher's table, and the
    /// `method` labels of `roomd_calls_total` (`ServerMetrics`), so the two
    /// cannot disagree. docs/openrpc.json documents each of them.
    static var registeredMethods: [String: Method] {
        [
            "join": Method(needsJoin: false, handler: Dispatcher.join),
            "ping": Method(needsJoin: false, handler: Dispatcher.ping),
            "leave": Method(needsJoin: true, handler: Dispatcher.leave),
            "peer-update": Method(needsJoin: true, handler: Dispatcher.peerUpdate),
            "broadcast": Method(needsJoin: true, handler: Dispatcher.broadcast),
        ].merging(Self.roomMethods) { $1 }.merging(Self.searchMethods) { $1 }
            .merging(Self.audienceMethods) { $1 }.merging(Self.pollMethods) { $1 }
            .merging(Self.hlsMethods) { $1 }
    }

    // MARK: pipeline

    /// Handles one complete text message from `connection`.
    func handle(_ bytes: [UInt8], from connection: Connection) {
        let roomBefore = connection.peer?.room.id
        defer {
            if let router = server.router {  // cluster: the room's saved state may be stale now
                router.touch(roomBefore)
                router.touch(connection.peer?.room.id)
            }
        }
        connection.beginDeferring()
        closeAfterReply = nil
        current = ObjectIdentifier(connection)
        defer { current = nil }
        var out = Frame.writer(reserving: 128)
        var replied = false
        do {
            let message = try JSON.parse(bytes)
            if case .array(let calls) = message {
                if calls.isEmpty || calls.count > Self.maxBatch {
                    let error = RoomError(.invalidRequest, "a batch holds 1 to \(Self.maxBatch) calls, got \(calls.count)")
                    server.metrics.failed(.invalidRequest)
                    Envelope.response(id: .null, into: &out, error: error)
                    count(error, on: connection)
                    replied = true
                } else {
                    out.beginArray()
                    for call in calls where process(call, on: connection, into: &out) { replied = true }
                    out.endArray()
                }
            } else {
                replied = process(message, on: connection, into: &out)
            }
        } catch {
            let failure = RoomError(.parseError, "parse error: \(error)")
            server.metrics.failed(.parseError)
            Envelope.response(id: .null, into: &out, error: failure)
            count(failure, on: connection)
            replied = true
        }
        if replied { connection.enqueue(Frame(payload: out), bypassingDeferral: true) }
        for frame in replayAfterReply { connection.enqueue(frame, bypassingDeferral: true, enforcingLimit: false) }
        replayAfterReply = []
        connection.endDeferring()
        if connection.isDroppedAsSlow {
            dropSlowConsumer(connection)
            return
        }
        if connection.errorLimitReached {
            logger.info("too many errors in a row, closing", metadata: server.metadata(connection))
            connection.close(4029)
        } else if let code = closeAfterReply {
            connection.close(code)
        }
    }

    /// One call. Writes its response into `out` and returns true, or returns
    /// false for a notification (whose failure is pushed as `on-error`).
    private func process(_ call: JSON, on connection: Connection, into out: inout JSONWriter) -> Bool {
        let id = call["id"]
        let validID: JSON? = switch id {
        case .string, .number: id
        default: nil
        }
        let methodName = call["method"]?.stringValue
        server.metrics.called(methodName)
        let result = Result { () throws(RoomError) -> [UInt8] in
            // The rate limit is checked right after parsing, before -32600.
            if methodName != "ping", !connection.rate.take(nowMillis: server.clock.nowMillis()) {
                throw RoomError(.rateLimited, "rate limited: over \(server.options.template.settings.limits.messagesPerSecond) calls/s")
            }
            guard case .object = call, call["jsonrpc"] == .string("2.0"), let methodName,
                  id == nil || validID != nil
            else {
                throw RoomError(.invalidRequest, "invalid request: needs jsonrpc \"2.0\", a string method and a string or number id")
            }
            guard let method = methods[methodName] else {
                throw RoomError(.methodNotFound, "method not found: \(methodName)")
            }
            if method.needsJoin, connection.peer == nil {
                throw RoomError(.notJoined, "not joined: call join first")
            }
            if methodName == "join", connection.peer != nil {
                throw RoomError(.alreadyJoined, "this connection already joined")
            }
            let params: JSON
            switch call["params"] {
            case nil: params = .object([])
            case .object?: params = call["params"]!
            case let other?: throw RoomError.invalidParams("params: expected an object, got \(other.typeName)")
            }
            return try method.handler(self)(Params(params), connection)
        }
        switch result {
        case .success(let bytes):
            connection.errorStreak = 0
            guard let validID else { return false }
            Envelope.response(id: validID, into: &out, result: bytes)
            return true
        case .failure(let error):
            count(error, on: connection)
            server.metrics.failed(error.code)
            if error.code == .internalError || error.code == .rateLimited {
                logger.info("call failed", metadata: server.metadata(connection).merging(
                    ["method": "\(methodName ?? "?")", "code": "\(error.code.rawValue)"]) { $1 })
            }
            let isNotification = id == nil && methodName != nil && call.objectValue != nil
            if isNotification, error.code != .invalidRequest {
                connection.enqueue(Envelope.notification("on-error") { w in
                    w.field("code", error.code.rawValue)
                    w.field("message", error.message)
                    w.field("method", methodName ?? "")
                })
                return false
            }
            Envelope.response(id: validID ?? .null, into: &out, error: error)
            return true
        }
    }

    private func count(_ error: RoomError, on connection: Connection) {
        switch error.code {
        case .parseError, .invalidRequest, .rateLimited:
            connection.errorStreak += 1
            // Ten in a row close the connection, even if a later call of the same batch succeeds.
            if connection.errorStreak >= Self.maxErrorStreak { connection.errorLimitReached = true }
        default: break
        }
    }

    // MARK: fan-out

    /// Delivers the pushes, then disconnects the peers the change removed:
    /// after their pushes, with 4001/4002 (the caller after its response).
    func apply(_ effects: Effects) {
        fanOut(effects.deliveries)
        for disconnect in effects.disconnects {
            let handle = disconnect.peer.transportHandle
            disconnect.peer.transportHandle = nil
            guard let connection = handle as? Connection else { continue }
            connection.peer = nil
            let code: UInt16 = disconnect.reason == .removed ? 4001 : 4002
            logger.info("peer disconnected", metadata: [
                "room": "\(disconnect.peer.room.id)", "peer": "\(disconnect.peer.id)", "code": "\(code)"])
            if ObjectIdentifier(connection) == current { closeAfterReply = code } else { connection.close(code) }
        }
    }

    /// Encodes each delivery once and queues the same frame to every recipient.
    /// Recipients dropped as slow consumers, and peers whose held pushes
    /// overflow their reconnect grace, leave the room right after — and
    /// their leaves are more deliveries, which may end more graces. That
    /// cascade runs here as a work queue, never as recursion: its length is
    /// up to the room's size, which clients control.
    package func fanOut(_ deliveries: [Delivery]) {
        server.forwardOperatorEvents()  // webhooks: what the change recorded (Webhooks/ServerWebhooks.swift)
        if deliveries.isEmpty { return }
        pendingFanOut.append(deliveries)
        if fanningOut { return }  // the loop below, further up the stack, takes them
        fanningOut = true
        defer { fanningOut = false }
        var next = 0
        while next < pendingFanOut.count {
            let batch = pendingFanOut[next]
            next += 1
            deliver(batch)
        }
        pendingFanOut.removeAll(keepingCapacity: true)
    }

    /// One batch of `fanOut`: queues the frames, then lets the dropped and
    /// overflowing peers leave (their deliveries join `pendingFanOut`).
    private func deliver(_ deliveries: [Delivery]) {
        var dropped: [Connection] = []
        var overflowing: [Peer] = []
        for delivery in deliveries {
            let frame: Frame
            if case .policyChange(let role) = delivery.push {
                frame = policyChanges[role]!
            } else {
                frame = Envelope.push(delivery.push)
            }
            server.metrics.pushes.increment(by: delivery.recipientCount)
            // No per-push recipient array, and no reference counting per
            // recipient: `delivery.audience` owns every peer, and each peer its
            // connection (`transportHandle`), for the whole loop; nothing in it
            // changes a handle (the dropped and overflowing are handled after
            // it). Retain/release here was 16 % of roomd's samples at the
            // fan-out's knee (docs/BENCHMARKS.md, levers).
            let excluded = delivery.excluded.map { ObjectIdentifier($0) }
            delivery.audience.withUnsafeBufferPointer { audience in
                for index in audience.indices {
                    unowned(unsafe) let peer = audience[index]
                    if ObjectIdentifier(peer) == excluded { continue }
                    guard let reference = peer.transportReference else { continue }
                    reference._withUnsafeGuaranteedRef { handle in
                        if type(of: handle) == Connection.self {
                            let connection = unsafeDowncast(handle, to: Connection.self)
                            if !connection.enqueue(frame), connection.isDroppedAsSlow { dropped.append(connection) }
                        } else if let held = handle as? HeldPushes, !held.hold(frame) {
                            overflowing.append(peer)
                        }
                    }
                }
            }
        }
        for connection in dropped { dropSlowConsumer(connection) }
        for peer in overflowing where peer.transportHandle is HeldPushes {
            logger.info("reconnect grace ended: too many held pushes", metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)"])
            peer.transportHandle = nil
            fanOut(registry.leave(peer, reason: .websocketClosed))
        }
    }

    func dropSlowConsumer(_ connection: Connection) {
        logger.info("slow consumer dropped", metadata: server.metadata(connection))
        server.metrics.slowConsumerCloses.increment()
        connectionLost(connection)
    }

    /// The connection is gone without `leave`: the peer enters its reconnect
    /// grace (pushes to it are held), or leaves at once when there is none.
    func connectionLost(_ connection: Connection) {
        guard let peer = connection.peer, peer.transportHandle === connection else { return }
        server.router?.touch(peer.room.id)
        connection.peer = nil
        if registry.startGrace(peer) {
            peer.transportHandle = HeldPushes()
            server.scheduleGraceExpiry()
            logger.info("peer disconnected, in reconnect grace", metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)"])
            return
        }
        peer.transportHandle = nil
        logger.info("peer left", metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)", "reason": "websocket closed"])
        fanOut(registry.leave(peer, reason: .websocketClosed))
    }

    /// Reconnect graces that ran out.
    func expireGraces() {
        let deliveries = registry.expireGraces()
        fanOut(deliveries)
    }

    static func encode(_ body: (inout JSONWriter) -> Void) -> [UInt8] {
        var w = JSONWriter()
        w.object(body)
        return w.bytes
    }
}

extension Result where Failure == RoomError {
    init(catching body: () throws(RoomError) -> Success) {
        do { self = .success(try body()) } catch { self = .failure(error) }
    }
}
