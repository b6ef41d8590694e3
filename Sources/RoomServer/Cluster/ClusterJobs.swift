import Dispatch
import Foundation
import Logging
import RoomCluster
import RoomModel
import Synchronization

/// Where a room lives, as a lookup in the lease bucket found it.
enum RoomHome: Sendable, Equatable {
    /// This node holds the room's lease (it claimed it, or already had it).
    case here
    /// Another node, alive, holds it.
    case node(NodeID)
    /// Nobody does (and the lookup was not allowed to claim).
    case nowhere
    /// The bus or the holder could not be reached in time.
    case unavailable
}

/// What the cluster's background work hands back to the service thread.
enum ClusterEvent: Sendable {
    case message([UInt8])
    case request([UInt8], reply: String)
    /// `snapshot`: the room's saved state, when this node just claimed a room that had one.
    case resolved(room: RoomID, claim: Bool, RoomHome, snapshot: SavedState?)
    case leaseLost(room: RoomID)
    /// The answer to a forwarded REST request (`serial` names the waiting HTTP connection).
    case restAnswer(serial: Int, HTTPResponse)
    /// The room of a REST request has no home elsewhere: answer it here.
    case restLocal(serial: Int)
    /// Every other node's page of the room list (their JSON answers).
    case restList(serial: Int, [[UInt8]])
    /// REST room creation (`POST /v2/rooms`): this node claimed the room's lease; answer it here.
    case restClaimed(serial: Int, room: RoomID)
    /// A drain's handover (Drain.swift): these rooms' states are saved whole
    /// and their leases released (`moved`); the others stay held (`kept`:
    /// their state could not be saved, they are taken over as after a death).
    case handedOver(moved: [RoomID], kept: [RoomID])
}

