/// Reconnection (PROTOCOL.md section 7): a peer whose connection is lost
/// without `leave` stays in the room for `reconnect_grace_s`; a `join` with
/// its `peer_id` by the same user resumes it (see `RoomRegistry.join`).
/// The graces themselves are kept by `ReconnectGraces`.
extension RoomRegistry {
    /// Starts the grace for `peer`. Returns false when there is none
    /// (`reconnect_grace_s` 0): the caller makes the peer leave at once.
    public func startGrace(_ peer: Peer) -> Bool {
        let grace = settings.room.reconnectGraceS
        guard grace > 0, peer.room.peer(peer.id) === peer else { return false }
        graces.start(peer, until: clock.nowMillis() + Int64(grace) * 1000)
        return true
    }

    /// Ends the grace of every peer whose time is up: the others see it leave.
    public func expireGraces() -> [Delivery] {
        let now = clock.nowMillis()
        var deliveries: [Delivery] = []
        while let peer = graces.nextExpired(now: now) { deliveries += leave(peer, reason: .websocketClosed) }
        return deliveries
    }

    /// When the next grace ends (for the server's timer): O(1) amortized.
    public var nextGraceExpiry: Int64? { graces.nextDeadline() }
}
