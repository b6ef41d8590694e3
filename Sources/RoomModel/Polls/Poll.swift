/// A poll or quiz of a room session (PROTOCOL.md section 15). Owned by the
/// room's `PollBook`; read by the server's encoders.
///
/// Results are running counters, updated per answer: a vote costs
/// O(questions answered), never a recount of all responses.
public final class Poll {
    public let id: String
    public let createdBy: String?
    public let createdAt: Int64
    /// Creation order within the room (for "newest first").
    let sequence: Int
    /// The room this poll belongs to; nil once the room session is over.
    public internal(set) weak var room: Room?

    public internal(set) var title: String
    public internal(set) var type: PollType
    /// Seconds; 0 = until stopped.
    public internal(set) var duration: Int
    public internal(set) var anonymous: Bool
    public internal(set) var visibility: Bool
    /// Roles that may vote; nil = every role.
    public internal(set) var vote: [String]?
    /// Roles that may read every response besides `pollWrite`; nil = none.
    public internal(set) var responses: [String]?

    public internal(set) var state: PollState = .created
    public internal(set) var startedBy: String?
    public internal(set) var stoppedBy: String?
    public internal(set) var startedAt: Int64?
    public internal(set) var stoppedAt: Int64?
    public internal(set) var questions: [PollQuestion] = []

    /// Per question, in question order.
    public internal(set) var tallies: [QuestionTally] = []
    /// Voters by `user_id`.
    public internal(set) var voters: [String: PollVoter] = [:]
    /// Every accepted answer, in arrival order.
    public internal(set) var records: [PollRecord] = []
    /// Answers that were not skips, over all questions.
    public internal(set) var totalResponses = 0
    /// Grows with every vote that counted (what `on-poll-stats` reports).
    var statsVersion = 0
    /// Per stats slice (see `RoomRegistry.pollStatsSlices`): the `statsVersion` its peers last got.
    var slicesSent: [Int] = []
    /// In `PollSchedule.dirty`.
    var statsPending = false

    init(id: String, info: PollInfoInput, createdBy: String?, createdAt: Int64, sequence: Int, room: Room) {
        self.id = id
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.sequence = sequence
        self.room = room
        title = info.title
        type = info.type
        duration = info.duration
        anonymous = info.anonymous
        visibility = info.visibility
        vote = info.vote
        responses = info.responses
    }

    func apply(_ info: PollInfoInput) {
        title = info.title
        type = info.type
        duration = info.duration
        anonymous = info.anonymous
        visibility = info.visibility
        vote = info.vote
        responses = info.responses
    }

    /// When a started poll with a `duration` ends.
    public var deadline: Int64? {
        guard state == .started, duration > 0, let startedAt else { return nil }
        return startedAt + Int64(duration) * 1000
    }

    /// Whether a peer of this role may vote (the role is in `vote`, or `vote` is null).
    public func allowsVote(role: String) -> Bool { vote?.contains(role) ?? true }

    /// Whether the quiz answers may be shown to everyone.
    public var answersPublic: Bool { state == .stopped }

    /// Peers in the room who may vote (`max_user`), counted per role: O(roles).
    public func eligibleVoterCount(in room: Room, roleNames: [String]) -> Int {
        roleNames.filter { allowsVote(role: $0) }.reduce(0) { $0 + room.count(ofRole: $1) }
    }
}

public enum PollType: String, Sendable, CaseIterable { case poll, quiz }

public enum PollState: String, Sendable, CaseIterable { case created, started, stopped }

public enum QuestionType: String, Sendable, CaseIterable {
    case singleChoice = "single-choice"
    case multipleChoice = "multiple-choice"
    case shortAnswer = "short-answer"
    case longAnswer = "long-answer"

    public var isChoice: Bool { self == .singleChoice || self == .multipleChoice }
}

/// One question as stored: 1-based `index`, option texts in order, and for a
/// quiz the correct option indexes (sorted).
public struct PollQuestion: Sendable, Equatable {
    public var index: Int
    public var text: String
    public var type: QuestionType
    public var skippable: Bool
    public var weight: Int
    public var answerMinLen: Int?
    public var answerMaxLen: Int?
    public var options: [String]
    public var answer: [Int]?
}

