import RoomProtocol

/// A poll or quiz of a room session (PROTOCOL.md section 15). Owned by the
/// room's `PollBook`; read by the server's encoders.
///
/// Results are running counters, updated per answer: a vote costs
/// O(questions answered), never a recount of all responses.
public final class Poll {
    public let id: String
    public let createdBy: PeerID?
    public let createdAt: Int64
    /// Creation order within the room (for "newest first").
    let sequence: Int
    /// The room this poll belongs to; nil once the room session is over.
    public internal(set) weak var room: Room?
    /// Its `PollEnd` in the registry's deadlines while it runs with a `duration`.
    var endEntry: DeadlineID?

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
    public internal(set) var startedBy: PeerID?
    public internal(set) var stoppedBy: PeerID?
    public internal(set) var startedAt: Int64?
    public internal(set) var stoppedAt: Int64?
    public internal(set) var questions: [PollQuestion] = []

    /// Per question, in question order.
    public internal(set) var tallies: [QuestionTally] = []
    /// Voters by `user_id`.
    public internal(set) var voters: [UserID: PollVoter] = [:]
    /// Every accepted answer, in arrival order.
    public internal(set) var records: [PollRecord] = []
    /// Answers that were not skips, over all questions.
    public internal(set) var totalResponses = 0
    /// Grows with every vote that counted (what `on-poll-stats` reports).
    var statsVersion = 0
    /// Per stats slice (see `RoomRegistry.pollStatsSlices`, PollSchedule.swift): the `statsVersion` its peers last got.
    var slicesSent: [Int] = []
    /// In `PollSchedule.dirty`.
    var statsPending = false

    init(id: String, info: PollInfoInput, createdBy: PeerID?, createdAt: Int64, sequence: Int, room: Room) {
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
