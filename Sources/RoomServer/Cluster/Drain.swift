import RoomCluster
import RoomModel

/// What a drain has to do (PROTOCOL.md section 18, 1.3 wording): the rooms
/// being handed over, this node's own clients of them, and the callback once
/// every connection is closing.
final class NodeDrain {
    let finished: () -> Void
    /// Rooms whose state is being saved and lease released.
    var pending: Set<RoomID> = []
    /// This node's own clients of each room handed over (they follow it).
    var local: [RoomID: [Connection]] = [:]
    /// The node asked to claim each room (the one with most of its clients).
    var adopters: [RoomID: NodeID] = [:]
    /// Every room is handed over: connections close (1012) once idle.
    var closing = false
    var done = false

    init(finished: @escaping () -> Void) { self.finished = finished }
}

/// A drain (SIGTERM on a node of a cluster, docs/CLUSTER.md "Rolling
/// restart"): the node takes no room any more and hands over every room it
/// is home of, whole:
/// 1. in one turn of the loop each room's snapshot is taken and the room is
///    frozen here (this node handles nothing more for it: its clients of
///    other nodes are forgotten without a word, its own clients wait, not
///    read, and pushes of the frozen copy go nowhere);
/// 2. off the loop, every state is written and flushed, then each lease is
///    released (`ClusterJobs.handOver`);
/// 3. every other node gets a `moved` record: a client's node sends what the
///    old home did not acknowledge (it answered none of it) to the room's
///    new home after attaching the client to its peer there; the adopter
///    claims the room even without clients; the new home loads exactly the
///    state saved in 2, so nothing is rolled back and no call is answered
///    5003;
/// 4. this node's own clients follow their rooms (attached like any
///    other node's), then every connection stops being read and is closed
///    with 1012 once its calls are answered: its peer waits in its grace and
///    resumes on any node.
/// With no other node to take rooms (the last node, or all draining), the
/// rooms stay: connections close with 1012 and `stop()` saves every room.
extension ClusterRouter {
    func drain(finished: @escaping () -> Void) -> Bool {
        thread.assertIsCurrent()
        guard drainState == nil else { return true }
        let drain = NodeDrain(finished: finished)
        drainState = drain
        jobs.draining.store(true, ordering: .relaxed)
        cluster.beginDraining()
        home.draining = true
        edge.draining = true
        // Sibling service threads drain with this one (one signal for the process).
        let takers = (homes.status?.takers ?? []).filter { outboxes.siblings[$0] == nil }
        guard homes.status?.connected == true, !takers.isEmpty else {
            logger.notice(
                "draining: no other node takes rooms: keeping them, saved before the exit",
                metadata: ["rooms": "\(homes.homed.count)"]
            )
            beginClosing()
            return true
        }
        var handOver: [(RoomID, RoomSnapshot?)] = []
        for roomID in homes.homed.sorted(by: { $0.rawValue < $1.rawValue }) where !edge.isClaiming(roomID) {
            let snapshot: RoomSnapshot?
            if let room = registry.room(roomID) {
                snapshot = registry.snapshot(of: room)
                drain.adopters[roomID] = freeze(room, takers: takers, into: drain)
            } else if registry.lockedRoomIDs.contains(roomID) {
                snapshot = .lockedOnly(roomID)
                drain.adopters[roomID] = takers[Int(UInt(bitPattern: roomID.hashValue) % UInt(takers.count))]
            } else {
                snapshot = nil  // it ended: its state goes with its lease
            }
            homes.released(roomID)
            drain.pending.insert(roomID)
            handOver.append((roomID, snapshot))
        }
        logger.notice(
            "draining: handing rooms over",
            metadata: ["rooms": "\(handOver.count)", "to": "\(takers.map(\.rawValue).joined(separator: ","))"]
        )
        if handOver.isEmpty { beginClosing() } else { jobs.handOver(handOver, writer: states.writer) }
        return true
    }

    /// Freezes `room` here after its snapshot: returns the node to adopt it
    /// (the taker with most of its clients, else one by the room's id).
    private func freeze(_ room: Room, takers: [NodeID], into drain: NodeDrain) -> NodeID {
        var links: [RemoteLink] = []
        var perNode: [NodeID: Int] = [:]
        for peer in room.peersInJoinOrder {
            let endpoint = peer.endpoint
            peer.endpoint = nil  // the frozen copy pushes to nobody
            guard let connection = endpoint?.connection else { continue }
            connection.peer = nil
            // A call waiting for its hook here (section 30) is not run here: its verdict will find nobody.
            let waiting = connection.hookWait
            connection.hookWait = nil
            switch connection.sink {
            case .socket:
                edge.handOver(connection, peer: peer.id.rawValue, room: room.id)
                drain.local[room.id, default: []].append(connection)
                // It goes to the new home with the messages behind it, in order: asked again there.
                for message in waiting?.unanswered() ?? [] { edge.inbound(message, on: connection) }
            case .remote(let sink):
                // Not acknowledged: its node sends it to the new home with the rest (`Edge.moved`).
                guard let link = sink as? RemoteLink else { continue }
                links.append(link)
                perNode[link.node, default: 0] += 1
            case .discard, .audience:
                break
            }
        }
        home.handOver(room.id, clients: links)
        let best = takers.max { (perNode[$0] ?? 0, $1.rawValue) < (perNode[$1] ?? 0, $0.rawValue) }
        if let best, (perNode[best] ?? 0) > 0 { return best }
        return takers[Int(UInt(bitPattern: room.id.hashValue) % UInt(takers.count))]
    }

    /// Step 3: the rooms in `moved` are the other nodes' to claim now.
    func handedOver(moved: [RoomID], kept: [RoomID]) {
        thread.assertIsCurrent()
        guard let drain = drainState else { return }
        let others = (homes.status?.alive ?? []).filter { $0 != node }
        for room in moved {
            home.handedOver(room, moved: true)
            let adopter = drain.adopters[room]
            for other in others { outboxes.outbox(other).append(.moved(room: room.rawValue, adopt: other == adopter)) }
            edge.findNewHome(room, for: drain.local[room] ?? [])
        }
        for room in kept {
            logger.warning(
                "draining: a room's state could not be saved: it is taken over as after a death",
                metadata: ["room": "\(room)"]
            )
            home.handedOver(room, moved: false)
            for connection in drain.local[room] ?? [] { edge.abandon(connection) }
        }
        drain.pending.subtract(moved)
        drain.pending.subtract(kept)
        logger.notice(
            "draining: rooms handed over",
            metadata: ["moved": "\(moved.count)", "kept": "\(kept.count)", "left": "\(drain.pending.count)"]
        )
        if drain.pending.isEmpty { beginClosing() }
    }

    /// Step 4: nothing more is read; each connection closes with 1012 once idle.
    private func beginClosing() {
        guard let drain = drainState, !drain.closing else { return }
        drain.closing = true
        edge.stopReading = true
        for connection in sockets.connections.values { connection.pauseReading() }
        closeIdle()
    }

    /// Closes (1012) every connection that waits for nothing from another
    /// node; the drain is finished once all are closing.
    func closeIdle() {
        guard let drain = drainState, drain.closing, !drain.done else { return }
        var busy = 0
        for connection in sockets.connections.values where !connection.isClosing {
            guard edge.isIdle(connection) else {
                busy += 1
                continue
            }
            edge.connectionClosed(connection)  // its peer's home hears it now, before the client resumes elsewhere
            connection.close(1012)
        }
        guard busy == 0 else { return }
        drain.done = true
        drain.finished()
    }
}
