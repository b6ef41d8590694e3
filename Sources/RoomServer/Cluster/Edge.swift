import Logging
import RoomCluster
import RoomModel

/// A client's node in a cluster (the edge, docs/CLUSTER.md): it reads and
/// frames the client's messages and looks its room up by the token of its
/// `join` (or `preview`); when another node is the room's home, every
/// message of the connection goes there, and what the home queues to the
/// client comes back as records (`frame`, `close`, `ack`, …) handled here.
///
/// Its service thread's only (checked in debug builds).
final class Edge {
    /// Messages (or bytes) of one client on their way to its room's home, not
    /// yet acknowledged, at which its node stops reading it (resumes at half
    /// of both). A window: a client's rate across nodes is at most
    /// window ÷ round trip, and the round trip grows with the home's turn
    /// under load — 64 messages held a sender to ~5,000 msg/s in the
    /// fan-out bench (`--threads 2`); 512 carry 7,000. The bytes bound what
    /// one client can have in flight (`max_message_bytes` up to 1 MiB each).
    static let maxUnacked = 512
    static let maxUnackedBytes = 1 << 20
    /// Messages queued on a connection while its room is looked up.
    static let maxAwaiting = 64
    /// Times one connection's join is sent back to be routed again before it is answered 5003.
    static let maxReroutes = 3

    private let thread: ServiceThread
    private let homes: RoomHomes
    private let jobs: ClusterJobs
    private let outboxes: NodeOutboxes
    private let dispatcher: Dispatcher
    private let home: Home
    private let registry: RoomRegistry
    private let metrics: ServerMetrics
    private let logger: Logger
    /// This node drains (Drain.swift): a room it cannot hand over closes its
    /// clients with 1012, never 5003; `stopReading`: its connections read no
    /// more (they close with 1012 once their calls are answered).
    var draining = false
    var stopReading = false
    /// Lookups under way (`lookupKey`), with the connections waiting for them.
    private var resolving: [String: [Connection]] = [:]
    /// This node's clients whose room lives on another node, by connection id.
    private var routed: [UInt64: Connection] = [:]

    init(
        thread: ServiceThread,
        homes: RoomHomes,
        jobs: ClusterJobs,
        outboxes: NodeOutboxes,
        dispatcher: Dispatcher,
        home: Home,
        registry: RoomRegistry,
        metrics: ServerMetrics,
        logger: Logger
    ) {
        self.thread = thread
        self.homes = homes
        self.jobs = jobs
        self.outboxes = outboxes
        self.dispatcher = dispatcher
        self.home = home
        self.registry = registry
        self.metrics = metrics
        self.logger = logger
    }

    /// A lookup of `room`, one that may claim it or one that may not.
    private static func lookupKey(_ room: RoomID, claim: Bool) -> String { "\(claim)|\(room)" }

    /// Whether a lookup that may claim `room` is under way (its lease must stay).
    func isClaiming(_ room: RoomID) -> Bool { resolving[Self.lookupKey(room, claim: true)] != nil }

    // MARK: a client's message

    /// A complete message from a client of this node.
    func inbound(_ message: [UInt8], on connection: Connection) {
        thread.assertIsCurrent()
        let route = connection.route
        if route.resolvingRoom != nil {
            hold(message, on: connection)
            return
        }
        if connection.hasJoined {
            if let home = route.home {
                forward(message, from: connection, to: home.node)
            } else {
                dispatcher.handle(message, from: connection)
            }
            return
        }
        // Not joined: a join or preview decides where the connection's room lives.
        if let target = JoinTarget.of(message, verifier: dispatcher.verifier) {
            if let home = route.home, home.room == target.room {
                forward(message, from: connection, to: home.node)
                return
            }
            if let home = route.home {  // another room now: leave the old home
                outboxes.outbox(home.node).append(.lost(conn: UInt64(connection.id)))
                routed.removeValue(forKey: UInt64(connection.id))
                route.home = nil
            }
            if homes.isHome(of: target.room) || (!target.joins && route.homelessRoom == target.room)
                || homes.status?.connected != true
            {
                dispatcher.handle(message, from: connection)  // a join while the bus is down answers 5003
                return
            }
            route.resolvingRoom = target.room
            hold(message, on: connection)
            lookUp(target.room, claim: target.joins, for: connection)
            return
        }
        if let home = route.home {
            forward(message, from: connection, to: home.node)
        } else {
            dispatcher.handle(message, from: connection)
        }
    }

