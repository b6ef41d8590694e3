import RoomProtocol
import RoomWire

/// Something the server must tell peers. The model decides who gets what;
/// the server encodes each `Delivery` once and queues the bytes per recipient.
public enum Push {
    /// `on-peer-join {peer}`; `withTracks` says whether the recipients see the peer's tracks.
    case peerJoin(Peer, withTracks: Bool)
    /// `on-peer-leave {peer_id, reason}`.
    case peerLeave(peerID: PeerID, reason: LeaveReason)
    /// `on-peer-update {peer, changed}`.
    case peerUpdate(Peer, changed: [PeerField], withTracks: Bool)
    /// `on-broadcast`.
    case broadcast(ChatMessage)
    /// `on-broadcast` of a shadow-banned sender's message with `"shadowed": true`, to `moderateChat` peers (1.3, section 31).
    case broadcastShadowed(ChatMessage)
    /// `on-message-held {message}` to `moderateChat` peers (1.3, section 31).
    case messageHeld(ChatMessage)
    /// `on-message-review {message_id, status, reason}` to the sender's user's peers (1.3, section 31).
    case messageReview(messageID: String, approved: Bool, reason: String?)
    /// `on-message-delete {message_id, deleted_by}` (1.2, section 19).
    case messageDelete(messageID: String, deletedBy: ActorRef)
    /// `on-chat-clear {cleared_by}` (1.2).
    case chatClear(clearedBy: ActorRef)
    /// `on-message-pin {message: Message | null, pinned_by}` (1.2).
    case messagePin(ChatMessage?, pinnedBy: ActorRef)
    /// `on-chat-state {paused, slow_mode_s, chat_banned, until}` (1.2, section 22): the receiver's whole chat state.
    case chatState(ChatState)
    /// `on-report {report_id, target, reason, reported_by, at}` (1.2), to `moderateChat` peers.
    case report(Report)
    /// `on-report-update {report}` (1.3, section 32): a report resolved, to `moderateChat` peers.
    case reportUpdate(Report)
    /// `on-reactions {counts:[{target, type, total}]}` (1.2, section 20): the
    /// totals changed since the room's last one, coalesced per interval.
    case reactions([ReactionCount])
    /// `on-track-add` / `on-track-update` / `on-track-remove {peer_id, track}`.
    case trackAdd(peerID: PeerID, Track)
    case trackUpdate(peerID: PeerID, Track)
    case trackRemove(peerID: PeerID, Track)
    /// `on-policy-change`: the recipient's new Policy (its role and the known roles).
    case policyChange(role: String)
    /// `on-role-change-request {requested_by, role, token}`.
    case roleChangeRequest(requestedBy: Initiator, role: String, token: String)
    /// `on-role-change-rejected {token, requested_for, role, reason}`.
    case roleChangeRejected(token: String, requestedFor: PeerID, role: String, reason: RejectReason)
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
    case roomState(peerCount: Int, joined: [Peer]?, left: [PeerID]?)
    /// `on-metadata-change {entries:[Entry]}`, to the key's listeners.
    case metadataChange(SessionEntry)
    /// `on-poll-start {polls:[PollInfo + questions]}`; `withAnswers` (quizzes) for `pollWrite` recipients.
    case pollStart(Poll, withAnswers: Bool)
    /// `on-poll-stop {polls:[PollInfo]}`; quizzes add their questions with the answers.
    case pollStop(Poll)
    /// `on-poll-stats {poll_id, …PollResult}`; `maxUser` is the room's eligible voters now,
    /// `withCorrect` adds the quiz `correct` counts.
    case pollStats(Poll, maxUser: Int, withCorrect: Bool)
    /// `on-questions {changed:[Question], removed:[question_id]}` (1.2, section 21).
    case questions(changed: [Question], removed: [String])
    /// `on-poll-answer {poll_id, answers}` (1.2): a stopped quiz's answers set; `answers` as given.
    case pollAnswer(pollID: String, answers: JSON)
    /// `on-hls-update HLSState` (1.1, LiveStream.swift).
    case hlsUpdate(LiveStream)
    /// `on-hls-timed-metadata {cues}` (1.1).
    case hlsTimedMetadata([HLSCue])
    /// `on-rtmp-update {running, started_at, started_by, rtmp_urls_count}` (1.2, Recording.swift).
    case rtmpUpdate(RTMPRun)
    /// `on-record-update {running, started_at, started_by}` (1.2).
    case recordingUpdate(RecordingRun)
    /// `on-token-expiring {expires_at}` (1.2, section 23, TokenExpiry.swift).
    case tokenExpiring(expiresAt: Int64)
    /// `on-stage-status {request}` to the requester's user's peers (1.3, section 26).
    case stageStatus(StageRequest)
    /// `on-stage-queue {changed, removed, waiting}` to the moderating peers
    /// (1.3, section 26), coalesced per `settings.stage.interval_ms`.
    case stageQueue(changed: [StageRequest], removed: [String], waiting: Int)
}

public enum LeaveReason: String, Sendable {
    case clientRequest = "client request"
    case peerKicked = "peer kicked"
    case websocketClosed = "websocket closed"
    case serverRemoved = "server removed peer"
    /// 1.2, section 22: `peer-ban`.
    case peerBanned = "peer banned"
}

public enum RejectReason: String, Sendable {
    case rejected, expired
}

public enum PeerField: String, Sendable {
    case name, data, role, groups, attributes
}
