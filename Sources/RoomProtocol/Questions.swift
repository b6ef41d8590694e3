// Audience Q&A (PROTOCOL.md section 21). Same conventions as Peers.swift.

/// Where an audience question is: open, answered, or hidden by a moderator (or its asker).
public enum QuestionState: String, Sendable, Equatable, Hashable, CaseIterable {
    case open, answered, hidden
}

/// A user's vote on a question; `none` withdraws it.
public enum QuestionVote: String, Sendable, Equatable, Hashable, CaseIterable {
    case up, down, none
}

/// The order of `question-list`: `top` (pinned, then score, then oldest) or `new`.
public enum QuestionOrder: String, Sendable, Equatable, Hashable, CaseIterable {
    case top, new
}
