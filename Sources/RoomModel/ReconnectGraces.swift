/// The end of a peer's reconnect grace (PROTOCOL.md section 7): it leaves,
/// the others see `websocket_closed`. One entry per peer in its grace
/// (`Peer.graceEntry`), cancelled when the peer resumes, is reattached or
/// leaves.
struct GraceEnd: ModelDeadline {
    static let rank = 0
    let peer: Peer

    func expire(in registry: RoomRegistry, at now: Int64) -> Expired {
        guard peer.graceDeadline == now else { return Expired() }
        peer.graceEntry = nil
        return Expired(registry.leave(peer, reason: .websocketClosed))
    }
}

extension RoomRegistry {
    /// `peer` waits for its client until `deadline`.
    func beginGrace(_ peer: Peer, until deadline: Int64) {
        cancel(peer.graceEntry)
        peer.graceDeadline = deadline
        peer.graceEntry = schedule(GraceEnd(peer: peer), at: deadline)
    }

    /// `peer` waits no more (it resumed, was reattached or left).
    func endGrace(_ peer: Peer) {
        peer.graceDeadline = nil
        cancel(peer.graceEntry)
        peer.graceEntry = nil
    }
}
