import RoomProtocol

/// Audience Q&A (PROTOCOL.md section 21): viewers ask, everyone votes, the
/// host takes questions from the top. Pushes are coalesced per room
/// (`tickQuestions`, every `settings.qa.interval_ms`).
extension RoomRegistry {
    public typealias QuestionOrder = RoomProtocol.QuestionOrder

    /// `moderateChat` of a peer's role; a `view_and_polls_only` peer never has it.
    public func canModerateChat(_ peer: Peer) -> Bool { peer.role.permissions.moderateChat && !peer.viewOnly }

    /// `canModerateChat` of a peer; REST (the server) moderates.
    public func canModerateChat(_ initiator: Initiator) -> Bool {
        switch initiator {
        case .peer(let peer): canModerateChat(peer)
        case .server: true
        }
    }

    /// `question-add {text}`: not for `view_and_polls_only` peers.
    public func addQuestion(by peer: Peer, text: String) throws(RoomError) -> Question {
        try peer.requireUnrestricted("question-add")
        if text.isEmpty { throw .invalidParams("text: must not be empty") }
        try checkSize(text, field: "text", limit: settings.limits.maxChatBytes)
        try checkQuestionRules(peer, text: text)
        let room = peer.room
        let limit = settings.qa.maxQuestions
        if room.questions.added >= limit {
            throw RoomError(.tooMany, "too many questions: \(limit) were asked in this session (max_questions)")
        }
        var question = Question(
            id: ids.next(.question),
            text: text,
            askedBy: ActorRef(peer),
            askedAt: clock.nowMillis()
        )
        question.shadowed = isShadowed(peer)  // section 31: its user and the moderators only
        room.questions.add(question)
        qaSchedule.changed(room)
        feedQuestion(id: question.id, in: room)
        return question.unmarked
    }

    /// `question-vote {question_id, vote}`: anyone, `view_and_polls_only` too;
    /// a hidden question is 40406 without `moderateChat`.
    public func voteQuestion(by peer: Peer, _ id: String, _ vote: Question.Vote) throws(RoomError) -> Question {
        let room = peer.room
        let question = try visibleQuestion(id, to: peer)
        let isNew = question.votes[peer.userID] == nil && vote != .none
        if isNew, room.questions.votes >= QuestionBoard.maxVotes {
            throw RoomError(.tooMany, "too many votes in this room: at most \(QuestionBoard.maxVotes)")
        }
        room.questions.update(id, votesOnly: true) { _ = $0.vote(vote, by: peer.userID) }
        qaSchedule.changed(room)
        feedQuestion(id: id, in: room)
        let voted = room.questions.question(id)!
        return canModerateChat(peer) ? voted : voted.unmarked
    }

    /// The feed hears of a question as it is now (nil: deleted), without who voted how.
    private func feedQuestion(id: String, in room: Room) {
        if room.questions.question(id)?.shadowed == true { return }  // never in the feed
        room.feed?.question(id, room.questions.question(id)?.withoutVotes, at: clock.nowMillis())
    }

    /// `question-list`: `state` open by default (hidden needs `moderateChat`);
    /// `top`: pinned first, then score descending, then oldest; `new`: newest
    /// first. `total` counts the questions of that state before paging.
    public func listQuestions(
        for peer: Peer,
        state: Question.State,
        order: QuestionOrder,
        offset: Int,
        limit: Int
    ) throws(RoomError) -> (questions: [Question], total: Int) {
        try listQuestions(by: .peer(peer), in: peer.room, state: state, order: order, offset: offset, limit: limit)
    }

    /// `question-list` of a peer, or of REST (`GET …/questions`, section 32:
    /// a moderator, it sees shadowed questions marked).
    public func listQuestions(
        by initiator: Initiator,
        in room: Room,
        state: Question.State,
        order: QuestionOrder,
        offset: Int,
        limit: Int
    ) throws(RoomError) -> (questions: [Question], total: Int) {
        let moderator = canModerateChat(initiator)
        if state == .hidden, !moderator {
            throw RoomError(.permissionDenied, "permission denied: hidden questions need moderateChat")
        }
        var user: String?
        if case .peer(let peer) = initiator { user = peer.userID.rawValue }
        let matching = room.questions.all.filter { question in
            question.state == state && (!question.shadowed || moderator || question.askedBy.userID == user)
        }
        let sorted: [Question]
        switch order {
        case .top:
            sorted = matching.sorted { a, b in
                if a.pinned != b.pinned { return a.pinned }
                if a.score != b.score { return a.score > b.score }
                if a.askedAt != b.askedAt { return a.askedAt < b.askedAt }
                return a.id < b.id
            }
        case .new:
            sorted = matching.reversed()  // asked order: newest last
        }
        let page = Array(sorted.dropFirst(offset).prefix(limit))
        return (moderator ? page : page.map(\.unmarked), matching.count)
    }

    /// `question-update {question_id, state?, pinned?}`: `moderateChat`; the
    /// asker (same `user_id`) may only hide its own question (withdraw it).
    /// Pinning one unpins the other.
    public func updateQuestion(
        by peer: Peer,
        _ id: String,
        state: Question.State?,
        pinned: Bool?
    ) throws(RoomError) -> Question {
        try updateQuestion(by: .peer(peer), in: peer.room, id, state: state, pinned: pinned)
    }

