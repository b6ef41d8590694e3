import RoomModel
import RoomProtocol
import RoomWire

/// Every push of the protocol as a frame: one exhaustive switch over the
/// model's `Push`, so that a new push cannot go unencoded.
extension Envelope {
    /// The frame of `push`. `.policyChange` frames are encoded once per role
    /// (`Policies`) and only looked up here.
    package static func push(_ push: Push, policyChanges: [String: Frame]) -> Frame {
        switch push {
        case .peerJoin(let peer, let withTracks):
            return notification("on-peer-join") { w in
                w.key("peer")
                w.peer(peer, withTracks: withTracks)
            }
        case .peerLeave(let peerID, let reason):
            return notification("on-peer-leave") { w in
                w.field("peer_id", peerID)
                w.field("reason", reason.rawValue)
            }
        case .peerUpdate(let peer, let changed, let withTracks):
            return notification("on-peer-update") { w in
                w.key("peer")
                w.peer(peer, withTracks: withTracks)
                w.key("changed")
                w.strings(changed.map(\.rawValue))
            }
        case .broadcast(let chat):
            return notification("on-broadcast") { w in w.chatFields(chat) }
        case .messageHeld(let chat):
            return notification("on-message-held") { w in
                w.key("message")
                w.chatMessage(chat)
            }
        case .messageReview(let messageID, let approved, let reason):
            return notification("on-message-review") { w in
                w.field("message_id", messageID)
                w.field("status", approved ? "approved" : "rejected")
                w.key("reason")
                if let reason { w.string(reason) } else { w.null() }
            }
        case .broadcastShadowed(let chat):
            return notification("on-broadcast") { w in
                w.chatFields(chat)
                w.field("shadowed", true)
            }
        case .messageDelete(let messageID, let deletedBy):
            return notification("on-message-delete") { w in
                w.field("message_id", messageID)
                w.key("deleted_by")
                w.actorRef(deletedBy)
            }
        case .chatClear(let clearedBy):
            return notification("on-chat-clear") { w in
                w.key("cleared_by")
                w.actorRef(clearedBy)
            }
        case .messagePin(let message, let pinnedBy):
            return notification("on-message-pin") { w in
                w.key("message")
                w.chatMessage(message)
                w.key("pinned_by")
                w.actorRef(pinnedBy)
            }
        case .reactions(let counts):
            return notification("on-reactions") { w in w.reactionCounts(counts) }
        case .trackAdd(let peerID, let track):
            return trackPush("on-track-add", peerID, track)
        case .trackUpdate(let peerID, let track):
            return trackPush("on-track-update", peerID, track)
        case .trackRemove(let peerID, let track):
            return trackPush("on-track-remove", peerID, track)
        case .policyChange(let role):
            return policyChanges[role]!
        case .roleChangeRequest(let requestedBy, let role, let token):
            return notification("on-role-change-request") { w in
                w.key("requested_by")
                w.peerRef(requestedBy)
                w.field("role", role)
                w.field("token", token)
            }
        case .roleChangeRejected(let token, let requestedFor, let role, let reason):
            return notification("on-role-change-rejected") { w in
                w.field("token", token)
                w.field("requested_for", requestedFor)
                w.field("role", role)
                w.field("reason", reason.rawValue)
            }
        case .trackUpdateRequest(let requestedBy, let trackID, let mute):
            return notification("on-track-update-request") { w in
                w.key("requested_by")
                w.peerRef(requestedBy)
                w.field("track_id", trackID)
                w.field("mute", mute)
            }
        case .changeTrackMuteStateRequest(let requestedBy, let filter, let value):
            return notification("on-change-track-mute-state-request") { w in
                w.key("requested_by")
                w.peerRef(requestedBy)
                if let roles = filter.roles {
                    w.key("roles")
                    w.strings(roles)
                }
                if let kind = filter.kind { w.field("type", kind.rawValue) }
                if let source = filter.source { w.field("source", source.rawValue) }
                w.field("value", value)
            }
        case .peerLeaveRequest(let requestedBy, let reason, let roomEnd):
            return notification("on-peer-leave-request") { w in
                w.key("requested_by")
                w.peerRef(requestedBy)
                w.field("reason", reason)
                w.field("room_end", roomEnd)
            }
        case .roomState(let peerCount, let joined, let left):
            return notification("room-state") { w in
                w.field("peer_count", peerCount)
                if let joined {
                    w.key("joined")
                    w.array { w in for peer in joined { w.peerRef(peer) } }
                }
                if let left {
                    w.key("left")
                    w.strings(left)
                }
            }
        case .activeSpeakers(let speakers):
            return notification("active-speakers") { w in
                w.key("speaker-list")
                w.array { w in
                    for speaker in speakers { speaker.encode(into: &w) }
                }
            }
        case .metadataChange(let entry):
            return notification("on-metadata-change") { w in
                w.key("entries")
                w.array { w in w.sessionEntry(entry) }
            }
        case .pollStart(let poll, let withAnswers):
            return notification("on-poll-start") { w in
                w.key("polls")
                w.array { w in w.pollInfo(poll, questions: true, withAnswers: withAnswers) }
            }
        case .pollStop(let poll):
            return notification("on-poll-stop") { w in
                w.key("polls")
                w.array { w in w.pollInfo(poll, questions: poll.type == .quiz, withAnswers: true) }
            }
        case .pollStats(let poll, let maxUser, let withCorrect):
            return notification("on-poll-stats") { w in
                w.pollResultFields(poll, maxUser: maxUser, withCorrect: withCorrect)
            }
        case .chatState(let state):
            return notification("on-chat-state") { w in w.chatStateFields(state) }
        case .report(let report):
            return notification("on-report") { w in w.reportFields(report) }
        case .reportUpdate(let report):
            return notification("on-report-update") { w in
                w.key("report")
                w.report(report)
            }
        case .questions(let changed, let removed):
            return notification("on-questions") { w in
                w.key("changed")
                w.array { w in for question in changed { w.question(question) } }
                w.key("removed")
                w.strings(removed)
            }
        case .pollAnswer(let pollID, let answers):
            return notification("on-poll-answer") { w in
                w.field("poll_id", pollID)
                w.key("answers")
                w.value(answers)
            }
        case .hlsUpdate(let state):
            return notification("on-hls-update", params: Self.encodeLiveStream(state))
        case .hlsTimedMetadata(let cues):
            return notification("on-hls-timed-metadata") { w in w.cues(cues) }
        case .rtmpUpdate(let state):
            var w = JSONWriter()
            w.rtmp(state)
            return notification("on-rtmp-update", params: w.bytes)
        case .recordingUpdate(let state):
            var w = JSONWriter()
            w.recording(state)
            return notification("on-record-update", params: w.bytes)
        case .tokenExpiring(let expiresAt):
            return notification("on-token-expiring") { w in w.field("expires_at", expiresAt) }
        case .stageStatus(let request):
            return notification("on-stage-status") { w in
                w.key("request")
                request.encode(into: &w)
            }
        case .stageQueue(let changed, let removed, let waiting):
            return notification("on-stage-queue") { w in
                w.key("changed")
                w.array { w in for request in changed { request.encode(into: &w) } }
                w.key("removed")
                w.strings(removed)
                w.field("waiting", waiting)
            }
        }
    }

    private static func trackPush(_ method: String, _ peerID: PeerID, _ track: Track) -> Frame {
        notification(method) { w in
            w.field("peer_id", peerID)
            w.key("track")
            w.track(track)
        }
    }
}
