import RoomConfig
import RoomProtocol

/// Per-room active-speaker state (PROTOCOL.md section 7) and its tick.
///
/// A tick must cost time in proportion to the tracks that reported, not to
/// the peers in the room. Lists are therefore kept per role: every peer of a
/// role sees the same list, except peers that own a speaking track (their own
/// tracks are always included). Invariant: a peer that is not `personal`
/// was last sent exactly `roleLists[its role]` (nothing sent counts as empty).
/// Peers that join or change role start `personal` until they match again.
struct SpeakerState {
    /// Highest level per track since the last tick.
    private var levels: [String: (peer: Peer, level: Int)] = [:]
    /// The list last sent to the non-personal peers of each role.
    private var roleLists: [String: [Speaker]] = [:]
    /// Peers whose last list may differ from their role's, with that list.
    private var personal: [ObjectIdentifier: (peer: Peer, last: [Speaker])] = [:]

    /// Nothing pending and nothing shown: ticks can skip the room.
    var isIdle: Bool { levels.isEmpty && personal.isEmpty && roleLists.values.allSatisfy(\.isEmpty) }

    mutating func report(_ peer: Peer, trackID: String, level: Int) {
        if let current = levels[trackID], current.level >= level { return }
        levels[trackID] = (peer, level)
    }

    /// A newcomer was sent nothing: it is personal while its role's list is not empty.
    mutating func joined(_ peer: Peer) {
        if !(roleLists[peer.role.name] ?? []).isEmpty { personal[ObjectIdentifier(peer)] = (peer, []) }
    }

    mutating func roleChanged(_ peer: Peer) {
        if personal[ObjectIdentifier(peer)] == nil {
            personal[ObjectIdentifier(peer)] = (peer, roleLists[peer.role.name] ?? [])
        }
    }

    mutating func forget(_ peer: Peer) {
        personal.removeValue(forKey: ObjectIdentifier(peer))
        for track in peer.tracks { levels.removeValue(forKey: track.trackID) }
    }

    mutating func forget(trackID: String) { levels.removeValue(forKey: trackID) }

    /// Whether the list `peer` was last sent is not empty (nothing sent counts as empty).
    func showsSpeakers(to peer: Peer) -> Bool {
        !(personal[ObjectIdentifier(peer)]?.last ?? roleLists[peer.role.name] ?? []).isEmpty
    }

    /// One tick of `room` (whose state this is): the lists that changed, to
    /// the peers whose list changed.
    mutating func tick(_ room: Room, template: RoleTemplate, config: ActiveSpeakerSettings) -> [Delivery] {
        var speakers: [(peer: Peer, speaker: Speaker)] = []
        for (trackID, entry) in levels where entry.level >= config.threshold {
            speakers.append((entry.peer, Speaker(peerID: entry.peer.id.rawValue, trackID: trackID, level: entry.level)))
        }
        levels.removeAll(keepingCapacity: true)
        speakers.sort { a, b in
            if a.speaker.level != b.speaker.level { return a.speaker.level > b.speaker.level }
            if a.speaker.peerID != b.speaker.peerID { return a.speaker.peerID < b.speaker.peerID }
            return a.speaker.trackID < b.speaker.trackID
        }
        func list(for role: Role, owner: Peer?) -> [Speaker] {
            var result: [Speaker] = []
            for entry in speakers where entry.peer === owner || role.subscribes(to: entry.peer.role.name) {
                result.append(entry.speaker)
                if result.count == config.maxSpeakers { break }
            }
            return result
        }

        // Owners of speaking tracks get their own list this tick.
        for entry in speakers where personal[ObjectIdentifier(entry.peer)] == nil {
            personal[ObjectIdentifier(entry.peer)] = (entry.peer, roleLists[entry.peer.role.name] ?? [])
        }
        var deliveries: [Delivery] = []
        // Roles whose list changed: every non-personal peer of the role gets it.
        var roleNames = Set(roleLists.keys)
        if !speakers.isEmpty { roleNames.formUnion(template.roleNames) }
        var newLists: [String: [Speaker]] = [:]
        for name in roleNames {
            guard let role = template.role(name) else { continue }
            let new = list(for: role, owner: nil)
            newLists[name] = new
            if new != roleLists[name, default: []] {
                let recipients = room.peers(withRole: name).filter { personal[ObjectIdentifier($0)] == nil }
                if !recipients.isEmpty { deliveries.append(Delivery(.activeSpeakers(new), to: recipients)) }
            }
        }
        roleLists = newLists.filter { !$0.value.isEmpty }
        // Personal peers: compare with what they last got.
        for (key, entry) in personal {
            let new = list(for: entry.peer.role, owner: entry.peer)
            if new != entry.last, !(new.isEmpty && entry.last.isEmpty) {
                deliveries.append(Delivery(.activeSpeakers(new), to: [entry.peer]))
            }
            if new == roleLists[entry.peer.role.name, default: []] {
                personal.removeValue(forKey: key)
            } else {
                personal[key] = (entry.peer, new)
            }
        }
        return deliveries
    }
}
