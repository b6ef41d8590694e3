import CWebSockets
import Foundation
import Logging
import RoomCluster
import RoomModel
import RoomWire

/// A client connection of another node, as its room's home serves it.
final class RemoteLink {
    let node: String
    let conn: UInt64
    unowned let router: ClusterRouter
    /// The batch for `node`, once looked up: a push to many of that node's
    /// clients appends to it once per client without hashing the node id
    /// each time (outboxes live as long as the router).
    var outbox: Outbox?

    init(node: String, conn: UInt64, router: ClusterRouter) {
        self.node = node
        self.conn = conn
        self.router = router
    }
}

/// The service thread's side of the cluster (docs/CLUSTER.md): which rooms
/// this node is the home of, where the rooms of the other clients live,
/// and the records going to and coming from other nodes.
///
/// A client's node (the edge) reads and frames its messages and looks its
/// room up by the token of its `join` (or `preview`); when another node is
/// the room's home, every message of the connection goes there. The home
/// runs them on a `Connection` of its own (`RemoteLink`) exactly as for a
/// local client — the same dispatcher, rate limit, error streak, order —
/// and what it queues to that connection goes back to the edge: a push to
/// several clients of one node is one record. Records are batched per node
/// for one turn of the loop and sent by `flush()`.
///
/// Runs on the service thread only, like the rest of `RoomServer`.
final class ClusterRouter {
    unowned let server: RoomServer
    let cluster: RoomCluster
    let jobs: ClusterJobs
    let node: String
    var logger: Logger { server.logger }

    /// Rooms this node is the home of (it holds their lease).
    private(set) var homed: Set<String> = []
    /// Lookups under way (`lookupKey`), with the connections waiting for them.
    private var resolving: [String: [Connection]] = [:]

    /// A lookup of `room`, one that may claim it or one that may not.
    private static func lookupKey(_ room: String, claim: Bool) -> String { "\(claim)|\(room)" }
    /// This node's clients whose room lives on another node, by connection id.
    private var routed: [UInt64: Connection] = [:]
    /// Other nodes' clients served here, by node, then connection id.
    private var remotes: [String: [UInt64: Connection]] = [:]
    /// The incarnation each node's messages last came from.
    private var incarnations: [String: String] = [:]
    private var outboxes: [String: Outbox] = [:]
    /// The other service threads of this process, by node id
    /// (`RoomServer.linkSiblings`): their records go to their inbox directly.
    var siblings: [String: RoomServer] = [:]
    private var lastSendError: Int64 = 0
    /// HTTP requests waiting for the bus, by serial.
    private var pendingHTTP: [Int: (wsi: OpaquePointer, request: HTTPRequest)] = [:]
    private var nextSerial = 0
    private var alive: [String] = []
    /// Rooms homed here that changed since their state was last saved, and what was saved.
    private var dirty: Set<String> = []
    private var lastSaved: [String: [UInt8]] = [:]
    private var oversized: Set<String> = []
    /// Remote connections with handled messages to acknowledge at the next flush.
    private var ackDue: [Connection] = []
    /// Remote connections with messages held while their room was paused.
    private var held: [Connection] = []

    /// A restored room's peers wait at least this long for their clients to attach.
    static let takeoverGraceMillis: Int64 = 5_000
    /// Times one connection's join is sent back to be routed again before it is answered 5003.
    static let maxReroutes = 3
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
    /// A batch is sent when it grows past this (NATS' default payload limit is 1 MiB).
    static let flushBytes = 256 * 1024

    init(server: RoomServer, cluster: RoomCluster, jobs: ClusterJobs) {
        self.server = server
        self.cluster = cluster
        self.jobs = jobs
        self.node = cluster.config.nodeID
    }

    func isHome(of room: String) -> Bool { homed.contains(room) }

    // MARK: the edge: a client's message

