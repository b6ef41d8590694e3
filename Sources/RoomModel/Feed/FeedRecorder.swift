import RoomProtocol

/// The audience feed's record of one room session (PROTOCOL.md section 24):
/// per whole second, what the feed tells — chat to everyone, deletions,
/// reaction totals, polls started or stopped, poll stats, question changes —
/// and the room's state at the end of that second (stream, peer count,
/// pinned message, chat state). Seconds without anything are not stored: a
/// span's state is that of the last stored second before its end.
///
/// Clock-injected: every call carries the registry's `now` (ms). Bounded:
/// seconds older than `window_s` go, each list of a second holds at most
/// `maxItemsPerSecond`, and the whole record at most `maxItems` items (the
/// oldest seconds go first; a span that asks for them is 410 like one older
/// than the window). Service thread only, like the rest of RoomModel.
public final class FeedRecorder {
    /// Each list of one second (chat, deleted, reactions, …) keeps at most this many; the rest is counted in `dropped`.
    public static let maxItemsPerSecond = 1000
    /// Items held over every second of the record.
    public static let maxItems = 50_000

    public let roomID: RoomID
    public let sessionID: String
    public let startedAt: Int64
    /// When the session ended (ms), nil while it runs.
    public private(set) var endedAt: Int64?
    /// The session's audit log (section 32), kept with its feed's record.
    var audit: AuditLog?
    /// Seconds before this one are no longer held (trimmed by the window or the item budget).
    public private(set) var heldFrom: Int64
    /// Items refused by the per-second caps.
    public private(set) var dropped = 0
    /// The room's state after the last change.
    private(set) var latest: FeedState
    /// The state at the end of the last second that was trimmed (or at the start).
    private var baseline: FeedState
    /// Stored seconds, oldest first; the last may still be open (`open`).
    private var seconds: [FeedSecond] = []
    /// Whether the last element of `seconds` is the second still running (its polls' stats not yet taken).
    private var open = false
    /// Polls voted on in the open second, whose stats are taken when it closes.
    private var votedPolls: [Poll] = []
    private(set) var items = 0
    let windowSeconds: Int64
    /// The template's role names, for a poll's `max_user`.
    let roleNames: [String]

    init(roomID: RoomID, sessionID: String, startedAt: Int64, state: FeedState, windowSeconds: Int, roleNames: [String])
    {
        self.roleNames = roleNames
        self.roomID = roomID
        self.sessionID = sessionID
        self.startedAt = startedAt
        self.windowSeconds = Int64(windowSeconds)
        latest = state
        baseline = state
        heldFrom = .min  // before its start a session has nothing to tell: every second of it is held
    }

    static func second(_ millis: Int64) -> Int64 { millis >= 0 ? millis / 1000 : (millis - 999) / 1000 }

    /// Seconds stored (for tests of the bound).
    public var storedSeconds: Int { seconds.count }
    /// Items held (for tests of the bound).
    public var heldItems: Int { items }

    // MARK: recording

    /// The open second for an event at `now`: the previous one closes first.
    private func current(_ now: Int64) -> Int {
        let second = Self.second(now)
        if let last = seconds.last, open, last.second == second { return seconds.count - 1 }
        close()
        trim(now: second)
        seconds.append(FeedSecond(second: second, state: latest))
        open = true
        return seconds.count - 1
    }

    /// Closes the open second: the stats of the polls voted on in it are taken now
    /// (every later vote closes it first, so they are its end's).
    func close() {
        guard open, !seconds.isEmpty else { return }
        open = false
        let i = seconds.count - 1
        for poll in votedPolls where poll.visibility {
            if let index = seconds[i].pollStats.firstIndex(where: { $0.pollID == poll.id }) {
                seconds[i].pollStats[index] = FeedPollStats(poll, roleNames: roleNames)
            } else {
                seconds[i].pollStats.append(FeedPollStats(poll, roleNames: roleNames))
                items += 1
            }
        }
        votedPolls.removeAll(keepingCapacity: true)
    }

    private func trim(now second: Int64) {
        let oldest = second - windowSeconds - 1
        var drop = 0
        while drop < seconds.count, seconds[drop].second < oldest || items > Self.maxItems {
            if drop == seconds.count - 1, open { break }
            items -= seconds[drop].items
            baseline = seconds[drop].state
            heldFrom = seconds[drop].second + 1
            drop += 1
        }
        if drop > 0 { seconds.removeFirst(drop) }
        heldFrom = max(heldFrom, oldest)
    }

