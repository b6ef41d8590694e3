import Logging
import RoomCluster
import RoomModel

/// The way back to a client of another node, as its room's home serves it:
/// the `RemoteSink` of the home's `Connection` for that client.
final class RemoteLink: RemoteSink {
    let node: NodeID
    let conn: UInt64
    private unowned let home: Home
    /// The batch for `node`, once looked up: a push to many of that node's
    /// clients appends to it once per client without hashing the node id
    /// each time (outboxes live as long as the router).
    var outbox: Outbox?
    /// Messages of this client handled since the last acknowledgement.
    var handledSinceAck = 0
    /// Messages that arrived while its room was paused by flow control,
    /// handled once it resumes.
    var heldWhilePaused: [[UInt8]] = []

    init(node: NodeID, conn: UInt64, home: Home) {
        self.node = node
        self.conn = conn
        self.home = home
    }

    func send(_ frame: Frame, enforcingLimit: Bool) { home.send(frame, to: self, enforcingLimit: enforcingLimit) }
    func close(code: UInt16) { home.outboxes.outbox(node).append(.close(conn: conn, code: code)) }
    func joined(peerID: String) { home.outboxes.outbox(node).append(.joined(conn: conn, peer: peerID)) }
}

/// A client of another node served here: its connection and the way back.
struct RemoteClient {
    let connection: Connection
    let link: RemoteLink
}

/// A room's home node in a cluster (docs/CLUSTER.md): it runs the messages
/// of other nodes' clients on a `Connection` of its own per client, exactly
/// as for a local client — the same dispatcher, rate limit, error streak,
/// order — and what it queues to that connection goes back to the client's
/// node. Handled messages are acknowledged once per turn of the loop, in the
/// node message that carries their answers; while the client's room is
/// paused by flow control its messages wait here unhandled and
/// unacknowledged, so its node stops reading it once its window is full.
///
/// Its service thread's only, its `RemoteLink`s too (checked in debug builds).
final class Home {
    private let thread: ServiceThread
    let outboxes: NodeOutboxes
    private let homes: RoomHomes
    private let jobs: ClusterJobs
    private let dispatcher: Dispatcher
    private let fanOut: FanOut
    private let registry: RoomRegistry
    private let flow: FlowControl
    private let sockets: Sockets
    private let clock: RoomClock
    private let logger: Logger
    /// Other nodes' clients served here, by node, then connection id.
    private var remotes: [NodeID: [UInt64: RemoteClient]] = [:]
    /// Clients with handled messages to acknowledge at the next flush.
    private var ackDue: [RemoteClient] = []
    /// Clients with messages held while their room was paused.
    private var held: [RemoteClient] = []
    /// Attaches that arrived while this node was claiming their room (it won
    /// the lease and is loading the saved state; a large state takes a
    /// while), with the messages their clients sent after them: answered, in
    /// order, once the claim settles. At most one attach per connection; its
    /// messages are bounded like any client's in flight (the edge's window).
    private var parkedAttaches: [RoomID: [ParkedKey]] = [:]
    private var parked: [ParkedKey: ParkedAttach] = [:]
    private struct ParkedKey: Hashable {
        var node: NodeID
        var conn: UInt64
    }
    private struct ParkedAttach {
        var peer: String
        var messages: [[UInt8]] = []
    }
    /// Whether this node is claiming `room` now (the router's edge knows).
    var isClaiming: (RoomID) -> Bool = { _ in false }
    /// This node drains (Drain.swift): the rooms being handed over, and those
    /// handed over. A message of a client it forgot is not answered here (its
    /// node sends it again to the room's new home); a join of a room being
    /// handed over waits, then is sent back to be routed to the new home.
    var draining = false
    private(set) var handingOver: Set<RoomID> = []
    private var handedOverRooms: Set<RoomID> = []
    private var drainParked: [RoomID: [(node: NodeID, conn: UInt64, payload: [UInt8])]] = [:]

