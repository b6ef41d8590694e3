import RoomProtocol

/// A room's lasting state as one value (PROTOCOL.md section 18, docs/CLUSTER.md):
/// the room's home node stores it on the bus after changes; a node that
/// takes the room over when its home died restores it (Takeover.swift).
/// What it leaves out is what a restart of the room's timers rebuilds or
/// what expires anyway: active speakers, pending role-change requests,
/// `find-peer` iterators, large-room `room-state` bookkeeping, and the
/// peers' connections.
///
/// On the bus it is RoomWire JSON (`encodeJSON()`, `init(json:)`), one
/// object with every field present (null where a value is absent),
/// snake_case keys, and no other keys:
///
///     {"format":2, "id", "session_id", "started_at", "next_sequence", "locked",
///      "peers":[{"id", "user_id", "joined_at", "sequence", "role", "name", "data",
///                "groups":[…], "view_only", "metadata_listening": "*" or [keys],
///                "tracks":[{"id", "kind", "source", "mute", "description"}]}],
///      "session_store":{"entries":[{"key", "value": <the JSON value>, "version",
///                                   "updated_by": ActorRef|null, "updated_at"}],
///                       "tombstones":[keys]},
///      "poll_serial", "polls":[PollSnapshot], "live_stream": LiveStream|null,
///      "chat":{"messages":[Message], "pinned": Message|null},
///      "qa":{"added", "questions":[{"id", "text", "asked_by": ActorRef, "asked_at",
///            "up", "down", "state", "pinned"}], "votes":[{"id", "up":[user_id], "down":[user_id]}]},
///      "reactions":[ReactionTarget], "moderation": Moderation,
///      "rtmp": {"running", "started_at", "started_by", "stopped_at", "stopped_by",
///               "meeting_url", "urls"}|null,
///      "recording": {"running", "started_at", "started_by", "stopped_at",
///                    "stopped_by", "with_rtmp"}|null}
///
/// A LiveStream also carries `state`, `starts_at` and `vod_url` (1.2,
/// section 23); one saved before them reads as `live` or `ended`.
///
/// A Message is `{"id", "timestamp", "sender": ActorRef, "message", "type"}`.
/// The history is saved newest first up to `chatBudgetBytes` of JSON (a
/// room's state must fit in one value on the bus): a takeover keeps the
/// newest messages. The questions likewise keep the newest within
/// `qaBudgetBytes`, and who voted how within `votesBudgetBytes` (the
/// counts are always kept; a user whose vote was left out may vote again).
/// A ReactionTarget (ReactionSnapshot.swift) holds a
/// target's totals, what its peers last heard, and the users' counts; the
/// reactions take at most `reactionsBudgetBytes`: every total of the stream
/// and the contestants, the messages' newest first, then the users' counts
/// while they fit. Format 1 (1.1, no `chat`, `qa` or `reactions`) is still
/// read, and format 2 without `reactions` (saved before them) as a room
/// without reactions; a Moderation (ModerationSnapshot.swift) takes at most
/// `moderationBudgetBytes`, and a snapshot without it restores no bans.
///
/// An ActorRef is `{"peer_id", "role", "name", "user_id"}`. Arrays keep the
/// model's order; what the model keeps unordered (session-store entries,
/// poll voters, listened keys) is sorted, so that an unchanged room encodes
/// to the same bytes (the server saves a room only when they differ).
public struct RoomSnapshot: Sendable, Equatable {
    public var id: String
    public var sessionID: String
    public var startedAt: Int64
    public var nextSequence: Int
    public var locked: Bool
    public var peers: [PeerSnapshot]
    public var sessionStore: SessionStore
    public var pollSerial: Int
    public var polls: [PollSnapshot]
    public var liveStream: LiveStream?
    /// The chat history (oldest first) and the pin (1.2, section 19).
    public var chatMessages: [ChatMessage]
    public var pinned: ChatMessage?
    /// Audience questions in the order asked, and how many were added (1.2, section 21).
    public var questions: [Question]
    public var questionsAdded: Int
    /// Reactions and taps (1.2, section 20): the stream, the contestants by
    /// id, then the messages newest first.
    public var reactions: [ReactionTargetSnapshot]
    /// Bans, chat bans, pause and slow mode (1.2, section 22; ModerationSnapshot.swift).
    public var moderation = ModerationSnapshot()
    /// RTMP out and recording (1.2, section 23; absent in older snapshots).
    public var rtmp: RTMPRun?
    public var recording: RecordingRun?

    /// An ended room whose id stays locked: the lock alone.
    public static func lockedOnly(_ id: String) -> RoomSnapshot {
        RoomSnapshot(
            id: id,
            sessionID: "",
            startedAt: 0,
            nextSequence: 0,
            locked: true,
            peers: [],
            sessionStore: SessionStore(),
            pollSerial: 0,
            polls: [],
            liveStream: nil,
            chatMessages: [],
            pinned: nil,
            questions: [],
            questionsAdded: 0,
            reactions: []
        )
    }
}

public struct PeerSnapshot: Sendable, Equatable {
    public var id: String
    public var userID: String
    public var joinedAt: Int64
    public var sequence: Int
    public var role: String
    public var name: String
    public var data: String
    public var groups: [String]
    public var tracks: [Track]
    public var viewOnly: Bool
    public var metadataListening: MetadataListening
}

/// A poll with its questions and results: every stored field of `Poll`
/// but the stats bookkeeping (`on-poll-stats` starts over on the new node).
public struct PollSnapshot: Sendable, Equatable {
    var id: String
    var createdBy: String?
    var createdAt: Int64
    var sequence: Int
    var title: String
    var type: PollType
    var duration: Int
    var anonymous: Bool
    var visibility: Bool
    var vote: [String]?
    var responses: [String]?
    var state: PollState
    var startedBy: String?
    var stoppedBy: String?
    var startedAt: Int64?
    var stoppedAt: Int64?
    var questions: [PollQuestion]
    var tallies: [QuestionTally]
    var voters: [String: PollVoter]
    var records: [PollRecord]
    var totalResponses: Int
}