    /// `question-update` of a peer, or of REST (`PATCH …/questions/{question_id}`, section 32).
    public func updateQuestion(
        by initiator: Initiator,
        in room: Room,
        _ id: String,
        state: Question.State?,
        pinned: Bool?
    ) throws(RoomError) -> Question {
        if state == nil, pinned == nil { throw .invalidParams("state or pinned: give at least one") }
        guard let question = room.questions.question(id) else { throw Self.noQuestion(id) }
        if case .peer(let peer) = initiator, !canModerateChat(peer) {
            let own = question.askedBy.userID == peer.userID.rawValue
            guard own, state == .hidden, pinned == nil, !peer.viewOnly else {
                if question.state == .hidden || question.shadowed, !own { throw Self.noQuestion(id) }
                throw RoomError(
                    .permissionDenied,
                    "permission denied: role lacks moderateChat (an asker may only set its own question hidden)"
                )
            }
        }
        if pinned == true, let other = room.questions.pinnedID, other != id {
            room.questions.update(other) { $0.pinned = false }
            feedQuestion(id: other, in: room)
        }
        room.questions.update(id) { q in
            if let state { q.state = state }
            if let pinned { q.pinned = pinned }
        }
        qaSchedule.changed(room)
        feedQuestion(id: id, in: room)
        let updated = room.questions.question(id)!
        return canModerateChat(initiator) ? updated : updated.unmarked
    }

    /// `question-delete {question_id}`: the asker or `moderateChat`.
    public func deleteQuestion(by peer: Peer, _ id: String) throws(RoomError) {
        let room = peer.room
        guard let question = room.questions.question(id) else { throw Self.noQuestion(id) }
        if !canModerateChat(peer) {
            let own = question.askedBy.userID == peer.userID.rawValue
            if !own, question.state == .hidden || question.shadowed { throw Self.noQuestion(id) }
            guard own, !peer.viewOnly else {
                throw RoomError(
                    .permissionDenied,
                    "permission denied: question \"\(id)\" is another peer's and the role lacks moderateChat"
                )
            }
        }
        room.questions.delete(id)
        qaSchedule.changed(room)
        feedQuestion(id: id, in: room)
    }

    /// The most bytes of encoded questions and ids one `on-questions`
    /// carries: `QuestionBoard.pushBudget`, at most a quarter of `max_outbound_bytes`.
    public var questionPushBudget: Int {
        max(1, min(QuestionBoard.pushBudget, settings.limits.maxOutboundBytes / 4))
    }

    /// One Q&A tick: each room with changes gets one `on-questions` for its
    /// `moderateChat` peers (every change) and one for the others (hidden
    /// questions only as ids in `removed`) — two encodings per room per tick,
    /// each within `questionPushBudget` bytes of encoded JSON (the rest goes
    /// next tick).
    public func tickQuestions() -> [Delivery] {
        var deliveries: [Delivery] = []
        let budget = questionPushBudget
        for room in qaSchedule.takeRooms(from: rooms, where: { $0.questions.hasChanges }) {
            let (changed, removed) = room.questions.takeChanges(budget: budget)
            if room.questions.hasChanges { qaSchedule.changed(room) }  // the rest, next tick
            var moderators: [Peer] = []
            var others: [Peer] = []
            for peer in room.peersInJoinOrder {
                if canModerateChat(peer) { moderators.append(peer) } else { others.append(peer) }
            }
            deliveries.append(Delivery(.questions(changed: changed, removed: removed), to: moderators))
            let shown = changed.filter { $0.state != .hidden && !$0.shadowed }
            let hidden = changed.filter { $0.state == .hidden && !$0.shadowed }.map(\.id)
            // Section 31: a shadowed question's changes reach its own user's peers as well
            // (unmarked), in that user's one push of the tick.
            let shadowedUsers = Set(changed.lazy.filter(\.shadowed).compactMap(\.askedBy.userID))
            var plain = others
            if !shadowedUsers.isEmpty {
                plain = others.filter { !shadowedUsers.contains($0.userID.rawValue) }
                for user in shadowedUsers.sorted() {
                    let peers = others.filter { $0.userID.rawValue == user }
                    let mine = changed.filter { $0.shadowed && $0.askedBy.userID == user }
                    let own: [Question] = shown + mine.filter { $0.state != .hidden }.map(\.unmarked)
                    let gone: [String] = removed + hidden + mine.filter { $0.state == .hidden }.map(\.id)
                    deliveries.append(Delivery(.questions(changed: own, removed: gone), to: peers))
                }
            }
            if !shown.isEmpty || !removed.isEmpty || !hidden.isEmpty {
                deliveries.append(Delivery(.questions(changed: shown, removed: removed + hidden), to: plain))
            }
        }
        return deliveries.nonEmpty
    }

    private func visibleQuestion(_ id: String, to peer: Peer) throws(RoomError) -> Question {
        guard let question = peer.room.questions.question(id), question.state != .hidden || canModerateChat(peer),
            !question.shadowed || canModerateChat(peer) || question.askedBy.userID == peer.userID.rawValue
        else { throw Self.noQuestion(id) }
        return question
    }

    private static func noQuestion(_ id: String) -> RoomError {
        RoomError(.questionNotFound, "question_id: no question \"\(id)\"")
    }
}
