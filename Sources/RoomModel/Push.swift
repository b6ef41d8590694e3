/// Something the server must tell peers. The model decides who gets what;
/// the server encodes each `Delivery` once and queues the bytes per recipient.
public enum Push {
    /// `on-peer-join {peer}`; `withTracks` says whether the recipients see the peer's tracks.
    case peerJoin(Peer, withTracks: Bool)
    /// `on-peer-leave {peer_id, reason}`.
    case peerLeave(peerID: String, reason: LeaveReason)
    /// `on-peer-update {peer, changed}`.
    case peerUpdate(Peer, changed: [PeerField], withTracks: Bool)
    /// `on-broadcast`.
    case broadcast(ChatMessage)
    /// `on-track-add` / `on-track-update` / `on-track-remove {peer_id, track}`.
    case trackAdd(peerID: String, Track)
    case trackUpdate(peerID: String, Track)
    case trackRemove(peerID: String, Track)
    /// `on-policy-change`: the recipient's new Policy (its role and the known roles).
    case policyChange(role: String)
    /// `on-role-change-request {requested_by, role, token}`.
    case roleChangeRequest(requestedBy: Initiator, role: String, token: String)
    /// `on-role-change-rejected {token, requested_for, role, reason}`.
    case roleChangeRejected(token: String, requestedFor: String, role: String, reason: RejectReason)
    /// `on-track-update-request {requested_by, track_id, mute}`.
    case trackUpdateRequest(requestedBy: Initiator, trackID: String, mute: Bool)
    /// `on-change-track-mute-state-request {requested_by, roles?, type?, source?, value}`.
    case changeTrackMuteStateRequest(requestedBy: Initiator, filter: TrackFilter, value: Bool)
    /// `on-peer-leave-request {requested_by, reason, room_end}`.
    case peerLeaveRequest(requestedBy: Initiator, reason: String, roomEnd: Bool)
    /// `active-speakers {"speaker-list": […]}`.
    case activeSpeakers([Speaker])
    /// `room-state {peer_count, joined: [PeerRef], left: [peer_id]}` (large rooms).
    /// `joined` / `left` nil: the count alone (peers that do not moderate).
    case roomState(peerCount: Int, joined: [Peer]?, left: [String]?)
    /// `on-metadata-change {entries:[Entry]}`, to the key's listeners.
    case metadataChange(SessionEntry)
    /// `on-poll-start {polls:[PollInfo + questions]}`; `withAnswers` (quizzes) for `pollWrite` recipients.
    case pollStart(Poll, withAnswers: Bool)
    /// `on-poll-stop {polls:[PollInfo]}`; quizzes add their questions with the answers.
    case pollStop(Poll)
    /// `on-poll-stats {poll_id, …PollResult}`; `maxUser` is the room's eligible voters now,
    /// `withCorrect` adds the quiz `correct` counts.
    case pollStats(Poll, maxUser: Int, withCorrect: Bool)
    /// `on-hls-update HLSState` (1.1, LiveStream.swift).
    case hlsUpdate(LiveStream)
    /// `on-hls-timed-metadata {cues}` (1.1).
    case hlsTimedMetadata([HLSCue])
}

public struct Delivery {
    /// Who gets the push: `audience` without `excluded`. A broadcast passes
    /// the room's own join-order array (no copy: it is copy-on-write) and its
    /// sender, so no array of recipients is built per push; the transport
    /// skips `excluded` (always one of `audience`) by identity while it fans out.
    public var audience: [Peer]
    public var excluded: Peer?
    public var push: Push

    public init(_ push: Push, to recipients: [Peer]) {
        self.audience = recipients
        self.excluded = nil
        self.push = push
    }

    public init(_ push: Push, to audience: [Peer], excluding excluded: Peer) {
        self.audience = audience
        self.excluded = excluded
        self.push = push
    }

    /// The recipients as an array (built when `excluded` is set: for tests and cold paths).
    public var recipients: [Peer] {
        guard let excluded else { return audience }
        return audience.filter { $0 !== excluded }
    }

    public var recipientCount: Int { excluded == nil ? audience.count : audience.count - 1 }
}

/// Who asked for a change: a peer, or the server's REST API.
public enum Initiator {
    case peer(Peer)
    case server
}

/// A peer whose connection must close after its pushes (`peer-leave-request`, `end-room`).
public struct Disconnect {
    public enum Reason: Sendable { case removed, roomEnded }
    public var peer: Peer
    public var reason: Reason
}

/// The deliveries a change caused, and the peers it disconnects.
public struct Effects {
    public var deliveries: [Delivery] = []
    public var disconnects: [Disconnect] = []

    public init(deliveries: [Delivery] = [], disconnects: [Disconnect] = []) {
        self.deliveries = deliveries
        self.disconnects = disconnects
    }

    mutating func send(_ push: Push, to recipients: [Peer]) {
        if !recipients.isEmpty { deliveries.append(Delivery(push, to: recipients)) }
    }
}

public enum LeaveReason: String, Sendable {
    case clientRequest = "client request"
    case peerKicked = "peer kicked"
    case websocketClosed = "websocket closed"
    case serverRemoved = "server removed peer"
}

public enum RejectReason: String, Sendable {
    case rejected, expired
}

public enum PeerField: String, Sendable {
    case name, data, role, groups
}

/// `roles` / `type` / `source` filters of `change-track-mute-state-request`.
public struct TrackFilter: Sendable, Equatable {
    public var roles: [String]?
    public var kind: Track.Kind?
    public var source: Track.Source?

    public init(roles: [String]? = nil, kind: Track.Kind? = nil, source: Track.Source? = nil) {
        self.roles = roles
        self.kind = kind
        self.source = source
    }

    func matches(_ track: Track) -> Bool {
        (kind == nil || track.kind == kind) && (source == nil || track.source == source)
    }
}

/// A chat message as delivered (`on-broadcast`).
public struct ChatMessage {
    public enum Recipient: Equatable {
        case broadcast
        case peer(String)
        case roles([String])
    }

    public var id: String
    public var timestamp: Int64
    public var sender: Initiator
    public var recipient: Recipient
    public var message: String
    public var type: String
}
