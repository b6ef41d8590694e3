/// Reading a poll's results (PROTOCOL.md section 15): `poll-result` access,
/// `poll-responses` and the quiz leaderboard.
extension RoomRegistry {
    /// `poll-result`: `pollWrite`; anyone who may read or vote once
    /// `visibility` is true or the poll has stopped.
    public func requireResultAccess(_ peer: Peer, _ poll: Poll) throws(RoomError) {
        if canWritePolls(peer) { return }
        if poll.visibility || poll.state == .stopped { return }
        throw RoomError(.permissionDenied, "permission denied: results of poll \"\(poll.id)\" are not visible yet")
    }

    /// `poll-responses`: a page of answers (`own`: the caller's user only).
    public func pollResponses(
        _ peer: Peer,
        _ poll: Poll,
        own: Bool,
        index: Int,
        count: Int
    ) throws(RoomError)
        -> (records: [PollRecord], last: Bool)
    {
        if own {
            guard mayVote(peer, in: poll) || canWritePolls(peer) else {
                throw RoomError(
                    .permissionDenied,
                    "permission denied: role \"\(peer.role.name)\" may not vote in this poll"
                )
            }
            let mine = poll.voters[peer.userID]?.records ?? []
            let page = mine.dropFirst(index).prefix(count).map { poll.records[$0] }
            return (page, mine.count - min(index, mine.count) <= count)  // no overflow for any index
        }
        let allowed = canWritePolls(peer) || (poll.responses?.contains(peer.role.name) ?? false)
        guard allowed else {
            throw RoomError(
                .permissionDenied,
                "permission denied: role lacks pollWrite and is not in the poll's responses roles"
            )
        }
        let page = Array(poll.records.dropFirst(index).prefix(count))
        return (page, poll.records.count - min(index, poll.records.count) <= count)
    }

    /// `poll-leaderboard`: quizzes only; `pollWrite`, or anyone who may read once stopped.
    public func leaderboard(_ peer: Peer, _ poll: Poll, offset: Int, count: Int) throws(RoomError) -> Leaderboard {
        guard poll.type == .quiz else { throw .invalidParams("poll_id: poll \"\(poll.id)\" is not a quiz") }
        guard canWritePolls(peer) || poll.state == .stopped else {
            throw RoomError(.permissionDenied, "permission denied: the leaderboard is shown once the quiz has stopped")
        }
        let graded = poll.questions.filter { $0.answer != nil }.count
        let ranked = poll.voters.values.sorted { a, b in
            if a.score != b.score { return a.score > b.score }
            if a.duration != b.duration { return a.duration < b.duration }
            return (a.peer.peerID ?? "", a.userID) < (b.peer.peerID ?? "", b.userID)
        }
        let room = poll.room ?? peer.room
        let entries = ranked.enumerated().dropFirst(offset).prefix(count).map { position, voter in
            LeaderboardEntry(position: position + 1, voter: voter, showsPeer: !poll.anonymous)
        }
        return Leaderboard(
            totalUsers: poll.eligibleVoterCount(in: room, roleNames: template.roleNames),
            votedUsers: ranked.count,
            correctUsers: ranked.filter { graded > 0 && $0.correctResponses == graded }.count,
            entries: entries,
            last: ranked.count - min(offset, ranked.count) <= count
        )
    }
}

/// `poll-leaderboard`'s result.
public struct Leaderboard: Sendable {
    public var totalUsers: Int
    public var votedUsers: Int
    public var correctUsers: Int
    public var entries: [LeaderboardEntry]
    public var last: Bool
}

public struct LeaderboardEntry: Sendable {
    public var position: Int
    public var voter: PollVoter
    /// Whether the entry names its user (`peer`): not for anonymous quizzes.
    public var showsPeer: Bool
}