    /// Sends a client's message to its room's home; a client too far ahead
    /// of the home's acknowledgements is not read until it catches up.
    private func forward(_ message: [UInt8], from connection: Connection, to home: NodeID) {
        let route = connection.route
        outboxes.outbox(home).append(.data(conn: UInt64(connection.id), bytes: message))
        route.unacked.sent(message)
        if route.unacked.count >= Self.maxUnacked || route.unacked.bytes >= Self.maxUnackedBytes, !route.pausedForHome {
            route.pausedForHome = true
            connection.pauseReading()
        }
    }

    /// Reads from `connection` again, unless this node's drain stopped reading.
    private func resume(_ connection: Connection) {
        if !stopReading { connection.resumeReading() }
    }

    private func hold(_ message: [UInt8], on connection: Connection) {
        let route = connection.route
        // A client whose room moves keeps what its old home did not answer (up to the window), and a few more.
        if route.awaitingRoute.count >= Self.maxAwaiting + (route.takingOver ? Self.maxUnacked : 0) {
            logger.info("too many messages before the room was found, closing", metadata: connection.logMetadata)
            connection.close(1008)
            return
        }
        route.awaitingRoute.append(message)
        if route.awaitingRoute.count == 1 { connection.pauseReading() }
    }

    /// Looks up where `room` lives for `connection` (one lookup for all the
    /// connections that wait for the same room).
    private func lookUp(_ room: RoomID, claim: Bool, for connection: Connection) {
        let key = Self.lookupKey(room, claim: claim)
        if resolving[key] != nil {
            resolving[key]!.append(connection)
        } else {
            resolving[key] = [connection]
            logger.debug("cluster: looking a room up", metadata: ["room": "\(room)", "claim": "\(claim)"])
            jobs.resolve(room, claim: claim)
        }
    }

    /// A lookup ended: the waiting connections go on.
    func resolved(_ room: RoomID, claim: Bool, _ found: RoomHome) {
        thread.assertIsCurrent()
        let waiting = resolving.removeValue(forKey: Self.lookupKey(room, claim: claim)) ?? []
        if found == .here { homes.claimed(room) }
        for connection in waiting where connection.route.resolvingRoom == room && !connection.isClosing {
            let route = connection.route
            route.resolvingRoom = nil
            resume(connection)
            if route.takingOver {
                route.takingOver = false
                takeOver(connection, room: room, found)
                if connection.isClosing { continue }
            } else {
                switch found {
                case .node(let other):
                    route.home = (other, room)
                    routed[UInt64(connection.id)] = connection
                case .nowhere:
                    route.homelessRoom = room  // for the queued messages only (below)
                case .here, .unavailable:
                    break  // handled here; a join of a room not homed here answers 5003
                }
            }
            let queued = route.awaitingRoute
            route.awaitingRoute = []
            for (index, message) in queued.enumerated() {
                if found == .unavailable, route.home == nil {
                    dispatcher.handle(message, from: connection)
                } else {
                    inbound(message, on: connection)
                }
                if route.resolvingRoom != nil {  // another lookup: the rest waits for it
                    route.awaitingRoute.append(contentsOf: queued[(index + 1)...])
                    break
                }
            }
            route.homelessRoom = nil  // a later preview looks again: the room may have a home by then
        }
    }

    /// A client connection of this node closed (or was dropped as a slow consumer).
    func connectionClosed(_ connection: Connection) {
        thread.assertIsCurrent()
        guard let home = connection.edge?.home else { return }
        if routed.removeValue(forKey: UInt64(connection.id)) != nil {
            outboxes.outbox(home.node).append(.lost(conn: UInt64(connection.id)))
        }
    }

    /// Flow control: tells the home of `connection`'s room that its queue
    /// here is congested or drained (FlowControl.report).
    func reportFlow(_ connection: Connection, congested: Bool) {
        thread.assertIsCurrent()
        guard let home = connection.edge?.home else { return }
        let conn = UInt64(connection.id)
        outboxes.outbox(home.node).append(congested ? .congested(conn: conn) : .drained(conn: conn))
    }

    // MARK: records from a room's home

    /// The client of `conn` whose room's home is `node`.
    private func client(_ conn: UInt64, of node: NodeID) -> Connection? {
        guard let connection = routed[conn], connection.edge?.home?.node == node else { return nil }
        return connection
    }

