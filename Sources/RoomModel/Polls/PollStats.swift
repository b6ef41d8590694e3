/// `on-poll-stats` (PROTOCOL.md section 15): the pushes of vote counts,
/// served in slices. What is due is kept by `PollSchedule`.
extension RoomRegistry {
    /// The stats interval is served in slices: every peer belongs to one
    /// slice (by join order), and each timer tick serves one slice, so that a
    /// poll in a room of 10,000 sends ~500 pushes every twentieth of the
    /// interval instead of 10,000 at once (a burst that would hold up the votes
    /// behind it). A peer's slice comes round once per interval: at most one
    /// push per poll per peer per interval, and only when a vote counted since
    /// its slice's last push. At most 20 slices, each at least 50 ms apart.
    public var pollStatsSlices: Int { max(1, min(20, settings.polls.statsIntervalMs / 50)) }

    /// The stats timer's period: the interval divided by the slices, rounded
    /// up (so that a slice comes round no sooner than once per interval).
    public var pollStatsTickMs: Int {
        let slices = pollStatsSlices
        return (settings.polls.statsIntervalMs + slices - 1) / slices
    }

    /// One stats tick (the server calls this every `pollStatsTickMs`): for
    /// each poll with votes its slice has not heard of, one `on-poll-stats`
    /// to that slice's `pollWrite` peers (with `correct`) and, with
    /// `visibility`, to its other peers that may read the poll. Each
    /// delivery is encoded once for all its recipients.
    public func tickPollStats() -> [Delivery] {
        let slices = pollStatsSlices
        var deliveries: [Delivery] = []
        pollSchedule.tickStats(slices: slices) { poll, room, slice in
            var writers: [Peer] = []
            var readers: [Peer] = []
            for peer in room.peersInJoinOrder where peer.sequence % slices == slice {
                if canWritePolls(peer) {
                    writers.append(peer)
                } else if poll.visibility, mayRead(peer, poll) {
                    readers.append(peer)
                }
            }
            let maxUser = poll.eligibleVoterCount(in: room, roleNames: template.roleNames)
            deliveries.append(Delivery(.pollStats(poll, maxUser: maxUser, withCorrect: true), to: writers))
            // The quiz's correct counts would hint at the answers: others see them once it stopped.
            deliveries.append(
                Delivery(.pollStats(poll, maxUser: maxUser, withCorrect: poll.answersPublic), to: readers)
            )
        }
        return deliveries.nonEmpty
    }
}
