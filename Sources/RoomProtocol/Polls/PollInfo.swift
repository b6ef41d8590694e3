import RoomWire

// Polls and quizzes (PROTOCOL.md section 15): a poll's type and state.

/// `"poll"` or `"quiz"`.
public enum PollType: String, Sendable, Equatable, Hashable, CaseIterable { case poll, quiz }

/// `"created"` → `"started"` → `"stopped"`.
public enum PollState: String, Sendable, Equatable, Hashable, CaseIterable { case created, started, stopped }
