import RoomCluster
import RoomModel

/// The records of one node message (RoomCluster/ClusterWire.swift), each to
/// the side it is for: a client's node sends its clients' messages and flow
/// reports to the room's home (`Home`); the home sends frames, closes,
/// acknowledgements and reroutes back (`Edge`).
extension ClusterRouter {
    func received(_ bytes: [UInt8]) {
        guard let message = ClusterMessage.decode(bytes) else {
            logger.warning("cluster: malformed node message dropped", metadata: ["bytes": "\(bytes.count)"])
            return
        }
        let from = message.node
        if from == node { return }
        if let known = incarnations[from], known != message.incarnation {
            home.forgetClients(of: from, reason: "node restarted")
        }
        incarnations[from] = message.incarnation
        defer { closeIdle() }  // a drain closes a connection once its calls are answered
        for record in message.records {
            switch record {
            // To the home, from a client's node.
            case .data(let conn, let payload): home.data(payload, conn: conn, from: from)
            case .congested(let conn): home.congested(conn, from: from)
            case .drained(let conn): home.drained(conn, from: from)
            case .lost(let conn): home.lost(conn, from: from)
            case .attach(let conn, let peer, let room): home.attach(conn, peer: peer, room: RoomID(room), from: from)
            // To a client's node, from the home.
            case .frame(let conns, let payload): edge.frame(payload, to: conns, from: from)
            case .close(let conn, let code): edge.close(conn, code: code, from: from)
            case .joined(let conn, let peer): edge.joined(conn, peer: peer, from: from)
            case .replay(let conn, let payload): edge.replay(payload, to: conn, from: from)
            case .ack(let conn, let count): edge.acknowledged(conn, count: count, from: from)
            case .reroute(let conn, let payload): edge.reroute(payload, for: conn, from: from)
            case .moved(let room, let adopt): edge.moved(RoomID(room), adopt: adopt, from: from)
            }
        }
    }
}
