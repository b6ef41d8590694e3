import RoomConfig
import RoomProtocol

/// `track-add` / `track-update` / `track-remove` (PROTOCOL.md sections 4 and 6).
extension RoomRegistry {
    public func addTrack(
        _ peer: Peer,
        id: String?,
        kind: TrackType,
        source: TrackSource = .regular,
        mute: Bool = false,
        description: String = ""
    ) throws(RoomError) -> (Track, [Delivery]) {
        try peer.requireUnrestricted("track-add")
        let needed = Self.publishKind(kind: kind, source: source)
        guard peer.role.publishParams.allows(needed) else {
            throw RoomError(.permissionDenied, "role \"\(peer.role.name)\" may not publish \(needed.rawValue)")
        }
        try checkSize(description, field: "description", limit: settings.limits.maxMetadataBytes)
        let room = peer.room
        if let id, room.trackOwners[id] != nil {
            throw RoomError(.trackConflict, "track_id \"\(id)\" is already in use in this room")
        }
        let limit = settings.limits.maxTracksPerPeer
        if peer.tracks.count >= limit {
            throw RoomError(.trackConflict, "at most \(limit) tracks per peer")
        }
        let track = Track(
            trackID: id ?? ids.next(.track),
            type: kind,
            source: source,
            mute: mute,
            description: description
        )
        room.addTrack(track, to: peer)
        return (track, [Delivery(.trackAdd(peerID: peer.id, track), to: room.subscribers(of: peer))].nonEmpty)
    }

    /// `mute` / `description`: nil leaves the field. Nothing changed → no push.
    public func updateTrack(
        _ peer: Peer,
        id: String,
        mute: Bool?,
        description: String?
    ) throws(RoomError)
        -> (Track, [Delivery])
    {
        try peer.requireUnrestricted("track-update")
        guard let index = peer.tracks.firstIndex(where: { $0.trackID == id }) else {
            throw RoomError(.trackNotFound, "track_id \"\(id)\" is not one of your tracks")
        }
        if let description { try checkSize(description, field: "description", limit: settings.limits.maxMetadataBytes) }
        let before = peer.tracks[index]
        if let mute { peer.tracks[index].mute = mute }
        if let description { peer.tracks[index].description = description }
        let track = peer.tracks[index]
        if track == before { return (track, []) }
        return (track, trackChanged(peer, track))
    }

    public func removeTrack(_ peer: Peer, id: String) throws(RoomError) -> [Delivery] {
        try peer.requireUnrestricted("track-remove")
        let subscribers = peer.room.subscribers(of: peer)
        guard let track = peer.room.removeTrack(id, from: peer) else {
            throw RoomError(.trackNotFound, "track_id \"\(id)\" is not one of your tracks")
        }
        return [Delivery(.trackRemove(peerID: peer.id, track), to: subscribers)].nonEmpty
    }

    /// What a track needs in `publishParams.allowed`: screen by source, else by kind.
    static func publishKind(kind: TrackType, source: TrackSource) -> PublishKind {
        if source == .screen { return .screen }
        return kind == .audio ? .audio : .video
    }

    func trackChanged(_ peer: Peer, _ track: Track) -> [Delivery] {
        [Delivery(.trackUpdate(peerID: peer.id, track), to: peer.room.subscribers(of: peer))].nonEmpty
    }
}