    init(
        thread: ServiceThread,
        outboxes: NodeOutboxes,
        homes: RoomHomes,
        jobs: ClusterJobs,
        dispatcher: Dispatcher,
        fanOut: FanOut,
        registry: RoomRegistry,
        flow: FlowControl,
        sockets: Sockets,
        clock: RoomClock,
        logger: Logger
    ) {
        self.thread = thread
        self.outboxes = outboxes
        self.homes = homes
        self.jobs = jobs
        self.dispatcher = dispatcher
        self.fanOut = fanOut
        self.registry = registry
        self.flow = flow
        self.sockets = sockets
        self.clock = clock
        self.logger = logger
        outboxes.beforeSending = { [unowned self] node, box in acknowledge(to: node, in: box) }
        // A message that waited for a hook (section 30) is acknowledged once answered: until
        // then the edge keeps it, and sends it again to a new home if this one dies meanwhile.
        dispatcher.handledLater = { [unowned self] connection, count in
            guard case .remote(let sink) = connection.sink, let link = sink as? RemoteLink,
                let client = remotes[link.node]?[link.conn], client.connection === connection
            else { return }
            handled(count, from: client)
        }
    }

    /// Every connection served here for another node's client.
    var remoteConnections: [Connection] { remotes.values.flatMap { $0.values.map(\.connection) } }

    private func remoteClient(_ node: NodeID, _ conn: UInt64) -> RemoteClient {
        if let client = remotes[node]?[conn] { return client }
        let limits = registry.settings.limits
        let link = RemoteLink(node: node, conn: conn, home: self)
        let connection = Connection(
            sink: .remote(link),
            id: sockets.makeID(),
            maxQueuedBytes: .max,
            rate: TokenBucket(rate: limits.messagesPerSecond, burst: limits.messageBurst, nowMillis: clock.nowMillis()),
            now: monotonicMillis()
        )
        let client = RemoteClient(connection: connection, link: link)
        remotes[node, default: [:]][conn] = client
        return client
    }

    /// Whether a call of `room` waits for its hook here (section 30).
    func waitsForHook(in room: RoomID) -> Bool { dispatcher.hooks?.waits(in: room) ?? false }

    // MARK: what goes back to an edge

    func send(_ frame: Frame, to link: RemoteLink, enforcingLimit: Bool) {
        if enforcingLimit {
            let box: Outbox
            if let cached = link.outbox, cached.writer.bytes.count < NodeOutboxes.flushBytes {
                box = cached
            } else {
                box = outboxes.outbox(link.node)
                link.outbox = box
            }
            box.append(frame, for: link.conn)
        } else {
            var bytes: [UInt8] = []
            frame.append(to: &bytes)
            outboxes.outbox(link.node).append(.replay(conn: link.conn, bytes: bytes))
        }
    }

    // MARK: records from a client's node

    /// A message of a client of `node`.
    func data(_ payload: [UInt8], conn: UInt64, from node: NodeID) {
        thread.assertIsCurrent()
        if parked[ParkedKey(node: node, conn: conn)] != nil {
            // After its attach, once the claim settles.
            parked[ParkedKey(node: node, conn: conn)]?.messages.append(payload)
            return
        }
        let known = remotes[node]?[conn]
        let target = known?.connection.hasJoined == true ? nil : JoinTarget.of(payload, verifier: dispatcher.verifier)
        if draining, known == nil {
            guard let target else { return }  // a client of a room handed over: unanswered here, sent again there
            if handingOver.contains(target.room) {
                drainParked[target.room, default: []].append((node, conn, payload))
                return
            }
            if handedOverRooms.contains(target.room) {
                outboxes.outbox(node).append(.reroute(conn: conn, bytes: payload))
                return
            }
        }
        if known == nil, target == nil {
            // Not a new client (its first message joins or previews): one this node
            // forgot (it counted the edge out for a while). Its client joins again.
            outboxes.outbox(node).append(.close(conn: conn, code: 1001))
            return
        }
        let client = remoteClient(node, conn)
        if !client.connection.hasJoined, let target, target.joins, !homes.isHome(of: target.room) {
            if jobs.keep(target.room) {
                homes.claimed(target.room)  // it ended a moment ago: the lease was not given back yet
            } else {
                // The room moved (another node took it over): the edge looks again.
                outboxes.outbox(node).append(.reroute(conn: conn, bytes: payload))
                return
            }
        }
        if client.connection.flowState.pausedRoom != nil || !client.link.heldWhilePaused.isEmpty {
            // Its room is paused by flow control: as lws stops reading a local
            // client, the home stops handling this one's messages. They wait
            // here (at most the edge's window: acknowledgements are withheld)
            // and are handled in order once the room resumes (`flushAcknowledgements`).
            if client.link.heldWhilePaused.isEmpty { held.append(client) }
            client.link.heldWhilePaused.append(payload)
            return
        }
        handle(payload, from: client)
    }

