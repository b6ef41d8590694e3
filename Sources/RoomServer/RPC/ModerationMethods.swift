import RoomModel
import RoomProtocol
import RoomWire

/// Moderation: muting others, removing peers, ending the room (PROTOCOL.md section 6).
extension Dispatcher {
    static var moderationMethods: [String: Method] {
        [
            "track-update-request": .joined(Dispatcher.trackUpdateRequest),
            "change-track-mute-state-request": .joined(Dispatcher.changeTrackMuteState),
            "peer-leave-request": .joined(Dispatcher.peerLeaveRequest),
            "end-room": .joined(Dispatcher.endRoom),
        ]
    }

    func trackUpdateRequest(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let target = try params.requiredPeerID("requested_for")
        let track = try params.requiredString("track_id")
        guard let mute = try params.bool("mute") else { throw .invalidParams("mute: required") }
        apply(
            try registry.requestTrackUpdate(
                by: .peer(peer),
                in: peer.room,
                targetID: target,
                trackID: track,
                mute: mute
            ),
            &call
        )
        return Self.empty
    }

    func changeTrackMuteState(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        guard let value = try params.bool("value") else { throw .invalidParams("value: required") }
        let filter = TrackFilter(
            roles: try params.stringArray("roles"),
            kind: try params.choice("type", TrackType.self),
            source: try params.choice("source", TrackSource.self)
        )
        let (affected, effects) = try registry.changeTrackMuteState(
            by: .peer(peer),
            in: peer.room,
            value: value,
            filter: filter
        )
        apply(effects, &call)
        return Self.encode { w in w.field("tracks_affected", affected) }
    }

    func peerLeaveRequest(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let target = try params.requiredPeerID("requested_for")
        let reason = try params.string("reason") ?? ""
        apply(try registry.removePeer(by: .peer(peer), in: peer.room, targetID: target, reason: reason), &call)
        return Self.empty
    }

    func endRoom(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let reason = try params.string("reason") ?? ""
        let lock = try params.bool("lock") ?? false
        let room = peer.room
        apply(try registry.endRoom(by: .peer(peer), room, reason: reason, lock: lock), &call)
        logger.info("room ended", metadata: ["room": "\(room.id)", "peer": "\(peer.id)", "lock": "\(lock)"])
        return Self.empty
    }
}