    private func appendCapped<T>(_ list: inout [T], _ value: T) -> Bool {
        guard list.count < Self.maxItemsPerSecond else {
            dropped += 1
            return false
        }
        list.append(value)
        items += 1
        return true
    }

    /// A message to everyone.
    func chat(_ message: ChatMessage, at now: Int64) {
        let i = current(now)
        _ = appendCapped(&seconds[i].chat, message)
    }

    /// Messages that left the history (deleted, or cleared).
    func deleted(_ ids: [String], at now: Int64) {
        let i = current(now)
        for id in ids where !appendCapped(&seconds[i].deleted, id) { break }
    }

    /// A reaction total after a change.
    func reaction(_ count: ReactionCount, at now: Int64) {
        let i = current(now)
        if let index = seconds[i].reactions.firstIndex(where: { $0.target == count.target && $0.type == count.type }) {
            seconds[i].reactions[index].total = count.total
        } else {
            _ = appendCapped(&seconds[i].reactions, count)
        }
    }

    /// A poll started or stopped.
    func poll(_ poll: Poll, at now: Int64) {
        let i = current(now)
        let info = FeedPollInfo(poll)
        if let index = seconds[i].polls.firstIndex(where: { $0.pollID == poll.id }) {
            seconds[i].polls[index] = info
        } else {
            _ = appendCapped(&seconds[i].polls, info)
        }
        if poll.visibility, poll.state == .stopped { willVote(poll, at: now) }  // its final stats
    }

    /// A vote on `poll` is about to count (called before the change).
    func willVote(_ poll: Poll, at now: Int64) {
        _ = current(now)
        if !votedPolls.contains(where: { $0 === poll }) { votedPolls.append(poll) }
    }

    /// A question added or changed (hidden: listed as removed), or deleted (`question` nil).
    func question(_ id: String, _ question: Question?, at now: Int64) {
        let i = current(now)
        seconds[i].questions.removeAll { $0.id == id }
        seconds[i].removedQuestions.removeAll { $0 == id }
        if let question, question.state != .hidden {
            _ = appendCapped(&seconds[i].questions, question)
        } else {
            _ = appendCapped(&seconds[i].removedQuestions, id)
        }
    }

    /// The room's state now; stored when it changed.
    func state(_ state: FeedState, at now: Int64) {
        guard state != latest else { return }
        let i = current(now)
        latest = state
        seconds[i].state = state
    }

    /// The session ended at `now`.
    func ended(at now: Int64) {
        guard endedAt == nil else { return }
        _ = current(now)
        close()
        endedAt = now
    }

    // MARK: reading

    /// The stored seconds of [from, to) (whole seconds, `to` not after now)
    /// with the room's state as of `to`, or nil when part of it is no longer
    /// held. O(log seconds + the span's seconds): a span never scans the
    /// rest of the record. Every second it holds is closed (in the past), so
    /// its contents never change.
    func spanSeconds(from: Int64, to: Int64, now: Int64) -> FeedSeconds? {
        if let last = seconds.last, open, last.second < Self.second(now) { close() }
        guard from >= heldFrom else { return nil }
        var low = 0
        var high = seconds.count
        while low < high {  // the first stored second ≥ from
            let mid = (low + high) / 2
            if seconds[mid].second < from { low = mid + 1 } else { high = mid }
        }
        let start = low
        high = seconds.count
        while low < high {  // the first stored second ≥ to
            let mid = (low + high) / 2
            if seconds[mid].second < to { low = mid + 1 } else { high = mid }
        }
        let end = low
        var state = start > 0 ? seconds[start - 1].state : baseline
        if end > start { state = seconds[end - 1].state }
        return FeedSeconds(
            roomID: roomID,
            sessionID: sessionID,
            from: from,
            to: to,
            state: state,
            seconds: Array(seconds[start..<end]),
            ended: endedAt.map { $0 < to * 1000 } ?? false
        )
    }

