/// Peers in their reconnect grace (PROTOCOL.md section 7), by deadline. A
/// peer's `graceDeadline` says whether it still waits: the entry of a peer
/// that resumed, left or started another grace since is stale, and skipped.
struct ReconnectGraces {
    private var queue = GraceQueue()

    /// `peer` waits for its client until `deadline`.
    mutating func start(_ peer: Peer, until deadline: Int64) {
        peer.graceDeadline = deadline
        queue.append((peer, deadline))
    }

    /// `peer` waits no more (it resumed, was reattached or left).
    func end(_ peer: Peer) {
        peer.graceDeadline = nil
    }

    /// Takes the next peer whose grace is over at `now`; nil when there is none.
    mutating func nextExpired(now: Int64) -> Peer? {
        while let (peer, deadline) = queue.first, deadline <= now {
            queue.removeFirst()
            if peer.graceDeadline == deadline { return peer }
        }
        return nil
    }

    /// When the next grace ends: O(1) amortized (stale entries are dropped on the way).
    mutating func nextDeadline() -> Int64? {
        while let (peer, deadline) = queue.first, peer.graceDeadline != deadline { queue.removeFirst() }
        return queue.first?.deadline
    }
}

/// Graces by deadline, earliest first, with O(1) amortized `removeFirst`
/// (an array and a head index). A reconnect grace has one length, so an
/// entry normally goes at the end in O(1); a room restored on this node
/// (Takeover.swift) gives its peers a longer one, and a later, shorter
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