    /// A complete message from a client of this node.
    func inbound(_ message: [UInt8], on connection: Connection) {
        if connection.resolvingRoom != nil {
            hold(message, on: connection)
            return
        }
        if connection.hasJoined {
            if let home = connection.home { forward(message, from: connection, to: home.node) } else {
                server.dispatcher.handle(message, from: connection)
            }
            return
        }
        // Not joined: a join or preview decides where the connection's room lives.
        if let target = target(of: message) {
            if let home = connection.home, home.room == target.room {
                forward(message, from: connection, to: home.node)
                return
            }
            if let home = connection.home {  // another room now: leave the old home
                outbox(home.node).append(.lost(conn: UInt64(connection.id)))
                routed.removeValue(forKey: UInt64(connection.id))
                connection.home = nil
            }
            if homed.contains(target.room) || (!target.joins && connection.homelessRoom == target.room)
                || server.clusterStatus?.connected != true {
                server.dispatcher.handle(message, from: connection)  // a join while the bus is down answers 5003
                return
            }
            connection.resolvingRoom = target.room
            hold(message, on: connection)
            let key = Self.lookupKey(target.room, claim: target.joins)
            if resolving[key] != nil {
                resolving[key]!.append(connection)
            } else {
                resolving[key] = [connection]
                jobs.resolve(target.room, claim: target.joins)
            }
            return
        }
        if let home = connection.home {
            forward(message, from: connection, to: home.node)
        } else {
            server.dispatcher.handle(message, from: connection)
        }
    }

    /// Sends a client's message to its room's home; a client too far ahead
    /// of the home's acknowledgements is not read until it catches up.
    private func forward(_ message: [UInt8], from connection: Connection, to home: String) {
        outbox(home).append(.data(conn: UInt64(connection.id), bytes: message))
        connection.unacked.sent(message.count)
        if connection.unacked.count >= Self.maxUnacked || connection.unacked.bytes >= Self.maxUnackedBytes,
           !connection.pausedForHome {
            connection.pausedForHome = true
            lws_rx_flow_control(connection.wsi, 0)
        }
    }

    private func hold(_ message: [UInt8], on connection: Connection) {
        if connection.awaitingRoute.count >= Self.maxAwaiting {
            logger.info("too many messages before the room was found, closing", metadata: server.metadata(connection))
            connection.close(1008)
            return
        }
        connection.awaitingRoute.append(message)
        if connection.awaitingRoute.count == 1 { lws_rx_flow_control(connection.wsi, 0) }
    }

    /// The room a message's `join` (or else `preview`) names through its
    /// token, when the token is valid (an invalid one is answered here:
    /// every node gives the same error).
    private func target(of message: [UInt8]) -> (room: String, joins: Bool)? {
        guard let json = try? JSON.parse(message) else { return nil }
        let calls: [JSON] = if case .array(let batch) = json { Array(batch.prefix(Dispatcher.maxBatch)) } else { [json] }
        var found: (room: String, joins: Bool)?
        for call in calls {
            guard let method = call["method"]?.stringValue, method == "join" || method == "preview",
                  let token = call["params"]?["token"]?.stringValue,
                  let grant = try? server.dispatcher.verifier.verifyApp(token)
            else { continue }
            if found == nil { found = (grant.roomID, method == "join") } else if method == "join" { found!.joins = true }
        }
        return found
    }

    /// A lookup ended: the waiting connections go on.
    private func resolved(_ room: String, claim: Bool, _ home: RoomHome) {
        let waiting = resolving.removeValue(forKey: Self.lookupKey(room, claim: claim)) ?? []
        if home == .here { homed.insert(room) }
        for connection in waiting where connection.resolvingRoom == room && !connection.isClosing {
            connection.resolvingRoom = nil
            lws_rx_flow_control(connection.wsi, 1)
            if connection.takingOver {
                connection.takingOver = false
                takeOver(connection, room: room, home: home)
                if connection.isClosing { continue }
            } else {
                switch home {
            case .node(let other):
                connection.home = (other, room)
                routed[UInt64(connection.id)] = connection
            case .nowhere:
                connection.homelessRoom = room  // for the queued messages only (below)
            case .here, .unavailable:
                break  // handled here; a join of a room not homed here answers 5003
            }
            }
            let queued = connection.awaitingRoute
            connection.awaitingRoute = []
            for (index, message) in queued.enumerated() {
                if home == .unavailable, connection.home == nil {
                    server.dispatcher.handle(message, from: connection)
                } else {
                    inbound(message, on: connection)
                }
                if connection.resolvingRoom != nil {  // another lookup: the rest waits for it
                    connection.awaitingRoute.append(contentsOf: queued[(index + 1)...])
                    break
                }
            }
            connection.homelessRoom = nil  // a later preview looks again: the room may have a home by then
        }
    }