    /// The feed of [from, to) (whole seconds, `to` not after now), or nil
    /// when part of it is no longer held.
    func span(from: Int64, to: Int64, now: Int64) -> FeedSpan? {
        guard let stored = spanSeconds(from: from, to: to, now: now) else { return nil }
        var span = FeedSpan(roomID: roomID, from: from, to: to, state: stored.state)
        for second in stored.seconds {
            span.chat += second.chat
            span.deleted += second.deleted
        }
        let merge = stored.merge()
        let items = stored.seconds
        span.reactions = merge.reactions.map { items[$0.second].reactions[$0.item] }
        span.polls = merge.polls.map { items[$0.second].polls[$0.item] }
        span.pollStats = merge.pollStats.map { items[$0.second].pollStats[$0.item] }
        span.questionsChanged = merge.questionsChanged.map { items[$0.second].questions[$0.item] }
        span.questionsRemoved = merge.questionsRemoved
        span.ended = stored.ended
        return span
    }
}

/// The stored seconds of one span and the room's state as of its end: what a
/// body is made of (the server encodes each second once and assembles a
/// span's body from those pieces, `merge()` telling which entries it keeps).
public struct FeedSeconds: Sendable {
    public var roomID: RoomID
    public var sessionID: String
    public var from: Int64
    public var to: Int64
    /// The room as of `to`.
    public var state: FeedState
    /// The span's stored seconds, oldest first (seconds without anything are not stored).
    public var seconds: [FeedSecond]
    public var ended: Bool

    /// Which entries of the seconds' lists a span keeps, in the order it lists
    /// them: the latest total of each (target, type), the latest PollInfo and
    /// PollResult of each poll, the latest of each question changed (at the
    /// place it first took) unless removed after, and the ids removed (a
    /// question removed then changed again in the span is only changed).
    /// O(the span's items).
    public func merge() -> FeedMerge {
        var merge = FeedMerge()
        var reactionIndex: [ReactionKey: Int] = [:]
        var pollIndex: [String: Int] = [:]
        var statsIndex: [String: Int] = [:]
        var questionIndex: [String: Int] = [:]
        /// Removed ids by their place in `removedOrder`; nil entries were changed again.
        var removedAt: [String: Int] = [:]
        var removedOrder: [String?] = []
        for (s, second) in seconds.enumerated() {
            for (i, count) in second.reactions.enumerated() {
                Self.upsert(
                    FeedItemRef(second: s, item: i),
                    key: ReactionKey(target: count.target, type: count.type),
                    into: &merge.reactions,
                    at: &reactionIndex
                )
            }
            for (i, info) in second.polls.enumerated() {
                Self.upsert(FeedItemRef(second: s, item: i), key: info.pollID, into: &merge.polls, at: &pollIndex)
            }
            for (i, stats) in second.pollStats.enumerated() {
                Self.upsert(FeedItemRef(second: s, item: i), key: stats.pollID, into: &merge.pollStats, at: &statsIndex)
            }
            // One id is in at most one of a second's two lists (FeedRecorder.question).
            for (i, question) in second.questions.enumerated() {
                if let at = removedAt.removeValue(forKey: question.id) { removedOrder[at] = nil }
                Self.upsert(
                    FeedItemRef(second: s, item: i),
                    key: question.id,
                    into: &merge.questionsChanged,
                    at: &questionIndex
                )
            }
            for id in second.removedQuestions where removedAt[id] == nil {
                removedAt[id] = removedOrder.count
                removedOrder.append(id)
            }
        }
        merge.questionsRemoved = removedOrder.compactMap { $0 }
        if !removedAt.isEmpty {
            merge.questionsChanged.removeAll { removedAt[seconds[$0.second].questions[$0.item].id] != nil }
        }
        return merge
    }

    private struct ReactionKey: Hashable {
        var target: String
        var type: String
    }

    /// The latest `ref` for `key` in `list`, at the place its key first took.
    private static func upsert<K: Hashable>(
        _ ref: FeedItemRef,
        key: K,
        into list: inout [FeedItemRef],
        at index: inout [K: Int]
    ) {
        if let i = index[key] {
            list[i] = ref
        } else {
            index[key] = list.count
            list.append(ref)
        }
    }
}

/// An entry of one of a second's lists: `seconds[second].list[item]`.
public struct FeedItemRef: Sendable, Equatable {
    public var second: Int
    public var item: Int
}

