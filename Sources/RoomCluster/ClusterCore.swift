import CNats
import Dispatch
import Foundation
import Logging
import Synchronization

/// The state shared by the cluster thread and the C client's callback threads.
final class ClusterCore: Sendable {
    struct State {
        var started = false
        var stopping = false
        /// Last heartbeat of each node (monotonic ms), this node's own included.
        var seen: [NodeID: Int64] = [:]
        /// The run (incarnation) each node's last heartbeat named.
        var runs: [NodeID: String] = [:]
        /// Nodes whose last heartbeat said `drain` (this one's too, once it drains).
        var draining: Set<NodeID> = []
        /// This node drains: its heartbeats say `drain` instead of `up`.
        var drainingSelf = false
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

    init(
        config: ClusterConfig,
        logger: Logger,
        onStatus: @escaping @Sendable (ClusterStatus) -> Void,
        onMessage: @escaping @Sendable ([UInt8]) -> Void,
        onRequest: @escaping @Sendable ([UInt8], String) -> Void
    ) {
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

    func send(to node: NodeID, _ payload: [UInt8]) throws(ClusterError) {
        guard ClusterConfig.isValidNodeID(node.rawValue) else {
            throw ClusterError(operation: "send", status: "invalid node id", detail: String(node.rawValue.prefix(100)))
        }
        guard payload.count <= RoomCluster.maxMessageBytes else {
            throw ClusterError(
                operation: "send",
                status: "too large",
                detail: "\(payload.count) bytes, at most \(RoomCluster.maxMessageBytes)"
            )
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

    func request(to node: NodeID, _ payload: [UInt8], timeoutMillis: Int64) throws(ClusterError) -> [UInt8] {
        guard ClusterConfig.isValidNodeID(node.rawValue) else {
            throw ClusterError(
                operation: "request",
                status: "invalid node id",
                detail: String(node.rawValue.prefix(100))
            )
        }
        guard payload.count <= RoomCluster.maxMessageBytes else {
            throw ClusterError(
                operation: "request",
                status: "too large",
                detail: "\(payload.count) bytes, at most \(RoomCluster.maxMessageBytes)"
            )
        }
        // The connection is used outside the lock (the C client locks it):
        // `run()` destroys it only after `link` is cleared and the close waited for.
        guard
            let link = link.withLock({ link -> Link? in
                if link != nil { requestsInFlight.add(1, ordering: .relaxed) }
                return link
            })
        else { throw ClusterError(operation: "request", status: "not started", detail: "") }
        defer { requestsInFlight.subtract(1, ordering: .releasing) }
        var reply: OpaquePointer?
        let status = payload.withUnsafeBytes {
            natsConnection_Request(
                &reply,
                link.connection,
                RoomCluster.requestSubject(of: node),
                $0.baseAddress,
                Int32($0.count),
                timeoutMillis
            )
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
        let name = String(subject.dropFirst(prefix.count))
        guard ClusterConfig.isValidNodeID(name) else { return }
        let node = NodeID(name)
        // "up INCARNATION", "drain INCARNATION" (up, and handing its rooms over) or "leave INCARNATION".
        let words = body.split(separator: " ", maxSplits: 1)
        var (kind, from) = (words.first.map(String.init) ?? "", words.count > 1 ? String(words[1]) : "")
        guard kind == "up" || kind == "leave" || kind == "drain" else { return }
        let drains = kind == "drain"
        if drains { kind = "up" }
        let now = monotonicMillis()
        if node == config.nodeID, from != incarnation {
            let warn = state.withLock { state -> Bool in
                defer { if now - state.lastDuplicateWarning >= 10_000 { state.lastDuplicateWarning = now } }
                return now - state.lastDuplicateWarning >= 10_000
            }
            if warn {
                logger.error(
                    "cluster: another process uses this node id: give every node its own --node-id",
                    metadata: ["other": "\(from.prefix(16))"]
                )
            }
            return
        }
        let wakeUp = state.withLock { state -> Bool in
            if kind == "leave" {
                guard state.runs[node] == nil || state.runs[node] == from else { return false }  // an older run's
                state.runs.removeValue(forKey: node)
                state.draining.remove(node)
                return state.seen.removeValue(forKey: node) != nil
            }
            let known = state.seen[node] != nil
            if !known, state.seen.count >= RoomCluster.maxNodes { return false }
            state.seen[node] = now
            let drainChanged =
                drains ? state.draining.insert(node).inserted : state.draining.remove(node) != nil
            // A node restarted within the alive window: a new run, reported at once.
            let restarted = known && state.runs[node] != from
            state.runs[node] = from
            if !known || restarted, node != config.nodeID { state.announce = true }
            return !known || restarted || drainChanged
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
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