    /// A client connection of this node closed.
    func connectionClosed(_ connection: Connection) {
        guard let home = connection.home else { return }
        if routed.removeValue(forKey: UInt64(connection.id)) != nil {
            outbox(home.node).append(.lost(conn: UInt64(connection.id)))
        }
    }

    // MARK: the home: what goes back to an edge

    func send(_ frame: Frame, to link: RemoteLink, enforcingLimit: Bool = true) {
        if enforcingLimit {
            let box: Outbox
            if let cached = link.outbox, cached.writer.bytes.count < Self.flushBytes {
                box = cached
            } else {
                box = outbox(link.node)
                link.outbox = box
            }
            box.append(frame, for: link.conn)
        } else {
            var bytes: [UInt8] = []
            frame.append(to: &bytes)
            outbox(link.node).append(.replay(conn: link.conn, bytes: bytes))
        }
    }

    func close(_ link: RemoteLink, code: UInt16) {
        outbox(link.node).append(.close(conn: link.conn, code: code))
    }

    func joined(_ link: RemoteLink, peer: String) {
        outbox(link.node).append(.joined(conn: link.conn, peer: peer))
    }

    private func remoteConnection(_ node: String, _ conn: UInt64) -> Connection {
        if let connection = remotes[node]?[conn] { return connection }
        let limits = server.options.template.settings.limits
        let connection = Connection(
            remote: RemoteLink(node: node, conn: conn, router: self), id: server.nextID(),
            rate: TokenBucket(rate: limits.messagesPerSecond, burst: limits.messageBurst, nowMillis: server.clock.nowMillis()),
            now: monotonicMillis())
        remotes[node, default: [:]][conn] = connection
        return connection
    }

    /// Every client of `node` served here is gone (the node died or restarted):
    /// their peers enter the reconnect grace, as if their sockets closed.
    private func forgetClients(of node: String, reason: String) {
        guard let lost = remotes.removeValue(forKey: node), !lost.isEmpty else { return }
        logger.notice("cluster: \(reason): its clients' peers enter the reconnect grace",
                      metadata: ["node": "\(node)", "connections": "\(lost.count)"])
        for connection in lost.values {
            server.flow.forget(connection)
            server.dispatcher.connectionLost(connection)
        }
    }

    // MARK: the bus

    func handle(_ event: ClusterEvent) {
        switch event {
        case .message(let bytes): received(bytes)
        case .request(let bytes, let reply): answer(bytes, reply: reply)
        case .resolved(let room, let claim, let home, let snapshot):
            if home == .here, let snapshot { restore(room, from: snapshot) }
            resolved(room, claim: claim, home)
        case .leaseLost(let room): leaseLost(room)
        case .restAnswer(let serial, let response): finishHTTP(serial, response)
        case .restLocal(let serial):
            if let pending = pendingHTTP[serial] { finishHTTP(serial, server.route(pending.request)) }
        case .restList(let serial, let pages):
            guard let pending = pendingHTTP[serial] else { return }
            let local = server.route(pending.request)
            let limit = pending.request.query["limit"].flatMap(Int.init) ?? RestAPI.defaultListLimit
            finishHTTP(serial, local.status == 200 ? ForwardedHTTP.mergeLists([local.body] + pages, limit: limit) : local)
        }
    }

