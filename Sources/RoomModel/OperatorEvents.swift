import RoomConfig
import RoomProtocol

/// A room session, as it was when something happened.
public struct RoomRef: Sendable, Equatable {
    public var roomID: RoomID
    public var sessionID: String

    public init(_ room: Room) {
        roomID = room.id
        sessionID = room.sessionID
    }

    public init(roomID: RoomID, sessionID: String) {
        self.roomID = roomID
        self.sessionID = sessionID
    }
}

/// Something the operator's backend hears about (webhooks). The model
/// records these in order as rules apply; the server takes them after each
/// change and sends them (it never waits for the receiver).
public enum OperatorEvent: Sendable, Equatable {
    case sessionOpened(room: RoomRef)
    case sessionClosed(room: RoomRef)
    case peerJoined(room: RoomRef, peer: ActorRef)
    /// `reason` is `on-peer-leave`'s; "room ended" for the peers of an ended room.
    case peerLeft(room: RoomRef, peer: ActorRef, reason: String)
    case roleChanged(room: RoomRef, peer: ActorRef, oldRole: String)
    case hlsStarted(room: RoomRef, by: ActorRef, urls: [String])
    /// `by` nil: the room's end stopped it. `reason` "stopped" or "room ended".
    case hlsStopped(room: RoomRef, by: ActorRef?, reason: String)
    case pollStarted(room: RoomRef, pollID: String, by: ActorRef?)
    case pollStopped(room: RoomRef, pollID: String, by: ActorRef?)
    case roomEnded(room: RoomRef, by: ActorRef, reason: String, lock: Bool)
    /// 1.2, section 22. `until` nil: for the rest of the session.
    case peerBanned(room: RoomRef, userID: UserID, until: Int64?, reason: String, by: ActorRef)
    case peerUnbanned(room: RoomRef, userID: UserID, by: ActorRef)
    case chatBanned(room: RoomRef, userID: UserID, until: Int64?, shadow: Bool, by: ActorRef)
    case messageDeleted(room: RoomRef, messageID: String, by: ActorRef)
    case reportCreated(room: RoomRef, report: Report)
    /// 1.2, section 23: the stream entered `state`; `by` nil when the room's end stopped it.
    case streamChanged(room: RoomRef, state: StreamState, by: ActorRef?, startsAt: Int64?, vodURL: String?)
    /// 1.2, section 23: RTMP out and recording; `by` nil when the room's end stopped them.
    case rtmpStarted(room: RoomRef, by: ActorRef, urlsCount: Int)
    case rtmpStopped(room: RoomRef, by: ActorRef?, reason: String)
    case recordingStarted(room: RoomRef, by: ActorRef)
    case recordingStopped(room: RoomRef, by: ActorRef?, reason: String)
    /// 1.3, section 26: a stage request's new status; `peer` is its peer as it is now.
    case stage(room: RoomRef, peer: ActorRef, request: StageRequest)
    /// 1.3, section 31: a message held for review, approved or rejected (`reason` for a rejection).
    case messageHeld(room: RoomRef, message: ChatMessage)
    case messageReviewed(room: RoomRef, message: ChatMessage, approved: Bool, reason: String?)

    public var kind: WebhookEventKind {
        switch self {
        case .sessionOpened: .sessionOpen
        case .sessionClosed: .sessionClose
        case .peerJoined: .peerJoin
        case .peerLeft: .peerLeave
        case .roleChanged: .roleChange
        case .hlsStarted: .hlsStarted
        case .hlsStopped: .hlsStopped
        case .pollStarted: .pollStarted
        case .pollStopped: .pollStopped
        case .roomEnded: .roomEnd
        case .peerBanned: .peerBanned
        case .peerUnbanned: .peerUnbanned
        case .chatBanned: .chatBanned
        case .messageDeleted: .messageDeleted
        case .reportCreated: .reportCreated
        case .streamChanged(_, let state, _, _, _):
            switch state {
            case .scheduled: .streamScheduled
            case .live: .streamLive
            case .ended: .streamEnded
            case .vod: .streamVOD
            }
        case .rtmpStarted: .rtmpStarted
        case .rtmpStopped: .rtmpStopped
        case .recordingStarted: .recordingStarted
        case .recordingStopped: .recordingStopped
        case .messageHeld: .messageHeld
        case .messageReviewed(_, _, let approved, _): approved ? .messageApproved : .messageRejected
        case .stage(_, _, let request):
            switch request.status {
            case .waiting: .stageRequested
            case .invited: .stageInvited
            case .live: .stageLive
            case .declined: .stageDeclined
            case .withdrawn: .stageWithdrawn
            case .done: .stageDone
            }
        }
    }

    public var room: RoomRef {
        switch self {
        case .sessionOpened(let room), .sessionClosed(let room): room
        case .peerJoined(let room, _), .peerLeft(let room, _, _), .roleChanged(let room, _, _): room
        case .hlsStarted(let room, _, _), .hlsStopped(let room, _, _): room
        case .pollStarted(let room, _, _), .pollStopped(let room, _, _): room
        case .roomEnded(let room, _, _, _): room
        case .peerBanned(let room, _, _, _, _), .peerUnbanned(let room, _, _), .chatBanned(let room, _, _, _, _): room
        case .messageDeleted(let room, _, _), .reportCreated(let room, _): room
        case .streamChanged(let room, _, _, _, _): room
        case .rtmpStarted(let room, _, _), .rtmpStopped(let room, _, _): room
        case .recordingStarted(let room, _), .recordingStopped(let room, _, _): room
        case .stage(let room, _, _): room
        case .messageHeld(let room, _), .messageReviewed(let room, _, _, _): room
        }
    }
}

/// An event and when it happened (ms).
public struct TimedOperatorEvent: Sendable, Equatable {
    public var event: OperatorEvent
    public var at: Int64
}

/// The webhook events recorded since the server last took them, oldest
/// first. Nothing is recorded unless someone listens (`isRecording`: the
/// server sets it when webhooks are configured).
struct OperatorEventLog {
    var isRecording = false
    private var events: [TimedOperatorEvent] = []

    /// Records `event` at `time` (read only when recording).
    mutating func record(_ event: OperatorEvent, at time: @autoclosure () -> Int64) {
        if isRecording { events.append(TimedOperatorEvent(event: event, at: time())) }
    }

    /// The events recorded since the last call, oldest first.
    mutating func take() -> [TimedOperatorEvent] {
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }
}

extension RoomRegistry {
    /// Whether events are recorded at all (the server sets it when webhooks are configured).
    public var recordsOperatorEvents: Bool {
        get { eventLog.isRecording }
        set { eventLog.isRecording = newValue }
    }

    /// Takes the events recorded since the last call, oldest first.
    public func takeOperatorEvents() -> [TimedOperatorEvent] {
        eventLog.take()
    }

    /// Records `event` when someone listens (`recordsOperatorEvents`).
    public func record(_ event: OperatorEvent, at time: Int64? = nil) {
        // The one place a session is recorded closed: the feed's `ended` (Feed/FeedRecorders.swift).
        if case .sessionClosed(let room) = event { closeFeed(room, at: time ?? clock.nowMillis()) }
        eventLog.record(event, at: time ?? clock.nowMillis())
    }
}
