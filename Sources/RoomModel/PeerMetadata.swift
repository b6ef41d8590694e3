/// A peer's `name` and `data` (`peer-update`, REST; PROTOCOL.md section 4).
extension RoomRegistry {
    /// `peer-update` (or a REST update): nil leaves a field as it is.
    /// Nothing changed → no delivery.
    public func updatePeer(
        _ peer: Peer,
        name: String?,
        data: String?,
        by initiator: Initiator? = nil
    )
        throws(RoomError) -> [Delivery]
    {
        if initiator == nil { try peer.requireUnrestricted("peer-update") }
        try checkMetadata(name: name, data: data)
        if initiator == nil {
            // The peer's own update: a chat ban stops it, and the word filter reads its name (40302).
            if name != nil || data != nil { try checkChatBan(peer, now: clock.nowMillis()) }
            if let name { try checkName(name) }
        }
        var changed: [PeerField] = []
        if let name, name != peer.name {
            peer.name = name
            changed.append(.name)
        }
        if let data, data != peer.data {
            peer.data = data
            changed.append(.data)
        }
        if changed.isEmpty { return [] }
        return peerUpdate(peer, changed: changed)
    }

    /// The size limits of a peer's `name` and `data`.
    public func checkMetadata(name: String?, data: String?) throws(RoomError) {
        if let name { try checkSize(name, field: "name", limit: settings.limits.maxNameBytes) }
        if let data { try checkSize(data, field: "data", limit: settings.limits.maxMetadataBytes) }
    }
}