    private func received(_ bytes: [UInt8]) {
        guard let message = ClusterMessage.decode(bytes) else {
            logger.warning("cluster: malformed node message dropped", metadata: ["bytes": "\(bytes.count)"])
            return
        }
        let from = message.node
        if from == node { return }
        if let known = incarnations[from], known != message.incarnation {
            forgetClients(of: from, reason: "node restarted")
        }
        incarnations[from] = message.incarnation
        for record in message.records {
            switch record {
            case .data(let conn, let payload):
                if remotes[from]?[conn] == nil, target(of: payload) == nil {
                    // Not a new client (its first message joins or previews): one this node
                    // forgot (it counted the edge out for a while). Its client joins again.
                    outbox(from).append(.close(conn: conn, code: 1001))
                    continue
                }
                let connection = remoteConnection(from, conn)
                if !connection.hasJoined, let target = target(of: payload), target.joins, !homed.contains(target.room) {
                    if jobs.keep(target.room) {
                        homed.insert(target.room)  // it ended a moment ago: the lease was not given back yet
                    } else {
                        // The room moved (another node took it over): the edge looks again.
                        outbox(from).append(.reroute(conn: conn, bytes: payload))
                        continue
                    }
                }
                if connection.pausedRoom != nil || !connection.heldWhilePaused.isEmpty {
                    // Its room is paused by flow control: as lws stops reading a local
                    // client, the home stops handling this one's messages. They wait
                    // here (at most the edge's window: acknowledgements are withheld)
                    // and are handled in order once the room resumes (`flush`).
                    if connection.heldWhilePaused.isEmpty { held.append(connection) }
                    connection.heldWhilePaused.append(payload)
                    continue
                }
                handleRemote(payload, on: connection)
            case .congested(let conn):
                // The client's queue on its node is behind while its kernel takes every
                // byte: it counts towards pausing its room here, as a local one would.
                guard let connection = remotes[from]?[conn], !connection.isClosing, connection.congestedRoom == nil,
                      !connection.excusedFromFlow else { continue }
                server.flow.congested(connection, now: monotonicMillis())
            case .drained(let conn):
                guard let connection = remotes[from]?[conn] else { continue }
                connection.excusedFromFlow = false
                server.flow.drained(connection)
            case .lost(let conn):
                if let connection = remotes[from]?.removeValue(forKey: conn) {
                    server.flow.forget(connection)
                    server.dispatcher.connectionLost(connection)
                }
            case .frame(let conns, let payload):
                let frame = Frame(wire: payload)
                for conn in conns {
                    guard let connection = routed[conn], connection.home?.node == from else { continue }
                    if !connection.enqueue(frame), connection.isDroppedAsSlow {
                        logger.info("slow consumer dropped", metadata: server.metadata(connection))
                        server.metrics.slowConsumerCloses.increment()
                        connectionClosed(connection)  // its peer goes now, not when the socket closes
                    }
                }
            case .close(let conn, let code):
                if let connection = routed[conn], connection.home?.node == from { connection.close(code) }
            case .joined(let conn, let peer):
                if let connection = routed[conn], connection.home?.node == from {
                    connection.hasJoined = true
                    connection.remotePeerID = peer
                }
            case .attach(let conn, let peerID, let roomID):
                let connection = remoteConnection(from, conn)
                // A peer waiting for its client, or still bound to this very edge (the edge
                // counted this node out for a moment: the room never moved).
                let sameEdge = { (peer: Peer) in (peer.transportHandle as? Connection)?.remote?.node == from }
                guard homed.contains(roomID), let room = server.registry.room(roomID), let peer = room.peer(peerID),
                      peer.graceDeadline != nil || sameEdge(peer)
                else {
                    logger.info("cluster: a client of a room taken over is not in it: closing (1001, join again)",
                                metadata: ["room": "\(roomID)", "peer": "\(peerID)", "node": "\(from)"])
                    connection.close(1001)
                    continue
                }
                bind(peer, to: connection)
            case .replay(let conn, let payload):
                if let connection = routed[conn], connection.home?.node == from {
                    connection.enqueue(Frame(wire: payload), bypassingDeferral: true, enforcingLimit: false)
                }
            case .ack(let conn, let count):
                guard let connection = routed[conn], connection.home?.node == from else { continue }
                connection.unacked.acknowledged(Int(clamping: count))
                if connection.pausedForHome, connection.unacked.count <= Self.maxUnacked / 2,
                   connection.unacked.bytes <= Self.maxUnackedBytes / 2 {
                    connection.pausedForHome = false
                    if !connection.isClosing { lws_rx_flow_control(connection.wsi, 1) }
                }
            case .reroute(let conn, let payload):
                guard let connection = routed[conn], connection.home?.node == from, !connection.isClosing else { continue }
                routed.removeValue(forKey: conn)
                connection.home = nil
                connection.unacked = InFlight()
                connection.reroutes += 1
                if connection.reroutes > Self.maxReroutes {
                    server.dispatcher.handle(payload, from: connection)  // answers 5003: the room keeps moving
                } else {
                    inbound(payload, on: connection)
                }
            }
        }
    }

