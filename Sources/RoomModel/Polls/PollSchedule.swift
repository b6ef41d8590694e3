/// Polls the server's timers look after (PROTOCOL.md section 15): started
/// polls with a `duration`, and polls with votes whose `on-poll-stats` some
/// slice has not had yet. Entries of ended room sessions (their `room` is
/// nil) are dropped as they are met.
struct PollSchedule {
    /// Started polls with a `duration`.
    private var timed: [Poll] = []
    /// Polls with changes that some stats slice has not been sent yet.
    private var dirty: [Poll] = []
    /// Stats timer ticks so far (the slice of a tick is `ticks % slices`).
    private var statsTicks = 0

    /// A started poll with a `duration` waits for its deadline.
    mutating func time(_ poll: Poll) {
        timed.removeAll { $0.room == nil || $0.state != .started }  // ended sessions, stopped polls
        timed.append(poll)
    }

    /// Takes the timed polls whose deadline has come at `now`, in the order they were timed.
    mutating func takeDue(now: Int64) -> [Poll] {
        var due: [Poll] = []
        var pending: [Poll] = []
        for poll in timed where poll.room != nil {
            guard let deadline = poll.deadline else { continue }
            if deadline <= now { due.append(poll) } else { pending.append(poll) }
        }
        timed = pending
        return due
    }

    /// When the next timed poll ends.
    var nextDeadline: Int64? {
        timed.lazy.filter { $0.room != nil }.compactMap(\.deadline).min()
    }

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
