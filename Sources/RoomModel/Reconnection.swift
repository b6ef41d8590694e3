/// Reconnection (PROTOCOL.md section 7): a peer whose connection is lost
/// without `leave` stays in the room for `reconnect_grace_s`; a `join` with
/// its `peer_id` by the same user resumes it (see `RoomRegistry.join`).
extension RoomRegistry {
    /// Starts the grace for `peer`. Returns false when there is none
    /// (`reconnect_grace_s` 0): the caller makes the peer leave at once.
    public func startGrace(_ peer: Peer) -> Bool {
        let grace = settings.room.reconnectGraceS
        guard grace > 0, peer.room.peer(peer.id) === peer else { return false }
        peer.graceDeadline = clock.nowMillis() + Int64(grace) * 1000
        peersInGrace[ObjectIdentifier(peer)] = peer
        return true
    }

    /// Ends the grace of every peer whose time is up: the others see it leave.
    public func expireGraces() -> [Delivery] {
        let now = clock.nowMillis()
        var deliveries: [Delivery] = []
        for peer in peersInGrace.values where peer.graceDeadline.map({ $0 <= now }) ?? true {
            deliveries += leave(peer, reason: .websocketClosed)
        }
        return deliveries
    }

    /// When the next grace ends (for the server's timer).
    public var nextGraceExpiry: Int64? { peersInGrace.values.compactMap(\.graceDeadline).min() }

    func endGraceState(_ peer: Peer) {
        peer.graceDeadline = nil
        peersInGrace.removeValue(forKey: ObjectIdentifier(peer))
    }
}