/// Running counts of one question.
public struct QuestionTally: Sendable, Equatable {
    /// Answers per option (index 0 is option 1).
    public var optionCounts: [Int]
    public var skipped = 0
    /// Answers that were not skips.
    public var total = 0
    /// Quiz: correct answers.
    public var correct = 0

    public init(options: Int) { optionCounts = Array(repeating: 0, count: options) }
}

/// One user's standing in a poll.
public struct PollVoter: Sendable, Equatable {
    public var userID: String
    /// The peer of the user's latest answer.
    public var peer: ActorRef
    /// Bit i set: question i+1 answered (at most 20 questions).
    var answered: UInt32 = 0
    public var score = 0
    public var correctResponses = 0
    public var totalResponses = 0
    /// Sum of the `duration` (ms) of the user's answers.
    public var duration: Int64 = 0
    /// Indexes into `Poll.records`.
    public var records: [Int] = []
}

/// One accepted answer (or skip).
public struct PollRecord: Sendable, Equatable {
    public var question: Int
    public var options: [Int]
    public var text: String?
    public var skipped: Bool
    public var userID: String
    public var peer: ActorRef
}

/// `poll-info-set` params, validated by the model.
public struct PollInfoInput: Sendable {
    public var pollID: String?
    public var title: String
    public var type: PollType
    public var duration: Int
    public var anonymous: Bool
    public var visibility: Bool
    public var vote: [String]?
    public var responses: [String]?

    public init(pollID: String? = nil, title: String, type: PollType, duration: Int = 0, anonymous: Bool = false,
                visibility: Bool = false, vote: [String]? = nil, responses: [String]? = nil) {
        self.pollID = pollID
        self.title = title
        self.type = type
        self.duration = duration
        self.anonymous = anonymous
        self.visibility = visibility
        self.vote = vote
        self.responses = responses
    }
}

/// One entry of `poll-questions-set`.
public struct QuestionInput: Sendable {
    public var text: String
    public var type: QuestionType
    public var skippable: Bool
    public var weight: Int
    public var answerMinLen: Int?
    public var answerMaxLen: Int?
    public var options: [String]
    /// Correct option indexes (1-based), for quizzes.
    public var answer: [Int]?

    public init(text: String, type: QuestionType, skippable: Bool = false, weight: Int = 1, answerMinLen: Int? = nil,
                answerMaxLen: Int? = nil, options: [String] = [], answer: [Int]? = nil) {
        self.text = text
        self.type = type
        self.skippable = skippable
        self.weight = weight
        self.answerMinLen = answerMinLen
        self.answerMaxLen = answerMaxLen
        self.options = options
        self.answer = answer
    }
}

/// One entry of `poll-response`.
public struct ResponseInput: Sendable {
    public var question: Int
    public var option: Int?
    public var options: [Int]?
    public var text: String?
    public var skipped: Bool
    /// Milliseconds taken to answer.
    public var duration: Int64

    public init(question: Int, option: Int? = nil, options: [Int]? = nil, text: String? = nil, skipped: Bool = false,
                duration: Int64 = 0) {
        self.question = question
        self.option = option
        self.options = options
        self.text = text
        self.skipped = skipped
        self.duration = duration
    }
}

/// The `result` entry of one response: `correct` for quizzes, or the error of that entry alone.
public struct ResponseOutcome: Sendable, Equatable {
    public var question: Int
    public var correct: Bool?
    public var error: RoomError?
}

/// The polls of one room session, in creation order.
public struct PollBook {
    public private(set) var byID: [String: Poll] = [:]
    public private(set) var ordered: [Poll] = []
    private var serial = 0

    public var count: Int { ordered.count }

    public subscript(id: String) -> Poll? { byID[id] }

    mutating func nextSequence() -> Int {
        serial += 1
        return serial
    }

    /// Creation counter (a snapshot carries it, RoomSnapshot.swift).
    var serialCounter: Int {
        get { serial }
        set { serial = newValue }
    }

    mutating func add(_ poll: Poll) {
        byID[poll.id] = poll
        ordered.append(poll)
    }
}
