/// Reconnection (PROTOCOL.md section 7): a peer whose connection is lost
/// without `leave` stays in the room for `reconnect_grace_s`; a `join` with
/// its `peer_id` by the same user resumes it (see `RoomRegistry.join`).
/// The graces themselves are model deadlines (ReconnectGraces.swift).
extension RoomRegistry {
    /// Starts the grace for `peer`. Returns false when there is none
    /// (`reconnect_grace_s` 0): the caller makes the peer leave at once.
    public func startGrace(_ peer: Peer) -> Bool {
        let grace = settings.room.reconnectGraceS
        guard grace > 0, peer.room.peer(peer.id) === peer else { return false }
        beginGrace(peer, until: clock.nowMillis() + Int64(grace) * 1000)
        return true
    }

    /// Whether `peer` was last sent a non-empty `active-speakers` list: a
    /// peer entering its grace keeps it, so that its held pushes never end
    /// with an empty list it does not need (PROTOCOL.md sections 7 and 29).
    public func speakersShown(to peer: Peer) -> Bool {
        peer.room.speakers.showsSpeakers(to: peer)
    }
}
