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
        if initiator == nil { try requireOwnMetadata(peer, "peer-update") }
        var name = name
        if let given = name { name = try Self.trimmedName(given) }  // section 27: REST's too
        try checkMetadata(name: name, data: data)
        if initiator == nil {
            // The peer's own update: a chat ban stops it, the word filter reads its name (40302),
            // and a moderating peer's name is not its to take (40908).
            if name != nil || data != nil { try checkChatBan(peer, now: clock.nowMillis()) }
            if let name {
                try checkName(name)
                if name != peer.name { try checkReserved(name, in: peer.room, role: peer.role, excluding: peer) }
            }
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

    /// A change of one's own peer (`peer-update`, `peer-attributes-set`;
    /// section 27): 40300 for a `view_and_polls_only` peer, and for a role
    /// without `updateOwnMetadata`.
    func requireOwnMetadata(_ peer: Peer, _ call: String) throws(RoomError) {
        try peer.requireUnrestricted(call)
        if !peer.role.permissions.updateOwnMetadata { throw RoomError.denied("updateOwnMetadata") }
    }

    /// The size limits of a peer's `name` and `data`.
    public func checkMetadata(name: String?, data: String?) throws(RoomError) {
        if let name { try checkSize(name, field: "name", limit: settings.limits.maxNameBytes) }
        if let data { try checkSize(data, field: "data", limit: settings.limits.maxMetadataBytes) }
    }
}