/// The blocking NATS work of the routing (KV lookups, claims, lease
/// renewals, forwarded REST requests), off the service thread: it posts
/// what it finds with `post`. Renewals run on a queue of their own so that
/// a lookup waiting for a dead node's lease to expire never delays them.
///
/// Thread-safe: the lease table is behind a mutex; the rest is immutable.
final class ClusterJobs: Sendable {
    let cluster: RoomCluster
    let logger: Logger
    let post: @Sendable (ClusterEvent) -> Void
    /// Leases this node holds, by room: renewed every third of their TTL.
    let held = Mutex<[RoomID: RoomLease]>([:])
    /// Rooms whose release is queued.
    private let releasing = Mutex<Set<RoomID>>([])
    private let leaseQueue = DispatchQueue(label: "roomd-cluster-leases")
    private let lookupQueue = DispatchQueue(label: "roomd-cluster-lookups", attributes: .concurrent)
    /// Bound on lookups and forwarded requests in flight (beyond it: answered unavailable).
    static let maxInFlight = 256
    private let inFlight = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)
    /// This node drains: it claims no room; a lookup waits for another node
    /// to hold the room (one it handed over) instead of answering `.nowhere`.
    let draining = Atomic<Bool>(false)

    init(cluster: RoomCluster, logger: Logger, post: @escaping @Sendable (ClusterEvent) -> Void) {
        self.cluster = cluster
        self.logger = logger
        self.post = post
    }

    var nodeID: NodeID { cluster.config.nodeID }
    var requestTimeout: Int64 { cluster.config.requestTimeoutMillis }

    /// Renews the held leases every third of their TTL until `stop()`.
    func start() {
        let period = Int(max(100, cluster.config.leaseTTLMillis / 3))
        leaseQueue.asyncAfter(deadline: .now() + .milliseconds(period)) { [self] in
            guard !stopped.load(ordering: .relaxed) else { return }
            renewAll()
            start()
        }
    }

    func stop() { stopped.store(true, ordering: .relaxed) }

    /// Runs `work` on the lookup queue unless too much is in flight.
    private func lookup(_ work: @escaping @Sendable () -> Void, refused: @escaping @Sendable () -> Void) {
        guard inFlight.add(1, ordering: .relaxed).newValue <= Self.maxInFlight else {
            inFlight.subtract(1, ordering: .relaxed)
            refused()
            return
        }
        lookupQueue.async { [self] in
            work()
            inFlight.subtract(1, ordering: .relaxed)
        }
    }

    // MARK: homes

    /// Finds `room`'s home, claiming it for this node when nobody holds it
    /// and `claim` is set; posts `.resolved`.
    func resolve(_ room: RoomID, claim: Bool) {
        lookup(
            { [self] in
                let home = home(of: room, claim: claim)
                var snapshot: SavedState?
                if home == .here, claim {
                    do throws(ClusterError) { snapshot = try cluster.states?.load(room.rawValue) } catch {
                        logger.warning(
                            "cluster: cannot load a room's saved state",
                            metadata: ["room": "\(room)", "error": "\(error)"]
                        )
                    }
                }
                post(.resolved(room: room, claim: claim, home, snapshot: snapshot))
            },
            refused: { [self] in post(.resolved(room: room, claim: claim, .unavailable, snapshot: nil)) }
        )
    }

    /// Blocking. A holder that is not alive (killed), or whose lease is of an
    /// earlier run of its node id (restarted within the alive window), is
    /// waited out: its lease expires within the TTL, then the room is claimed.
    func home(of room: RoomID, claim: Bool) -> RoomHome {
        let deadline = monotonicMillis() + cluster.config.leaseTTLMillis + cluster.config.aliveWindowMillis
        while true {
            if let leases = cluster.leases, cluster.status.connected {
                do throws(ClusterError) {
                    if let holder = try leases.holder(of: room.rawValue) {
                        if holder.node == nodeID {
                            if held.withLock({ $0[room] != nil }) {
                                _ = releasing.withLock { $0.remove(room) }  // a queued release would drop it
                                return .here
                            }
                            // Else a previous run of this node id holds it: wait for the expiry.
                        } else if isCurrent(holder) {
                            return .node(holder.node)
                        }
                    } else if draining.load(ordering: .relaxed) {
                        // Handed over: wait for a node that is not draining to claim it.
                        if cluster.status.takers.isEmpty { return .unavailable }
                    } else if !claim {
                        return .nowhere
                    } else {
                        switch try leases.claim(room.rawValue) {
                        case .claimed(let lease):
                            held.withLock { $0[room] = lease }
                            logger.info("cluster: room claimed", metadata: ["room": "\(room)"])
                            return .here
                        case .held(let holder):
                            if holder.node != nodeID, isCurrent(holder) {
                                return .node(holder.node)
                            }
                        }
                    }
                } catch {
                    logger.debug("cluster: room lookup failed", metadata: ["room": "\(room)", "error": "\(error)"])
                }
            }
            if monotonicMillis() >= deadline { return .unavailable }
            usleep(100_000)
        }
    }

    /// Whether `lease` is held by a node alive now, in the run that wrote it
    /// (a lease without a run is taken at its word).
    private func isCurrent(_ lease: RoomLease) -> Bool {
        let status = cluster.status
        guard status.alive.contains(lease.node) else { return false }
        guard let run = lease.run, let current = status.runs[lease.node] else { return true }
        return run == current
    }

    /// A drain's handover, off the service thread: every state in `rooms`
    /// is written (a snapshot, or nil: the room ended, its state is deleted)
    /// and flushed to the bus, then each lease whose state is safe is
    /// released on the lease queue (after any renewal under way); posts
    /// `.handedOver`. A room whose state could not be written keeps its
    /// lease: it is taken over as after a death.
    func handOver(_ rooms: [(RoomID, RoomSnapshot?)], writer: RoomStateWriter) {
        DispatchQueue.global().async { [self] in
            for (room, snapshot) in rooms {
                if let snapshot { writer.save(room, snapshot) } else { writer.delete(room) }
            }
            writer.flush()
            leaseQueue.async { [self] in
                var moved: [RoomID] = []
                var kept: [RoomID] = []
                for (room, _) in rooms {
                    guard writer.isSaved(room), let lease = held.withLock({ $0.removeValue(forKey: room) }),
                        let leases = cluster.leases
                    else {
                        kept.append(room)
                        continue
                    }
                    do throws(ClusterError) {
                        if try leases.release(lease) { moved.append(room) } else { kept.append(room) }
                    } catch {
                        kept.append(room)
                    }
                }
                post(.handedOver(moved: moved, kept: kept))
            }
        }
    }

    /// Gives up the lease of a room that ended here (unless `keep` comes first).
    func release(_ room: RoomID) {
        releasing.withLock { _ = $0.insert(room) }
        leaseQueue.async { [self] in
            guard releasing.withLock({ $0.remove(room) }) != nil,
                let lease = held.withLock({ $0.removeValue(forKey: room) }), let leases = cluster.leases
            else { return }
            do throws(ClusterError) {
                _ = try leases.release(lease)
                logger.debug("cluster: room released", metadata: ["room": "\(room)"])
            } catch {
                logger.debug(
                    "cluster: release failed (the lease expires)",
                    metadata: ["room": "\(room)", "error": "\(error)"]
                )
            }
        }
    }

    /// A join came for a room whose release is queued: keeps the lease
    /// instead, when it is still held. False: the room is gone from here.
    func keep(_ room: RoomID) -> Bool {
        guard releasing.withLock({ $0.remove(room) }) != nil else { return false }
        return held.withLock { $0[room] != nil }
    }

    private func renewAll() {
        guard let leases = cluster.leases, cluster.status.connected else { return }
        for (room, lease) in held.withLock({ $0 }) {
            do throws(ClusterError) {
                if let renewed = try leases.renew(lease) {
                    held.withLock { table in if table[room] != nil { table[room] = renewed } }
                } else {
                    held.withLock { _ = $0.removeValue(forKey: room) }
                    post(.leaseLost(room: room))
                }
            } catch {
                logger.debug("cluster: renewal failed", metadata: ["room": "\(room)", "error": "\(error)"])
            }
        }
    }

    // MARK: REST

    /// A REST request about `room`: forwarded to its home when that is
    /// another node (`.restAnswer`), else `.restLocal`.
    /// `claim`: a request that creates the room (`POST /v2/rooms`) makes
    /// this node its home when it has none, as a join does.
    func forward(_ payload: [UInt8], room: RoomID, serial: Int, claim: Bool = false) {
        lookup(
            { [self] in
                switch home(of: room, claim: claim) {
                case .node(let node):
                    do throws(ClusterError) {
                        let answer = try cluster.request(to: node, payload, timeoutMillis: requestTimeout)
                        post(
                            .restAnswer(
                                serial: serial,
                                ForwardedHTTP.decodeResponse(answer)
                                    ?? .error(502, code: 502, "cluster: the room's home node sent a malformed answer")
                            )
                        )
                    } catch {
                        post(.restAnswer(serial: serial, ForwardedHTTP.unavailable))
                    }
                case .here where claim: post(.restClaimed(serial: serial, room: room))
                case .here, .nowhere: post(.restLocal(serial: serial))
                case .unavailable: post(.restAnswer(serial: serial, ForwardedHTTP.unavailable))
                }
            },
            refused: { [self] in post(.restAnswer(serial: serial, ForwardedHTTP.unavailable)) }
        )
    }

    /// The room list: every other alive node's own page (`.restList`).
    func gatherList(_ payload: [UInt8], serial: Int) {
        lookup(
            { [self] in
                var pages: [[UInt8]] = []
                for node in cluster.status.alive where node != nodeID {
                    if let answer = try? cluster.request(to: node, payload, timeoutMillis: requestTimeout),
                        let response = ForwardedHTTP.decodeResponse(answer), response.status == 200
                    {
                        pages.append(response.body)
                    }
                }
                post(.restList(serial: serial, pages))
            },
            refused: { [self] in post(.restAnswer(serial: serial, ForwardedHTTP.unavailable)) }
        )
    }
}
