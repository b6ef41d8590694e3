import RoomCluster
import RoomModel

/// When a node dies or loses a lease (docs/CLUSTER.md, "takeover"): the
/// nodes with clients in its rooms race to claim each room (one KV create
/// wins), the winner restores the saved state, and every client is
/// attached to its peer again there; rooms that ended give their lease back.
extension ClusterRouter {
    /// The alive nodes (or their runs) changed: clients of nodes that died or
    /// restarted are gone (their peers enter the grace); rooms whose home
    /// died or restarted are taken over.
    func statusChanged(_ status: ClusterStatus) {
        let previous = homes.status
        homes.statusChanged(status)
        defer { alive = status.alive }
        guard status.connected, previous?.connected == true else { return }
        let gone = Set(alive).subtracting(status.alive)
        for dead in gone where dead != node {
            home.forgetClients(of: dead, reason: "node left")
            edge.homeLost(dead, reason: "left")
        }
        // A node restarted within the alive window (a new run, the same id): its
        // new run knows none of the old one's clients or rooms, as if it left.
        for restarted in status.alive where restarted != node {
            guard let before = previous?.runs[restarted], let now = status.runs[restarted], before != now else {
                continue
            }
            home.forgetClients(of: restarted, reason: "node restarted")
            edge.homeLost(restarted, reason: "restarted")
        }
    }

    /// This node claimed a room that has a saved state: its previous home
    /// died (or it ended with its node). Every peer waits for its client in
    /// a grace of at least `takeoverGraceMillis`; pushes meanwhile are held.
    func restore(_ roomID: RoomID, from saved: SavedState) {
        guard registry.room(roomID) == nil else { return }
        let snapshot: RoomSnapshot
        do { snapshot = try RoomSnapshot(json: saved.bytes) } catch {
            logger.error(
                "cluster: a room's saved state cannot be read",
                metadata: ["room": "\(roomID)", "error": "\(error)"]
            )
            return
        }
        let grace = max(Int64(registry.settings.room.reconnectGraceS) * 1000, Self.takeoverGraceMillis)
        guard let room = registry.restore(snapshot, graceMillis: grace) else { return }
        // What the peers were shown of the speakers is not saved: an empty
        // list ending a grace goes to them (speakersShown).
        let budget = registry.settings.room.resumeBufferBytes
        for peer in room.peersInJoinOrder {
            peer.endpoint = HeldPushes(budget: budget, speakersShown: true, metrics: metrics)
        }
        states.restored(roomID, from: saved)
        logger.notice(
            "cluster: room taken over from its saved state",
            metadata: [
                "room": "\(roomID)", "peers": "\(room.peerCount)", "session": "\(room.sessionID)",
                "bytes": "\(saved.bytes.count)",
            ]
        )
    }

    func leaseLost(_ room: RoomID) {
        guard homes.released(room) else { return }
        states.writer.released(room)  // another node saves it now
        logger.error(
            "cluster: lost the lease of a room homed here: closing its clients (1001)",
            metadata: ["room": "\(room)"]
        )
        guard let live = registry.room(room) else { return }
        for peer in live.peersInJoinOrder {
            peer.endpoint?.connection?.close(1001)
        }
    }

    /// Once a second: rooms homed here that ended (and are not locked) give
    /// their lease back — once their feed's window is over too (PROTOCOL.md
    /// section 24: an ended session's feed is kept `window_s`, and the other
    /// nodes find it here through the lease), and unless a call waits for its
    /// hook there (a room's first join, section 30: it is answered here).
    func releaseEndedRooms() {
        for room in homes.homed
        where registry.room(room) == nil && !registry.lockedRoomIDs.contains(room) && !registry.holdsFeed(of: room) {
            if edge.isClaiming(room) || home.waitsForHook(in: room) { continue }
            homes.released(room)
            states.forget(room)
            jobs.release(room)
        }
    }
}