/// What a span keeps of its seconds' lists (`FeedSeconds.merge`); chat and
/// deletions are every second's, in order.
public struct FeedMerge: Sendable, Equatable {
    public var reactions: [FeedItemRef] = []
    public var polls: [FeedItemRef] = []
    public var pollStats: [FeedItemRef] = []
    public var questionsChanged: [FeedItemRef] = []
    public var questionsRemoved: [String] = []
}

/// What one second recorded.
public struct FeedSecond: Sendable {
    public internal(set) var second: Int64
    public internal(set) var chat: [ChatMessage] = []
    public internal(set) var deleted: [String] = []
    public internal(set) var reactions: [ReactionCount] = []
    public internal(set) var polls: [FeedPollInfo] = []
    public internal(set) var pollStats: [FeedPollStats] = []
    public internal(set) var questions: [Question] = []
    public internal(set) var removedQuestions: [String] = []
    /// The room's state at the end of this second.
    public internal(set) var state: FeedState

    init(second: Int64, state: FeedState) {
        self.second = second
        self.state = state
    }

    public var items: Int {
        chat.count + deleted.count + reactions.count + polls.count + pollStats.count + questions.count
            + removedQuestions.count
    }
}

/// The room as a feed sees it at one time: `stream`, `peer_count`, `pinned`, `chat_state`.
public struct FeedState: Sendable, Equatable {
    public var stream: LiveStream?
    public var peerCount: Int
    public var pinned: ChatMessage?
    public var paused: Bool
    public var slowModeSeconds: Int

    init(_ room: Room) {
        stream = room.liveStream
        peerCount = room.peerCount
        pinned = room.chat.pinned
        paused = room.chatControls.paused
        slowModeSeconds = room.chatControls.slowModeSeconds
    }
}

/// PollInfo as it was when a poll started or stopped.
public struct FeedPollInfo: Sendable, Equatable {
    public var pollID: String
    public var title: String
    public var type: PollType
    public var state: PollState
    public var duration: Int
    public var anonymous: Bool
    public var visibility: Bool
    public var vote: [String]?
    public var responses: [String]?
    public var createdBy: PeerID?
    public var startedBy: PeerID?
    public var stoppedBy: PeerID?
    public var createdAt: Int64
    public var startedAt: Int64?
    public var stoppedAt: Int64?
    public var questionsCount: Int

    public init(_ poll: Poll) {
        pollID = poll.id
        title = poll.title
        type = poll.type
        state = poll.state
        duration = poll.duration
        anonymous = poll.anonymous
        visibility = poll.visibility
        vote = poll.vote
        responses = poll.responses
        createdBy = poll.createdBy
        startedBy = poll.startedBy
        stoppedBy = poll.stoppedBy
        createdAt = poll.createdAt
        startedAt = poll.startedAt
        stoppedAt = poll.stoppedAt
        questionsCount = poll.questions.count
    }
}

/// PollResult as it was at the end of a second.
public struct FeedPollStats: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var question: Int
        public var type: String
        public var tally: QuestionTally
        /// Quiz questions with an answer, once the quiz stopped.
        public var showsCorrect: Bool
    }

    public var pollID: String
    public var userCount: Int
    public var maxUser: Int
    public var totalResponse: Int
    public var questions: [Entry]

    init(_ poll: Poll, roleNames: [String]) {
        pollID = poll.id
        userCount = poll.voters.count
        maxUser = poll.room.map { poll.eligibleVoterCount(in: $0, roleNames: roleNames) } ?? 0
        totalResponse = poll.totalResponses
        let quizAnswers = poll.type == .quiz && poll.state == .stopped
        questions = poll.questions.enumerated().map { i, question in
            Entry(
                question: question.index,
                type: question.type.rawValue,
                tally: i < poll.tallies.count ? poll.tallies[i] : QuestionTally(options: question.options.count),
                showsCorrect: quizAnswers && question.answer != nil
            )
        }
    }
}

/// The feed of one span, as the server encodes it.
public struct FeedSpan: Sendable, Equatable {
    public var roomID: RoomID
    public var from: Int64
    public var to: Int64
    /// The room as of `to`.
    public var state: FeedState
    public var chat: [ChatMessage] = []
    public var deleted: [String] = []
    public var reactions: [ReactionCount] = []
    public var polls: [FeedPollInfo] = []
    public var pollStats: [FeedPollStats] = []
    public var questionsChanged: [Question] = []
    public var questionsRemoved: [String] = []
    public var ended = false
}