    /// The alive nodes changed: clients of nodes that died are gone (their
    /// peers enter the grace); rooms whose home died are taken over: the
    /// nodes with clients in them race to claim the room (one KV create
    /// wins), the winner restores its saved state, and every client is
    /// attached to its peer again there.
    func statusChanged(_ status: ClusterStatus, previous: ClusterStatus?) {
        defer { alive = status.alive }
        guard status.connected, previous?.connected == true else { return }
        let gone = Set(alive).subtracting(status.alive)
        for dead in gone where dead != node {
            forgetClients(of: dead, reason: "node left")
            let orphans = routed.values.filter { $0.home?.node == dead }
            if !orphans.isEmpty {
                logger.warning("cluster: a room's home node left: taking its rooms over",
                               metadata: ["node": "\(dead)", "connections": "\(orphans.count)"])
            }
            for connection in orphans {
                let room = connection.home!.room
                routed.removeValue(forKey: UInt64(connection.id))
                connection.home = nil
                connection.unacked = InFlight()
                if connection.pausedForHome {
                    connection.pausedForHome = false
                    lws_rx_flow_control(connection.wsi, 1)
                }
                guard connection.hasJoined, connection.remotePeerID != nil, !connection.isClosing else { continue }
                connection.takingOver = true
                connection.resolvingRoom = room
                let key = Self.lookupKey(room, claim: true)
                if resolving[key] != nil {
                    resolving[key]!.append(connection)
                } else {
                    resolving[key] = [connection]
                    jobs.resolve(room, claim: true)
                }
            }
        }
    }

    /// A joined client whose room's home died: attached to its peer at the new home.
    private func takeOver(_ connection: Connection, room roomID: String, home: RoomHome) {
        let peerID = connection.remotePeerID ?? ""
        switch home {
        case .here:
            guard let room = server.registry.room(roomID), let peer = room.peer(peerID), peer.graceDeadline != nil else {
                connection.close(1001)
                return
            }
            bind(peer, to: connection)
        case .node(let other):
            connection.home = (other, roomID)
            routed[UInt64(connection.id)] = connection
            outbox(other).append(.attach(conn: UInt64(connection.id), peer: peerID, room: roomID))
        case .nowhere, .unavailable:
            connection.close(1001)
        }
    }

    /// A restored peer takes up a client connection again (local or remote):
    /// what was pushed to it meanwhile follows.
    private func bind(_ peer: Peer, to connection: Connection) {
        let held = peer.transportHandle as? HeldPushes
        if let previous = peer.transportHandle as? Connection, previous !== connection {
            previous.peer = nil  // the same client's earlier link from the same edge
            if let link = previous.remote { remotes[link.node]?.removeValue(forKey: link.conn) }
        }
        peer.transportHandle = connection
        connection.peer = peer
        connection.hasJoined = true
        server.registry.reattach(peer)
        for frame in held?.frames ?? [] { connection.enqueue(frame, bypassingDeferral: true, enforcingLimit: false) }
        logger.info("cluster: peer attached after a takeover", metadata: server.metadata(connection))
    }

    /// This node claimed a room that has a saved state: its previous home
    /// died (or it ended with its node). Every peer waits for its client in
    /// a grace of at least `takeoverGraceMillis`; pushes meanwhile are held.
    private func restore(_ roomID: String, from bytes: [UInt8]) {
        guard server.registry.room(roomID) == nil else { return }
        let snapshot: RoomSnapshot
        do { snapshot = try RoomSnapshot(json: bytes) } catch {
            logger.error("cluster: a room's saved state cannot be read", metadata: ["room": "\(roomID)", "error": "\(error)"])
            return
        }
        let grace = max(Int64(server.options.template.settings.room.reconnectGraceS) * 1000, Self.takeoverGraceMillis)
        guard let room = server.registry.restore(snapshot, graceMillis: grace) else { return }
        for peer in room.peersInJoinOrder { peer.transportHandle = HeldPushes() }
        lastSaved[roomID] = bytes
        server.scheduleGraceExpiry()
        server.schedulePollExpiry()
        logger.notice("cluster: room taken over from its saved state",
                      metadata: ["room": "\(roomID)", "peers": "\(room.peerCount)", "session": "\(room.sessionID)"])
    }

    // MARK: saved room states

    /// Something may have changed in `room` (a call, a REST request, a leave).
    func touch(_ room: String?) {
        if let room, homed.contains(room) { dirty.insert(room) }
    }

    /// A timer changed something somewhere (graces, polls, requests, cues).
    func touchAll() { dirty.formUnion(homed) }