    /// The client's queue on its node is behind while its kernel takes every
    /// byte: it counts towards pausing its room here, as a local one would.
    func congested(_ conn: UInt64, from node: NodeID) {
        thread.assertIsCurrent()
        guard let connection = remotes[node]?[conn]?.connection, !connection.isClosing,
            connection.flowState.congestedRoom == nil, !connection.flowState.excused
        else { return }
        flow.congested(connection, now: monotonicMillis())
    }

    func drained(_ conn: UInt64, from node: NodeID) {
        thread.assertIsCurrent()
        guard let connection = remotes[node]?[conn]?.connection else { return }
        connection.flowState.excused = false
        flow.drained(connection)
    }

    /// The client's connection closed on its node: its peer enters the grace.
    func lost(_ conn: UInt64, from node: NodeID) {
        thread.assertIsCurrent()
        parked.removeValue(forKey: ParkedKey(node: node, conn: conn))
        guard let client = remotes[node]?.removeValue(forKey: conn) else { return }
        client.connection.hookWait = nil  // a call waiting for its hook has nobody to answer now
        flow.forget(client.connection)
        fanOut.connectionLost(client.connection)
    }

    /// A client of a room taken over here asks for its peer again.
    func attach(_ conn: UInt64, peer peerID: String, room roomID: RoomID, from node: NodeID) {
        thread.assertIsCurrent()
        let key = ParkedKey(node: node, conn: conn)
        if registry.room(roomID) == nil, isClaiming(roomID), parked[key] == nil {
            parkedAttaches[roomID, default: []].append(key)
            parked[key] = ParkedAttach(peer: peerID)
            return
        }
        let connection = remoteClient(node, conn).connection
        // A peer waiting for its client, or still bound to this very edge (the edge
        // counted this node out for a moment: the room never moved).
        let sameEdge = { (peer: Peer) in
            guard let bound = peer.endpoint?.connection, case .remote(let sink) = bound.sink else {
                return false
            }
            return (sink as? RemoteLink)?.node == node
        }
        guard homes.isHome(of: roomID), let room = registry.room(roomID), let peer = room.peer(PeerID(peerID)),
            peer.graceDeadline != nil || sameEdge(peer)
        else {
            logger.info(
                "cluster: a client of a room taken over is not in it: closing (1001, join again)",
                metadata: ["room": "\(roomID)", "peer": "\(peerID)", "node": "\(node)"]
            )
            connection.close(1001)
            return
        }
        bind(peer, to: connection)
    }

    /// This node's claim of `room` settled (restored here, or homed
    /// elsewhere): the attaches that waited for it are answered.
    func claimSettled(_ room: RoomID) {
        thread.assertIsCurrent()
        guard let parked = parkedAttaches.removeValue(forKey: room) else { return }
        for key in parked {
            guard let waiting = self.parked.removeValue(forKey: key) else { continue }  // its client left meanwhile
            attach(key.conn, peer: waiting.peer, room: room, from: key.node)
            for message in waiting.messages { data(message, conn: key.conn, from: key.node) }
        }
    }

    /// A restored peer takes up a client connection again (local or remote):
    /// what was pushed to it meanwhile follows.
    func bind(_ peer: Peer, to connection: Connection) {
        thread.assertIsCurrent()
        let held = peer.endpoint?.held
        if let previous = peer.endpoint?.connection, previous !== connection {
            previous.peer = nil  // the same client's earlier link from the same edge
            if case .remote(let sink) = previous.sink, let link = sink as? RemoteLink {
                remotes[link.node]?.removeValue(forKey: link.conn)
            }
        }
        peer.endpoint = connection
        connection.peer = peer
        connection.markJoined()
        registry.reattach(peer)
        for frame in held?.frames ?? [] { connection.enqueue(frame, bypassingDeferral: true, enforcingLimit: false) }
        logger.info("cluster: peer attached after a takeover", metadata: connection.logMetadata)
    }

    // MARK: a drain (Drain.swift)

    /// `room` is being handed over: its clients of other nodes are forgotten
    /// here without a word (their messages not acknowledged yet are sent to
    /// the new home by their nodes, which the `moved` record tells).
    func handOver(_ room: RoomID, clients links: [RemoteLink]) {
        thread.assertIsCurrent()
        handingOver.insert(room)
        for link in links {
            guard let client = remotes[link.node]?.removeValue(forKey: link.conn) else { continue }
            flow.forget(client.connection)
        }
    }

