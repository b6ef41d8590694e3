import RoomConfig

/// The rooms whose active-speaker state needs ticks (PROTOCOL.md section
/// 7): a room comes in with a level report and goes once it is idle, so
/// quiet rooms cost the ticks nothing. Each room's lists are its
/// `SpeakerState`.
struct ActiveSpeakers {
    private(set) var roomIDs: Set<RoomID> = []

    mutating func reported(in room: Room) { roomIDs.insert(room.id) }

    /// One tick of every room that needs one; rooms that ended or went idle leave the set.
    mutating func tick(_ rooms: [RoomID: Room], template: RoleTemplate) -> [Delivery] {
        var deliveries: [Delivery] = []
        for id in roomIDs {
            guard let room = rooms[id] else {
                roomIDs.remove(id)
                continue
            }
            deliveries += room.speakers.tick(room, template: template, config: template.settings.activeSpeakers)
            if room.speakers.isIdle { roomIDs.remove(id) }
        }
        return deliveries
    }
}

extension RoomRegistry {
    /// `audio-level`: levels of the caller's own audio tracks; a muted track counts as 0.
    public func reportAudioLevels(_ peer: Peer, _ levels: [(trackID: String, level: Int)]) throws(RoomError) {
        try peer.requireUnrestricted("audio-level")
        for (trackID, _) in levels {
            guard let track = peer.track(trackID), track.type == .audio else {
                throw RoomError(.trackNotFound, "levels: \"\(trackID)\" is not one of your audio tracks")
            }
        }
        let room = peer.room
        for (trackID, level) in levels {
            room.speakers.report(peer, trackID: trackID, level: peer.track(trackID)!.mute ? 0 : level)
        }
        activeSpeakers.reported(in: room)
    }

    /// One active-speaker tick for every room that needs one.
    public func tickActiveSpeakers() -> [Delivery] {
        activeSpeakers.tick(rooms, template: template)
    }
}
