/// RTMP out of a room session (1.2, section 23): state only, roomd holds
/// no media. The operator's media service reads it (REST, webhooks) and
/// peers see it (`on-rtmp-update`). The URLs carry stream keys: they are
/// kept for the media service (REST's `GET …/rtmp` answers only their
/// count, as peers see it) and never logged.
public struct RTMPRun: Sendable, Equatable {
    public internal(set) var running: Bool
    public internal(set) var startedAt: Int64?
    public internal(set) var startedBy: ActorRef?
    public internal(set) var stoppedAt: Int64?
    public internal(set) var stoppedBy: ActorRef?
    public internal(set) var meetingURL: String?
    public internal(set) var urls: [String]

    public init(
        running: Bool,
        startedAt: Int64?,
        startedBy: ActorRef?,
        stoppedAt: Int64? = nil,
        stoppedBy: ActorRef? = nil,
        meetingURL: String? = nil,
        urls: [String] = []
    ) {
        self.running = running
        self.startedAt = startedAt
        self.startedBy = startedBy
        self.stoppedAt = stoppedAt
        self.stoppedBy = stoppedBy
        self.meetingURL = meetingURL
        self.urls = urls
    }
}

/// The session's recording (1.2, section 23): state only.
public struct RecordingRun: Sendable, Equatable {
    public internal(set) var running: Bool
    public internal(set) var startedAt: Int64?
    public internal(set) var startedBy: ActorRef?
    public internal(set) var stoppedAt: Int64?
    public internal(set) var stoppedBy: ActorRef?
    /// Started by `rtmp-start {record:true}`: `rtmp-stop` stops it too (100ms's `stopRTMPAndRecording`).
    public internal(set) var withRTMP: Bool

    public init(
        running: Bool,
        startedAt: Int64?,
        startedBy: ActorRef?,
        stoppedAt: Int64? = nil,
        stoppedBy: ActorRef? = nil,
        withRTMP: Bool = false
    ) {
        self.running = running
        self.startedAt = startedAt
        self.startedBy = startedBy
        self.stoppedAt = stoppedAt
        self.stoppedBy = stoppedBy
        self.withRTMP = withRTMP
    }
}

/// `rtmp-start`, `rtmp-stop`, `recording-start`, `recording-stop` (1.2,
/// section 23), mirroring HLS (section 16): a permission of the template,
/// 40904 when already in that state, every peer told, the operator's
/// webhooks, and the room's end stops both.
extension RoomRegistry {
    public static let rtmpURLsRange = 1...3
    public static let maxRTMPURLBytes = 4096

    /// `rtmp-start {meeting_url?, rtmp_urls, record?}`: every peer gets
    /// `on-rtmp-update` (and `on-record-update` with `record`). All or nothing.
    public func startRTMP(
        by initiator: Initiator,
        in room: Room,
        meetingURL: String?,
        urls: [String],
        record: Bool
    ) throws(RoomError) -> [Delivery] {
        if !Self.rtmpURLsRange.contains(urls.count) {
            throw .invalidParams("rtmp_urls: 1 to 3 URLs, got \(urls.count)")
        }
        for (i, url) in urls.enumerated() {
            if url.isEmpty { throw .invalidParams("rtmp_urls[\(i)]: must not be empty") }
            try checkSize(url, field: "rtmp_urls[\(i)]", limit: Self.maxRTMPURLBytes)
        }
        if let meetingURL { try checkSize(meetingURL, field: "meeting_url", limit: Self.maxVariantFieldBytes) }
        try requirePermission(initiator, \.rtmpStreaming, "rtmpStreaming")
        if record { try requirePermission(initiator, \.browserRecording, "browserRecording") }
        if room.rtmp?.running == true { throw RoomError(.wrongState, "rtmp: already running") }
        if record, room.recording?.running == true { throw RoomError(.wrongState, "recording: already running") }
        let now = clock.nowMillis()
        let by = ActorRef(initiator)
        room.rtmp = RTMPRun(running: true, startedAt: now, startedBy: by, meetingURL: meetingURL, urls: urls)
        self.record(.rtmpStarted(room: RoomRef(room), by: by, urlsCount: urls.count), at: now)
        var deliveries = [Delivery(.rtmpUpdate(room.rtmp!), to: room.peersInJoinOrder)]
        if record {
            room.recording = RecordingRun(running: true, startedAt: now, startedBy: by, withRTMP: true)
            self.record(.recordingStarted(room: RoomRef(room), by: by), at: now)
            deliveries.append(Delivery(.recordingUpdate(room.recording!), to: room.peersInJoinOrder))
        }
        return deliveries.nonEmpty
    }