    /// `room` is handed over (or kept: `moved` false): the joins that waited are sent back.
    func handedOver(_ room: RoomID, moved: Bool) {
        thread.assertIsCurrent()
        handingOver.remove(room)
        guard moved else { return }
        handedOverRooms.insert(room)
        for parked in drainParked.removeValue(forKey: room) ?? [] {
            outboxes.outbox(parked.node).append(.reroute(conn: parked.conn, bytes: parked.payload))
        }
    }

    /// Every client of `node` served here is gone (the node died or restarted):
    /// their peers enter the reconnect grace, as if their sockets closed.
    func forgetClients(of node: NodeID, reason: String) {
        thread.assertIsCurrent()
        parked = parked.filter { $0.key.node != node }
        guard let lost = remotes.removeValue(forKey: node), !lost.isEmpty else { return }
        logger.notice(
            "cluster: \(reason): its clients' peers enter the reconnect grace",
            metadata: ["node": "\(node)", "connections": "\(lost.count)"]
        )
        for client in lost.values {
            client.connection.hookWait = nil  // nobody to answer a call waiting for its hook
            flow.forget(client.connection)
            fanOut.connectionLost(client.connection)
        }
    }

    // MARK: acknowledgements

    /// A message of another node's client, handled here like a local one's.
    private func handle(_ payload: [UInt8], from client: RemoteClient) {
        if dispatcher.handle(payload, from: client.connection) { handled(1, from: client) }
    }

    /// `count` messages of the client answered: acknowledged at the next flush.
    private func handled(_ count: Int, from client: RemoteClient) {
        client.link.handledSinceAck += count
        if client.link.handledSinceAck == count { ackDue.append(client) }
    }

    /// Before the turn's batches leave: what waited for a paused room is
    /// handled once it runs again, and every message handled is acknowledged.
    /// An acknowledgement travels in the same node message as the answers it
    /// covers (a batch that leaves early, grown past `flushBytes`, carries
    /// the acknowledgements due so far: `acknowledge(to:in:)`), so a client's
    /// node knows which calls were answered if this node dies (Edge.homeLost).
    /// A paused room's clients are held back by their messages waiting here
    /// unhandled (`heldWhilePaused`), which fills their node's window.
    func flushAcknowledgements() {
        thread.assertIsCurrent()
        if !held.isEmpty { handleHeld() }
        guard !ackDue.isEmpty else { return }
        for client in ackDue where client.link.handledSinceAck > 0 {
            // Looking the batch up may send it first (grown past the limit): then
            // `acknowledge(to:in:)` put this client's acknowledgement in it already.
            let box = outboxes.outbox(client.link.node)
            guard client.link.handledSinceAck > 0 else { continue }
            box.append(.ack(conn: client.link.conn, count: UInt64(client.link.handledSinceAck)))
            client.link.handledSinceAck = 0
        }
        ackDue = []
    }

    /// A batch for `node` leaves: the acknowledgements due to its clients go with it.
    private func acknowledge(to node: NodeID, in box: Outbox) {
        guard ackDue.contains(where: { $0.link.node == node }) else { return }
        var others: [RemoteClient] = []
        for client in ackDue {
            guard client.link.node == node else {
                others.append(client)
                continue
            }
            guard client.link.handledSinceAck > 0 else { continue }
            box.append(.ack(conn: client.link.conn, count: UInt64(client.link.handledSinceAck)))
            client.link.handledSinceAck = 0
        }
        ackDue = others
    }

    /// Handles, in order, what remote clients sent while their room was
    /// paused, for those whose room runs again (until it pauses again).
    private func handleHeld() {
        var still: [RemoteClient] = []
        for client in held {
            let link = client.link
            guard remotes[link.node]?[link.conn]?.connection === client.connection, !client.connection.isClosing else {
                link.heldWhilePaused = []  // gone meanwhile
                continue
            }
            var next = 0
            while client.connection.flowState.pausedRoom == nil, next < link.heldWhilePaused.count {
                handle(link.heldWhilePaused[next], from: client)
                next += 1
            }
            link.heldWhilePaused.removeFirst(next)
            if !link.heldWhilePaused.isEmpty { still.append(client) }
        }
        held = still
    }
}
