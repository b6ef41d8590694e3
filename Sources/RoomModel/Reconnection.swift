/// Reconnection (PROTOCOL.md section 7): a peer whose connection is lost
/// without `leave` stays in the room for `reconnect_grace_s`; a `join` with
/// its `peer_id` by the same user resumes it (see `RoomRegistry.join`).
extension RoomRegistry {
    /// Starts the grace for `peer`. Returns false when there is none
    /// (`reconnect_grace_s` 0): the caller makes the peer leave at once.
    public func startGrace(_ peer: Peer) -> Bool {
        let grace = settings.room.reconnectGraceS
        guard grace > 0, peer.room.peer(peer.id) === peer else { return false }
        let deadline = clock.nowMillis() + Int64(grace) * 1000
        peer.graceDeadline = deadline
        graceQueue.append((peer, deadline))
        return true
    }

    /// Ends the grace of every peer whose time is up: the others see it leave.
    public func expireGraces() -> [Delivery] {
        let now = clock.nowMillis()
        var deliveries: [Delivery] = []
        while let (peer, deadline) = graceQueue.first, deadline <= now {
            graceQueue.removeFirst()
            if peer.graceDeadline == deadline { deliveries += leave(peer, reason: .websocketClosed) }
        }
        return deliveries
    }

    /// When the next grace ends (for the server's timer): O(1) amortized.
    public var nextGraceExpiry: Int64? {
        // Entries of peers that resumed or left since are skipped.
        while let (peer, deadline) = graceQueue.first, peer.graceDeadline != deadline { graceQueue.removeFirst() }
        return graceQueue.first?.deadline
    }

    func endGraceState(_ peer: Peer) {
        peer.graceDeadline = nil
    }
}

/// Graces by deadline, earliest first, with O(1) amortized `removeFirst`
/// (an array and a head index). A reconnect grace has one length, so an
/// entry normally goes at the end in O(1); a room restored on this node
/// (RoomSnapshot.swift) gives its peers a longer one, and a later, shorter
/// grace is placed before those.
struct GraceQueue {
    private var entries: [(peer: Peer, deadline: Int64)] = []
    private var head = 0

    var first: (peer: Peer, deadline: Int64)? { head < entries.count ? entries[head] : nil }

    mutating func append(_ entry: (peer: Peer, deadline: Int64)) {
        var index = entries.count
        while index > head, entries[index - 1].deadline > entry.deadline { index -= 1 }
        entries.insert(entry, at: index)
    }

    mutating func removeFirst() {
        head += 1
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024, head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }
}
