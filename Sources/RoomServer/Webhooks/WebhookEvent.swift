import RoomModel
import RoomWire

/// One webhook, encoded once on the service thread: the body is the same
/// bytes on every attempt (so is `id`, for the receiver's deduplication).
struct WebhookEvent: Sendable {
    var id: String
    var roomID: RoomID
    var type: String
    var body: [UInt8]

    /// `{"version":"2.0","id","timestamp","type","data":{room_id, session_id, peer fields…}}`.
    init(_ timed: TimedOperatorEvent, id: String) {
        let event = timed.event
        self.id = id
        roomID = event.room.roomID
        type = event.kind.rawValue
        var w = JSONWriter()
        w.object { w in
            w.field("version", "2.0")
            w.field("id", id)
            w.field("timestamp", timed.at)
            w.field("type", event.kind.rawValue)
            w.key("data")
            w.object { w in
                w.field("room_id", event.room.roomID)
                w.field("session_id", event.room.sessionID)
                switch event {
                case .sessionOpened, .sessionClosed: break
                case .peerJoined(_, let peer):
                    w.peerFields(peer)
                case .peerLeft(_, let peer, let reason):
                    w.peerFields(peer)
                    w.field("reason", reason)
                case .roleChanged(_, let peer, let oldRole):
                    w.peerFields(peer)
                    w.field("old_role", oldRole)
                case .hlsStarted(_, let by, let urls):
                    w.peerFields(by)
                    w.key("urls")
                    w.strings(urls)
                case .hlsStopped(_, let by, let reason):
                    if let by { w.peerFields(by) }
                    w.field("reason", reason)
                case .pollStarted(_, let pollID, let by), .pollStopped(_, let pollID, let by):
                    if let by { w.peerFields(by) }
                    w.field("poll_id", pollID)
                case .roomEnded(_, let by, let reason, let lock):
                    w.peerFields(by)
                    w.field("reason", reason)
                    w.field("lock", lock)
                case .peerBanned(_, let userID, let until, let reason, let by):
                    w.field("user_id", userID)
                    w.optionalField("until", until)
                    w.field("reason", reason)
                    w.key("banned_by")
                    w.actorRef(by)
                case .peerUnbanned(_, let userID, let by):
                    w.field("user_id", userID)
                    w.key("unbanned_by")
                    w.actorRef(by)
                case .chatBanned(_, let userID, let until, let shadow, let by):
                    w.field("user_id", userID)
                    w.optionalField("until", until)
                    if shadow { w.field("shadow", true) }
                    w.key("banned_by")
                    w.actorRef(by)
                case .messageDeleted(_, let messageID, let by):
                    w.field("message_id", messageID)
                    w.key("deleted_by")
                    w.actorRef(by)
                case .reportCreated(_, let report):
                    w.reportFields(report)
                case .streamChanged(_, let state, let by, let startsAt, let vodURL):
                    if let by { w.peerFields(by) }
                    w.field("state", state.rawValue)
                    w.optionalField("starts_at", startsAt)
                    w.optionalField("vod_url", vodURL)
                case .rtmpStarted(_, let by, let count):
                    w.peerFields(by)
                    w.field("rtmp_urls_count", count)
                case .recordingStarted(_, let by):
                    w.peerFields(by)
                case .rtmpStopped(_, let by, let reason), .recordingStopped(_, let by, let reason):
                    if let by { w.peerFields(by) }
                    w.field("reason", reason)
                case .messageHeld(_, let message):
                    w.field("message_id", message.id)
                    w.peerFields(message.sender)
                case .messageReviewed(_, let message, let approved, let reason):
                    w.field("message_id", message.id)
                    w.peerFields(message.sender)
                    if !approved { w.optionalField("reason", reason) }
                case .stage(_, let peer, let request):
                    w.peerFields(peer)
                    w.field("request_id", request.id)
                    w.field("note", request.note)
                    w.field("status", request.status.rawValue)
                    w.optionalField("invited_role", request.role)
                }
            }
        }
        body = w.bytes
    }
}

extension JSONWriter {
    /// The flat peer fields of a webhook's `data`: `peer_id`, `user_id`,
    /// `role`, `name` (null ids and role for the REST API's server).
    mutating func peerFields(_ actor: ActorRef) {
        optionalField("peer_id", actor.peerID)
        optionalField("user_id", actor.userID)
        optionalField("role", actor.role)
        field("name", actor.name)
    }
}
