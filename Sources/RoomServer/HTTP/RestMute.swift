import RoomModel
import RoomWire

/// REST mute (1.3, PROTOCOL.md section 32): `POST
/// /v2/active-rooms/{room_id}/peers/{peer_id}/mute {track_id?}` mutes that
/// track, or every unmuted track of the peer, as `track-update-request` with
/// `mute:true` does (the peer gets `on-track-update-request` per track, the
/// room `on-track-update`). REST cannot unmute: `value:false` is -32602.
/// Answers `{track_ids}`, the tracks it asked about.
extension RestAPI {
    func mutePeer(_ roomID: RoomID, _ peerID: PeerID, _ params: Params) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        if try params.bool("value") == false {
            throw .invalidParams("value: REST only mutes (false would ask the peer to unmute)")
        }
        guard let peer = room.peer(peerID) else {
            throw RoomError(.peerNotFound, "peer \"\(peerID)\" is not in the room")
        }
        let trackIDs: [String]
        if let id = try params.string("track_id") {
            trackIDs = [id]
        } else {
            trackIDs = peer.tracks.filter { !$0.mute }.map(\.trackID)
        }
        var effects = Effects()
        for id in trackIDs {
            let more = try registry.requestTrackUpdate(by: .server, in: room, targetID: peerID, trackID: id, mute: true)
            effects.deliveries += more.deliveries
            effects.disconnects += more.disconnects
        }
        fanOut.apply(effects)
        logger.info(
            "peer muted",
            metadata: ["room": "\(roomID)", "peer": "\(peerID)", "tracks": "\(trackIDs.count)", "by": "rest"]
        )
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.key("track_ids")
                w.strings(trackIDs)
            }
        )
    }
}