    /// Every 200 ms: the rooms homed here that changed are saved.
    func saveDirtyRooms() {
        guard !dirty.isEmpty else { return }
        for roomID in dirty where homed.contains(roomID) {
            let snapshot: RoomSnapshot
            if let room = server.registry.room(roomID) {
                snapshot = server.registry.snapshot(of: room)
            } else if server.registry.lockedRoomIDs.contains(roomID) {
                snapshot = .lockedOnly(roomID)
            } else {
                continue  // ended: its state goes with its lease (releaseEndedRooms)
            }
            let bytes = snapshot.encodeJSON()
            if bytes == lastSaved[roomID] { continue }
            if bytes.count > Int(RoomStates.maxValueBytes) {
                // An older, smaller state would be restored as if it were current: it goes too.
                if oversized.insert(roomID).inserted {
                    logger.warning("cluster: room state too large to save: a takeover would lose it",
                                   metadata: ["room": "\(roomID)", "bytes": "\(bytes.count)"])
                }
                if lastSaved.removeValue(forKey: roomID) != nil { jobs.saveState(roomID, nil) }
                continue
            }
            if oversized.remove(roomID) != nil {
                logger.info("cluster: room state saved again", metadata: ["room": "\(roomID)", "bytes": "\(bytes.count)"])
            }
            lastSaved[roomID] = bytes
            jobs.saveState(roomID, bytes)
        }
        dirty.removeAll(keepingCapacity: true)
    }

    private func leaseLost(_ room: String) {
        guard homed.remove(room) != nil else { return }
        logger.error("cluster: lost the lease of a room homed here: closing its clients (1001)", metadata: ["room": "\(room)"])
        guard let live = server.registry.room(room) else { return }
        for peer in live.peersInJoinOrder {
            (peer.transportHandle as? Connection)?.close(1001)
        }
    }

    /// Once a second: rooms homed here that ended (and are not locked) give their lease back.
    func releaseEndedRooms() {
        for room in homed where server.registry.room(room) == nil && !server.registry.lockedRoomIDs.contains(room) {
            if resolving[Self.lookupKey(room, claim: true)] != nil { continue }
            homed.remove(room)
            lastSaved.removeValue(forKey: room)
            oversized.remove(room)
            jobs.saveState(room, nil)
            jobs.release(room)
        }
    }

    // MARK: outboxes

    /// The batch for node `to`; one that grew past `flushBytes` is sent first.
    private func outbox(_ to: String) -> Outbox {
        if let box = outboxes[to] {
            if box.writer.bytes.count >= Self.flushBytes { flush(box, to: to) }
            return box
        }
        let box = Outbox(writer: ClusterWriter(node: node, incarnation: cluster.incarnation))
        outboxes[to] = box
        return box
    }

    /// Sends every batch built during this turn of the loop, with the
    /// acknowledgements of the messages handled (none for a client whose
    /// room is paused by flow control: its node stops reading it).
    func flush() {
        if !held.isEmpty { handleHeld() }
        if !ackDue.isEmpty {
            var waiting: [Connection] = []
            for connection in ackDue {
                guard let link = connection.remote, connection.handledSinceAck > 0 else { continue }
                if connection.pausedRoom != nil {
                    waiting.append(connection)
                    continue
                }
                outbox(link.node).append(.ack(conn: link.conn, count: UInt64(connection.handledSinceAck)))
                connection.handledSinceAck = 0
            }
            ackDue = waiting
        }
        for (to, box) in outboxes where !box.isEmpty { flush(box, to: to) }
    }

    /// Flow control on the edge: tells the home of `connection`'s room that
    /// its queue here is congested or drained (FlowControl.report).
    func reportFlow(_ connection: Connection, congested: Bool) {
        guard let home = connection.home else { return }
        let conn = UInt64(connection.id)
        outbox(home.node).append(congested ? .congested(conn: conn) : .drained(conn: conn))
    }

    /// Every connection served here for another node's client.
    var remoteConnections: [Connection] { remotes.values.flatMap(\.values) }

    /// A message of another node's client, handled here like a local one's.
    private func handleRemote(_ payload: [UInt8], on connection: Connection) {
        server.dispatcher.handle(payload, from: connection)
        connection.handledSinceAck += 1
        if connection.handledSinceAck == 1 { ackDue.append(connection) }
    }

