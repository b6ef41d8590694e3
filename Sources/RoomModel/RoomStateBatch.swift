/// A large room's joins and leaves waiting for its next `room-state`
/// (PROTOCOL.md section 12, LargeRooms.swift): the peers whose role may not
/// publish come and go quietly, and the moderators get them a page at a time.
struct RoomStateBatch {
    /// Non-publishers that joined since the last `room-state`, in join order.
    private var pendingJoins: [Peer] = []
    /// Ids of non-publishers that left since the last `room-state`.
    private var pendingLeaves: [PeerID] = []
    /// A join or leave happened since the last `room-state` (pending entries
    /// alone are only the moderators' next page).
    private var changed = false
    /// The `peer_count` of the last `room-state`: no push repeats it.
    private var announcedPeerCount: Int?

    /// Entries left for the moderators' next pages.
    var hasPending: Bool { !(pendingJoins.isEmpty && pendingLeaves.isEmpty) }

    /// Everyone was told of a join or leave directly (or the room was restored): its peer count is known.
    mutating func announced(_ peerCount: Int) {
        announcedPeerCount = peerCount
    }

    /// A non-publisher joined a large room: announced in the next `room-state`.
    mutating func joinedQuietly(_ peer: Peer) {
        pendingJoins.append(peer)
        changed = true
    }

    /// A peer left: its join, if it still waits for a `room-state`, is
    /// withdrawn. Returns whether it was.
    mutating func withdrawJoin(of peer: Peer) -> Bool {
        guard let index = pendingJoins.firstIndex(where: { $0 === peer }) else { return false }
        pendingJoins.remove(at: index)
        return true
    }

    /// A non-publisher left a large room. One that came and went between
    /// two `room-state`s is never mentioned by id; the count changed either way.
    mutating func leftQuietly(_ peerID: PeerID, joinWasPending: Bool) {
        changed = true
        if !joinWasPending { pendingLeaves.append(peerID) }
    }

    /// One `room-state` tick for the room's `peerCount` peers: whether the
    /// count changed since the last one announced, and the moderators' next
    /// page (at most `size` joins and `size` leaves), taken. Without
    /// moderators nobody is paged to: every entry goes.
    mutating func nextPage(
        peerCount: Int,
        size: Int,
        moderated: Bool
    )
        -> (countChanged: Bool, joined: [Peer], left: [PeerID])
    {
        let countChanged = changed && peerCount != announcedPeerCount
        announcedPeerCount = peerCount
        let joined = Array(pendingJoins.prefix(size))
        let left = Array(pendingLeaves.prefix(size))
        if moderated {
            pendingJoins.removeFirst(joined.count)
            pendingLeaves.removeFirst(left.count)
        } else {
            pendingJoins.removeAll()
            pendingLeaves.removeAll()
        }
        changed = false
        return (countChanged, joined, left)
    }
}

/// The large rooms with joins or leaves waiting for the next `room-state` tick.
struct RoomStateSchedule {
    private(set) var roomIDs: Set<RoomID> = []

    mutating func schedule(_ room: Room) { roomIDs.insert(room.id) }

    /// The rooms due this tick, in id order; they leave the schedule.
    mutating func take() -> [RoomID] {
        defer { roomIDs.removeAll() }
        return roomIDs.sorted()
    }
}
