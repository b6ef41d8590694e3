/// The session's leaderboard (PROTOCOL.md section 21, "Polls, 1.2
/// wording"): every stopped quiz of the room session added up per user.
extension RoomRegistry {
    /// `poll-leaderboard {}` without `poll_id`: anyone in the room may read
    /// it. Per user: the sums of score, correct and total responses and
    /// duration; ranked as a quiz's board (score, then less time, then ids).
    /// `total_users` counts the users who may vote in any stopped quiz (the
    /// peers in the room now, and the users who voted), `voted_users` those
    /// who voted in one, `correct_users` those who answered every graded
    /// question of every stopped quiz correctly. A user is shown (`peer`) as
    /// of their latest answer in a quiz that is not anonymous; one who
    /// answered only anonymous quizzes is listed without `peer`.
    public func sessionLeaderboard(in room: Room, offset: Int, count: Int) -> Leaderboard {
        let quizzes = room.polls.ordered.filter { $0.type == .quiz && $0.state == .stopped }
        var totals: [UserID: PollVoter] = [:]
        var shown: Set<UserID> = []
        var eligible: Set<UserID> = []
        var graded = 0
        for quiz in quizzes {
            graded += quiz.questions.filter { $0.answer != nil }.count
            for peer in room.peersInJoinOrder where quiz.allowsVote(role: peer.role.name) {
                eligible.insert(peer.userID)
            }
            for voter in quiz.voters.values {
                var total = totals[voter.userID] ?? PollVoter(userID: voter.userID, peer: voter.peer)
                total.score += voter.score
                total.correctResponses += voter.correctResponses
                total.totalResponses += voter.totalResponses
                total.duration += voter.duration
                if !quiz.anonymous {
                    total.peer = voter.peer  // quizzes in order: the latest one named wins
                    shown.insert(voter.userID)
                }
                totals[voter.userID] = total
                eligible.insert(voter.userID)
            }
        }
        let ranked = totals.values.sorted { a, b in
            if a.score != b.score { return a.score > b.score }
            if a.duration != b.duration { return a.duration < b.duration }
            return a.userID < b.userID
        }
        let entries = ranked.enumerated().dropFirst(offset).prefix(count).map { position, voter in
            LeaderboardEntry(position: position + 1, voter: voter, showsPeer: shown.contains(voter.userID))
        }
        return Leaderboard(
            totalUsers: eligible.count,
            votedUsers: ranked.count,
            correctUsers: graded == 0 ? 0 : ranked.filter { $0.correctResponses == graded }.count,
            entries: entries,
            last: ranked.count - min(offset, ranked.count) <= count
        )
    }
}