    /// Handles, in order, what remote clients sent while their room was
    /// paused, for those whose room runs again (until it pauses again).
    private func handleHeld() {
        var still: [Connection] = []
        for connection in held {
            guard let link = connection.remote, remotes[link.node]?[link.conn] === connection, !connection.isClosing else {
                connection.heldWhilePaused = []  // gone meanwhile
                continue
            }
            var next = 0
            while connection.pausedRoom == nil, next < connection.heldWhilePaused.count {
                handleRemote(connection.heldWhilePaused[next], on: connection)
                next += 1
            }
            connection.heldWhilePaused.removeFirst(next)
            if !connection.heldWhilePaused.isEmpty { still.append(connection) }
        }
        held = still
    }

    private func flush(_ box: Outbox, to: String) {
        box.finishFrame()
        if let sibling = siblings[to] {
            if !sibling.postFromSibling(box.writer.bytes) {
                let now = monotonicMillis()
                if now - lastSendError >= 1000 {
                    logger.warning("cluster: node message not sent: the service thread it is for is too far behind",
                                   metadata: ["to": "\(to)"])
                    lastSendError = now
                }
            }
            box.writer.reset()
            return
        }
        do throws(ClusterError) {
            try cluster.send(to: to, box.writer.bytes)
        } catch {
            let now = monotonicMillis()
            if now - lastSendError >= 1000 {
                logger.warning("cluster: node message not sent", metadata: ["to": "\(to)", "error": "\(error)"])
                lastSendError = now
            }
        }
        box.writer.reset()
    }

    // MARK: REST

    /// A REST request this node cannot answer alone: the room list (every
    /// node's rooms) or a room whose home is another node. False: answer here.
    func takesOver(_ request: HTTPRequest, wsi: OpaquePointer) -> Bool {
        guard RestAPI.handles(request.path), server.clusterStatus?.connected == true else { return false }
        let isList = request.path == RestAPI.listPath || request.path == RestAPI.prefix
        let room = RestAPI.roomID(in: request.path) ?? ""
        if !isList, room.isEmpty || homed.contains(room) || server.registry.room(room) != nil { return false }
        nextSerial += 1
        pendingHTTP[nextSerial] = (wsi, request)
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(cluster.config.requestTimeoutMillis / 1000 + 5))
        if isList {
            if request.method != .get || alive.count <= 1 {
                pendingHTTP.removeValue(forKey: nextSerial)
                return false
            }
            jobs.gatherList(ForwardedHTTP.encode(request), serial: nextSerial)
        } else {
            jobs.forward(ForwardedHTTP.encode(request), room: room, serial: nextSerial)
        }
        return true
    }

    /// The HTTP connection closed before its answer came.
    func httpClosed(_ wsi: OpaquePointer) {
        for (serial, pending) in pendingHTTP where pending.wsi == wsi { pendingHTTP.removeValue(forKey: serial) }
    }

    private func finishHTTP(_ serial: Int, _ response: HTTPResponse) {
        guard let pending = pendingHTTP.removeValue(forKey: serial) else { return }
        _ = server.respond(pending.wsi, response)
    }

    /// A REST request forwarded by another node: answered as if asked here.
    private func answer(_ bytes: [UInt8], reply: String) {
        guard let request = ForwardedHTTP.decodeRequest(bytes) else {
            cluster.reply(to: reply, ForwardedHTTP.encode(HTTPResponse.error(400, code: 400, "malformed forwarded request")))
            return
        }
        let response = RestAPI.handles(request.path) ? server.rest.handle(request)
            : HTTPResponse.error(404, code: 404, "no route for \(request.path)")
        touch(RestAPI.roomID(in: request.path))
        cluster.reply(to: reply, ForwardedHTTP.encode(response))
    }
}

/// Records for one node, built during one turn of the loop. A frame
/// queued to several connections of that node in a row is one record.
final class Outbox {
    var writer: ClusterWriter
    private var frame: Frame?
    private var conns: [UInt64] = []

    init(writer: ClusterWriter) { self.writer = writer }

    var isEmpty: Bool { writer.isEmpty && frame == nil }

    func append(_ frame: Frame, for conn: UInt64) {
        if frame === self.frame {
            conns.append(conn)
            return
        }
        finishFrame()
        self.frame = frame
        conns = [conn]
    }

    func append(_ record: ClusterRecord) {
        finishFrame()
        writer.append(record)
    }

    func finishFrame() {
        guard let frame else { return }
        writer.appendFrame(conns: conns, count: frame.count) { frame.append(to: &$0) }
        self.frame = nil
        conns.removeAll(keepingCapacity: true)
    }
}