    /// One frame for several clients of this node.
    func frame(_ payload: [UInt8], to conns: [UInt64], from node: NodeID) {
        thread.assertIsCurrent()
        let frame = Frame(wire: payload)
        for conn in conns {
            guard let connection = client(conn, of: node) else { continue }
            if !connection.enqueue(frame), connection.isDroppedAsSlow {
                logger.info("slow consumer dropped", metadata: connection.logMetadata)
                metrics.slowConsumerCloses.increment()
                connectionClosed(connection)  // its peer goes now, not when the socket closes
            }
        }
    }

    func close(_ conn: UInt64, code: UInt16, from node: NodeID) {
        client(conn, of: node)?.close(code)
    }

    func joined(_ conn: UInt64, peer: String, from node: NodeID) {
        guard let connection = client(conn, of: node) else { return }
        connection.markJoined()
        connection.route.remotePeerID = peer
    }

    /// Pushes held during a grace, after the answer of a resume.
    func replay(_ payload: [UInt8], to conn: UInt64, from node: NodeID) {
        client(conn, of: node)?.enqueue(Frame(wire: payload), bypassingDeferral: true, enforcingLimit: false)
    }

    func acknowledged(_ conn: UInt64, count: UInt64, from node: NodeID) {
        guard let connection = client(conn, of: node) else { return }
        let route = connection.route
        route.unacked.acknowledged(Int(clamping: count))
        if route.pausedForHome, route.unacked.count <= Self.maxUnacked / 2,
            route.unacked.bytes <= Self.maxUnackedBytes / 2
        {
            route.pausedForHome = false
            resume(connection)
        }
    }

    /// The home sent a join back: the room moved; the edge looks again.
    func reroute(_ payload: [UInt8], for conn: UInt64, from node: NodeID) {
        guard let connection = client(conn, of: node), !connection.isClosing else { return }
        let route = connection.route
        routed.removeValue(forKey: conn)
        route.home = nil
        route.unacked = InFlight()
        route.reroutes += 1
        if route.reroutes > Self.maxReroutes {
            dispatcher.handle(payload, from: connection)  // answers 5003: the room keeps moving
        } else {
            inbound(payload, on: connection)
        }
    }

    // MARK: takeover

    /// The home node `dead` left (or restarted: its new run knows nothing of
    /// the old one's rooms and clients): its rooms are looked up again, each
    /// joined client to be attached to its peer at the room's new home.
    /// What its clients sent it and saw no answer to is answered now (PROTOCOL.md
    /// section 18, 1.2): a joined client's calls get 5003 (their outcome is
    /// unknown: the client may send them again); a `join` not answered yet
    /// is routed again, and waits out the takeover like any new join.
    func homeLost(_ dead: NodeID, reason: String) {
        thread.assertIsCurrent()
        let orphans = routed.values.filter { $0.edge?.home?.node == dead }
        if !orphans.isEmpty {
            logger.warning(
                "cluster: a room's home node \(reason): taking its rooms over",
                metadata: ["node": "\(dead)", "connections": "\(orphans.count)"]
            )
        }
        for connection in orphans {
            let route = connection.route
            let room = route.home!.room
            routed.removeValue(forKey: UInt64(connection.id))
            route.home = nil
            let unanswered = route.unacked.takeAll()
            if route.pausedForHome {
                route.pausedForHome = false
                resume(connection)
            }
            if connection.isClosing { continue }
            guard connection.hasJoined else {
                for message in unanswered { inbound(message, on: connection) }
                continue
            }
            for message in unanswered { answerUnavailable(message, on: connection, "the call was in flight") }
            guard route.remotePeerID != nil else { continue }
            route.takingOver = true
            route.resolvingRoom = room
            lookUp(room, claim: true, for: connection)
        }
    }

    // MARK: a drain

