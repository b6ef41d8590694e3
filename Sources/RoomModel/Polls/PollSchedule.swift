/// Polls with votes whose `on-poll-stats` some slice has not had yet
/// (PROTOCOL.md section 15; a timed poll's end is a `PollEnd` deadline).
/// Entries of ended room sessions (their `room` is nil) are dropped as
/// they are met.
struct PollSchedule {
    /// Polls with changes that some stats slice has not been sent yet.
    private var dirty: [Poll] = []
    /// Stats timer ticks so far (the slice of a tick is `ticks % slices`).
    private var statsTicks = 0

    /// Whether some poll's stats are still due to a slice.
    var hasPendingStats: Bool { !dirty.isEmpty }

    /// A vote counted in `poll`: every slice is due its stats.
    mutating func statsChanged(_ poll: Poll) {
        poll.statsVersion += 1
        if !poll.statsPending {
            poll.statsPending = true
            dirty.append(poll)
        }
    }

    /// One stats tick out of `slices`: `send` is called with each poll (and
    /// its room) whose latest stats this tick's slice has not had, and the
    /// slice. A poll stays due until every slice has had them.
    mutating func tickStats(slices: Int, _ send: (Poll, Room, _ slice: Int) -> Void) {
        let slice = statsTicks % slices
        statsTicks += 1
        var pending: [Poll] = []
        for poll in dirty {
            guard let room = poll.room else {
                poll.statsPending = false
                continue
            }
            if poll.slicesSent.count != slices { poll.slicesSent = Array(repeating: 0, count: slices) }
            if poll.slicesSent[slice] < poll.statsVersion {
                poll.slicesSent[slice] = poll.statsVersion
                send(poll, room, slice)
            }
            if poll.slicesSent.contains(where: { $0 < poll.statsVersion }) {
                pending.append(poll)
            } else {
                poll.statsPending = false
            }
        }
        dirty = pending
    }
}