    /// `rtmp-stop`: and the recording `rtmp-start {record:true}` started.
    public func stopRTMP(by initiator: Initiator, in room: Room) throws(RoomError) -> [Delivery] {
        try requirePermission(initiator, \.rtmpStreaming, "rtmpStreaming")
        guard room.rtmp?.running == true else { throw RoomError(.wrongState, "rtmp: not running") }
        let withRecording = room.recording?.running == true && room.recording?.withRTMP == true
        stopRTMP(room, by: ActorRef(initiator), reason: "stopped")
        var deliveries = [Delivery(.rtmpUpdate(room.rtmp!), to: room.peersInJoinOrder)]
        if withRecording {
            stopRecording(room, by: ActorRef(initiator), reason: "stopped")
            deliveries.append(Delivery(.recordingUpdate(room.recording!), to: room.peersInJoinOrder))
        }
        return deliveries.nonEmpty
    }

    /// `recording-start`: every peer gets `on-record-update`.
    public func startRecording(by initiator: Initiator, in room: Room) throws(RoomError) -> [Delivery] {
        try requirePermission(initiator, \.browserRecording, "browserRecording")
        if room.recording?.running == true { throw RoomError(.wrongState, "recording: already running") }
        let now = clock.nowMillis()
        room.recording = RecordingRun(running: true, startedAt: now, startedBy: ActorRef(initiator))
        record(.recordingStarted(room: RoomRef(room), by: ActorRef(initiator)), at: now)
        return [Delivery(.recordingUpdate(room.recording!), to: room.peersInJoinOrder)].nonEmpty
    }

    /// `recording-stop`: every peer gets `on-record-update` with `running:false`.
    public func stopRecording(by initiator: Initiator, in room: Room) throws(RoomError) -> [Delivery] {
        try requirePermission(initiator, \.browserRecording, "browserRecording")
        guard room.recording?.running == true else { throw RoomError(.wrongState, "recording: not running") }
        stopRecording(room, by: ActorRef(initiator), reason: "stopped")
        return [Delivery(.recordingUpdate(room.recording!), to: room.peersInJoinOrder)].nonEmpty
    }

    /// The session ends: RTMP and recording stop with it (the webhooks say "room ended").
    func stopBroadcasts(_ room: Room) {
        if room.rtmp?.running == true { stopRTMP(room, by: nil, reason: "room ended") }
        if room.recording?.running == true { stopRecording(room, by: nil, reason: "room ended") }
    }

    private func stopRTMP(_ room: Room, by actor: ActorRef?, reason: String) {
        let now = clock.nowMillis()
        room.rtmp!.running = false
        room.rtmp!.stoppedAt = now
        room.rtmp!.stoppedBy = actor
        room.rtmp!.urls = []
        record(.rtmpStopped(room: RoomRef(room), by: actor, reason: reason), at: now)
    }

    private func stopRecording(_ room: Room, by actor: ActorRef?, reason: String) {
        let now = clock.nowMillis()
        room.recording!.running = false
        room.recording!.stoppedAt = now
        room.recording!.stoppedBy = actor
        room.recording!.withRTMP = false
        record(.recordingStopped(room: RoomRef(room), by: actor, reason: reason), at: now)
    }
}