    /// The home `old` drains and handed `room` over (a `moved` record): its
    /// clients here are attached to their peers at the room's new home, and
    /// what `old` did not acknowledge — it answered none of it — goes there,
    /// in order, before anything they send next. `adopt`: claim the room
    /// even with no client here (the old home chose this node).
    func moved(_ room: RoomID, adopt: Bool, from old: NodeID) {
        thread.assertIsCurrent()
        let movers = routed.values.filter { $0.edge?.home?.node == old && $0.edge?.home?.room == room }
        if !movers.isEmpty {
            logger.info(
                "cluster: a room's home drained: its clients here follow it to the new home",
                metadata: [
                    "room": "\(room)", "node": "\(old)", "connections": "\(movers.count)",
                    "unanswered": "\(movers.reduce(0) { $0 + $1.route.unacked.count })",
                ]
            )
        }
        for connection in movers {
            let route = connection.route
            routed.removeValue(forKey: UInt64(connection.id))
            route.home = nil
            let unanswered = route.unacked.takeAll()
            route.pausedForHome = false
            if connection.isClosing { continue }
            guard connection.hasJoined, route.remotePeerID != nil else {
                resume(connection)
                for message in unanswered { inbound(message, on: connection) }  // a join: routed again
                continue
            }
            route.takingOver = true
            route.resolvingRoom = room
            route.awaitingRoute = unanswered + route.awaitingRoute
            if route.awaitingRoute.isEmpty { resume(connection) } else { connection.pauseReading() }
            lookUp(room, claim: true, for: connection)
        }
        let key = Self.lookupKey(room, claim: true)
        if adopt, !draining, resolving[key] == nil {
            resolving[key] = []
            jobs.resolve(room, claim: true)
        }
    }

    /// On a draining node: its own client of `room`, which was homed here and
    /// is being handed over, waits (not read) for the room's new home.
    func handOver(_ connection: Connection, peer: String, room: RoomID) {
        thread.assertIsCurrent()
        let route = connection.route
        route.remotePeerID = peer
        route.takingOver = true
        route.resolvingRoom = room
        connection.pauseReading()
    }

    /// `room` is handed over: this node's own clients of it look for its new home.
    func findNewHome(_ room: RoomID, for connections: [Connection]) {
        thread.assertIsCurrent()
        for connection in connections where !connection.isClosing && connection.route.resolvingRoom == room {
            lookUp(room, claim: true, for: connection)
        }
    }

    /// A connection that waited for a room kept by this draining node (its
    /// state could not be saved): nothing more is sent for it.
    func abandon(_ connection: Connection) {
        let route = connection.route
        route.resolvingRoom = nil
        route.takingOver = false
        route.awaitingRoute = []
    }

    /// Whether `connection` waits for nothing from another node (a drain closes it then).
    func isIdle(_ connection: Connection) -> Bool {
        guard let route = connection.edge else { return true }
        return route.resolvingRoom == nil && route.awaitingRoute.isEmpty && route.unacked.count == 0
    }

    /// A joined client whose room's home died: attached to its peer at the new home.
    private func takeOver(_ connection: Connection, room roomID: RoomID, _ found: RoomHome) {
        let peerID = connection.route.remotePeerID ?? ""
        switch found {
        case .here:
            guard let room = registry.room(roomID), let peer = room.peer(PeerID(peerID)), peer.graceDeadline != nil
            else {
                giveUp(connection)
                return
            }
            home.bind(peer, to: connection)
        case .node(let other):
            connection.route.home = (other, roomID)
            routed[UInt64(connection.id)] = connection
            outboxes.outbox(other).append(.attach(conn: UInt64(connection.id), peer: peerID, room: roomID.rawValue))
        case .nowhere, .unavailable:
            giveUp(connection)
        }
    }

    /// The room could not be taken over (its home died before its state was
    /// first saved, or the bus failed): what the client sent meanwhile is
    /// answered 5003, then it is closed with 1001 and joins again (a new session).
    private func giveUp(_ connection: Connection) {
        let route = connection.route
        if draining {
            // Every node drains (a full stop): the room's state is saved; its client resumes after the restart.
            route.awaitingRoute = []
            connection.close(1012)
            return
        }
        for message in route.awaitingRoute {
            answerUnavailable(message, on: connection, "the room was lost with its home")
        }
        route.awaitingRoute = []
        logger.info(
            "cluster: a room could not be taken over: closing its client (1001, join again)",
            metadata: connection.logMetadata
        )
        connection.close(1001)
    }

    /// Answers every call of `message` with 5003 (notifications get `on-error`).
    private func answerUnavailable(_ message: [UInt8], on connection: Connection, _ why: String) {
        let error = RoomError(
            .clusterUnavailable,
            "cluster unavailable: the room's home node was lost and \(why); "
                + "its outcome is unknown, send it again"
        )
        metrics.failed(error.code)
        for frame in Envelope.failures(of: message, error) {
            connection.enqueue(frame, bypassingDeferral: true, enforcingLimit: false)
        }
    }
}
