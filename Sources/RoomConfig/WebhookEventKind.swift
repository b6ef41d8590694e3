/// The webhook event names (PROTOCOL.md section 17, 100ms names).
public enum WebhookEventKind: String, Sendable, CaseIterable {
    case sessionOpen = "session.open.success"
    case sessionClose = "session.close.success"
    case peerJoin = "peer.join.success"
    case peerLeave = "peer.leave.success"
    case roleChange = "role.change.success"
    case hlsStarted = "hls.started.success"
    case hlsStopped = "hls.stopped.success"
    /// Fired by polls (section 15) once they exist in this build.
    case pollStarted = "poll.started"
    /// Fired by polls (section 15) once they exist in this build.
    case pollStopped = "poll.stopped"
    case roomEnd = "room.end.success"
    /// 1.2, section 22.
    case peerBanned = "peer.banned"
    case peerUnbanned = "peer.unbanned"
    case chatBanned = "chat.banned"
    case messageDeleted = "message.deleted"
    case reportCreated = "report.created"
    /// 1.2, section 23: the stream's life.
    case streamScheduled = "stream.scheduled"
    case streamLive = "stream.live"
    case streamEnded = "stream.ended"
    case streamVOD = "stream.vod"
    /// 1.2, section 23: RTMP out and recording (state only).
    case rtmpStarted = "rtmp.started.success"
    case rtmpStopped = "rtmp.stopped.success"
    case recordingStarted = "recording.started.success"
    case recordingStopped = "recording.stopped.success"
    /// 1.3, section 26: a stage request's status changes.
    case stageRequested = "stage.requested"
    case stageInvited = "stage.invited"
    case stageLive = "stage.live"
    case stageDeclined = "stage.declined"
    case stageWithdrawn = "stage.withdrawn"
    case stageDone = "stage.done"
    /// 1.3, section 31: messages held for review.
    case messageHeld = "message.held"
    case messageApproved = "message.approved"
    case messageRejected = "message.rejected"
}
