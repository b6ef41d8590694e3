import RoomConfig
import RoomProtocol

/// One room session: created on its first join (or REST `POST /v2/rooms`),
/// ended with its last peer or `empty_timeout_s` after it (EmptyRooms.swift).
public final class Room {
    public let id: RoomID
    public let sessionID: String
    public let startedAt: Int64
    public private(set) var peers: [PeerID: Peer] = [:]
    private var order = JoinOrder()
    private var byRole: [String: JoinOrder] = [:]
    /// Each user's peers in this room (a user has few).
    private var byUser: [UserID: [Peer]] = [:]
    private var nextSequence = 0
    /// Track ids are unique within the room.
    private(set) var trackOwners: [String: Peer] = [:]
    /// Active-speaker state of this room (SpeakerState.swift).
    var speakers = SpeakerState()
    /// Large rooms: joins and leaves waiting for the next `room-state` (RoomStateBatch.swift).
    var roomState = RoomStateBatch()
    /// The session store (section 14): belongs to this session.
    public internal(set) var sessionStore = SessionStore()
    /// Polls and quizzes of this session (section 15).
    public internal(set) var polls = PollBook()
    /// Chat history and pin (1.2, Chat/ChatHistory.swift).
    public internal(set) var chat = ChatHistory()
    /// Audience questions (1.2, QA/QuestionBoard.swift).
    public internal(set) var questions = QuestionBoard()
    /// The call-in queue and its blocks (1.3, Stage/StageQueue.swift).
    public internal(set) var stage = StageQueue()
    /// Reactions and tap votes (1.2, Reactions/Reactions.swift).
    public internal(set) var reactions = Reactions()
    /// Bans of this session by user id (1.2, Moderation/RoomBans.swift).
    public internal(set) var bans = RoomBans()
    /// Chat bans, pause, slow mode (1.2, Moderation/ChatControls.swift).
    public internal(set) var chatControls = ChatControls()
    /// Who reported what, for one report per user per target (1.2, Moderation/ReportLog.swift).
    var reports = ReportLog()
    /// Messages held for review (1.3, section 31).
    public internal(set) var held = HeldMessages()
    /// What the audience feed tells of this session (1.2, Feed/FeedRecorder.swift).
    public internal(set) var feed: FeedRecorder?
    /// The moderation acts of this session (1.3, section 32, Audit/AuditLog.swift).
    public internal(set) var audit = AuditLog()
    /// HLSState (LiveStream.swift): nil before the session's first `hls-start`.
    public internal(set) var liveStream: LiveStream?
    /// RTMP out and recording (Recording.swift): nil before their first start.
    public internal(set) var rtmp: RTMPRun?
    public internal(set) var recording: RecordingRun?
    /// A session without peers waits for its next join until then (ms,
    /// `settings.room.empty_timeout_s`, EmptyRooms.swift); nil while it has peers.
    public internal(set) var emptyUntil: Int64?
    /// Its `EmptyRoomEnd` in the registry's deadlines, while it waits.
    var emptyEntry: DeadlineID?
    /// Its `CueEnd` in the registry's deadlines while it has live cues.
    var cueEntry: DeadlineID?
    /// Its `ChatBanEnd` in the registry's deadlines while it has timed chat bans.
    var chatBanEntry: DeadlineID?

    init(id: RoomID, sessionID: String, startedAt: Int64) {
        self.id = id
        self.sessionID = sessionID
        self.startedAt = startedAt
    }

    public var peerCount: Int { peers.count }

    public func peer(_ id: PeerID) -> Peer? { peers[id] }

    public func count(ofRole role: String) -> Int { byRole[role]?.count ?? 0 }

    /// Every peer in join order.
    public var peersInJoinOrder: [Peer] { order.peers }

    /// The peers of one role, in join order.
    public func peers(withRole role: String) -> [Peer] { byRole[role]?.peers ?? [] }

    /// The peers of one user: O(its peers).
    public func peers(ofUser user: UserID) -> [Peer] { byUser[user] ?? [] }

    /// Every peer but `excluded`, in join order.
    public func others(than excluded: Peer) -> [Peer] { peersInJoinOrder.filter { $0 !== excluded } }

    /// The next join's sequence (a snapshot carries it, Takeover.swift).
    var sequenceCounter: Int {
        get { nextSequence }
        set { nextSequence = newValue }
    }

    func makeSequence() -> Int {
        nextSequence += 1
        return nextSequence
    }

    func add(_ peer: Peer) {
        peers[peer.id] = peer
        order.append(peer)
        byRole[peer.role.name, default: JoinOrder()].append(peer)
        byUser[peer.userID, default: []].append(peer)
    }

    func remove(_ peer: Peer) {
        guard peers.removeValue(forKey: peer.id) != nil else { return }
        peer.hasLeft = true
        order.remove(peer)
        byRole[peer.role.name]?.remove(peer)
        byUser[peer.userID]?.removeAll { $0 === peer }
        if byUser[peer.userID]?.isEmpty == true { byUser[peer.userID] = nil }
        for track in peer.tracks { trackOwners.removeValue(forKey: track.trackID) }
        speakers.forget(peer)
    }

    func addTrack(_ track: Track, to peer: Peer) {
        peer.tracks.append(track)
        trackOwners[track.trackID] = peer
    }

    func removeTrack(_ id: String, from peer: Peer) -> Track? {
        guard let index = peer.tracks.firstIndex(where: { $0.trackID == id }) else { return nil }
        trackOwners.removeValue(forKey: id)
        speakers.forget(trackID: id)
        return peer.tracks.remove(at: index)
    }

    /// Peers of the room, other than `publisher`, that see `publisher`'s tracks.
    func subscribers(of publisher: Peer) -> [Peer] {
        peersInJoinOrder.filter { $0 !== publisher && $0.sees(tracksOf: publisher) }
    }

    func changeRole(of peer: Peer, to role: Role) {
        speakers.roleChanged(peer)  // before the change: it keeps what the old role was shown
        byRole[peer.role.name]?.remove(peer)
        peer.role = role
        byRole[role.name, default: JoinOrder()].insert(peer)
    }
}
