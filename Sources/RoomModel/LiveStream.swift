import RoomProtocol

/// What `hls-timed-metadata` asks for, one per cue.
public struct HLSCueRequest: Sendable, Equatable {
    public var payload: String
    public var durationS: Int

    public init(payload: String, durationS: Int) {
        self.payload = payload
        self.durationS = durationS
    }
}

/// HLSState of a room session (PROTOCOL.md sections 16 and 23). A room has
/// none before its first `hls-start` or schedule; after a stop it keeps who
/// started and stopped the last run, with no variants and no cues.
public struct LiveStream: Sendable, Equatable {
    public internal(set) var state: StreamState
    public internal(set) var startedAt: Int64?
    public internal(set) var startedBy: ActorRef?
    public internal(set) var stoppedAt: Int64?
    public internal(set) var stoppedBy: ActorRef?
    public internal(set) var variants: [HLSVariant]
    /// Live cues (end not passed), oldest first.
    public internal(set) var cues: [HLSCue]
    /// When a scheduled show starts (ms), as the producer said; kept once live.
    public internal(set) var startsAt: Int64?
    /// The recording's URL once the stream is a VOD.
    public internal(set) var vodURL: String?

    /// 1.1's `running`: the stream is live.
    public var running: Bool { state == .live }

    public init(
        state: StreamState,
        startedAt: Int64? = nil,
        startedBy: ActorRef? = nil,
        stoppedAt: Int64? = nil,
        stoppedBy: ActorRef? = nil,
        variants: [HLSVariant] = [],
        cues: [HLSCue] = [],
        startsAt: Int64? = nil,
        vodURL: String? = nil
    ) {
        self.state = state
        self.startedAt = startedAt
        self.startedBy = startedBy
        self.stoppedAt = stoppedAt
        self.stoppedBy = stoppedBy
        self.variants = variants
        self.cues = cues
        self.startsAt = startsAt
        self.vodURL = vodURL
    }

    /// Drops the cues whose end has passed; returns whether any went.
    @discardableResult
    mutating func prune(now: Int64) -> Bool {
        let before = cues.count
        cues.removeAll { $0.endDate <= now }
        return cues.count != before
    }
}

/// Live stream state and timed metadata (PROTOCOL.md section 16).
extension RoomRegistry {
    public static let maxVariants = 8
    public static let maxCuesPerCall = 20
    public static let maxCuePayloadBytes = 4096
    public static let cueDurationRange = 1...3600
    /// `meeting_url` and `metadata` of a variant.
    public static let maxVariantFieldBytes = 4096

    /// The room's HLSState with expired cues dropped (nil before the first start).
    public func liveStream(of room: Room) -> LiveStream? {
        room.liveStream?.prune(now: clock.nowMillis())
        return room.liveStream
    }

    /// `hls-start` (or REST `…/hls/start`): every peer gets `on-hls-update`.
    public func startLiveStream(
        by initiator: Initiator,
        in room: Room,
        variants requested: [HLSVariantRequest]?
    )
        throws(RoomError) -> [Delivery]
    {
        let requested = requested ?? [HLSVariantRequest()]
        if requested.isEmpty || requested.count > Self.maxVariants {
            throw .invalidParams("variants: 1 to \(Self.maxVariants) variants, got \(requested.count)")
        }
        for (i, variant) in requested.enumerated() {
            if let url = variant.meetingURL {
                try checkSize(url, field: "variants[\(i)].meeting_url", limit: Self.maxVariantFieldBytes)
            }
            if let metadata = variant.metadata {
                try checkSize(metadata, field: "variants[\(i)].metadata", limit: Self.maxVariantFieldBytes)
            }
        }
        try requirePermission(initiator, \.hlsStreaming, "hlsStreaming")
        switch room.liveStream?.state {
        case nil, .scheduled, .ended: break  // ended → live: 1.1's restart
        case .live: throw RoomError(.wrongState, "hls: the stream is already running")
        case .vod: throw RoomError(.wrongState, "hls: the stream is a VOD now (state \"vod\"); it cannot go live again")
        }
        let now = clock.nowMillis()
        let url = playlistURL(for: room)
        room.liveStream = LiveStream(
            state: .live,
            startedAt: now,
            startedBy: ActorRef(initiator),
            variants: requested.map {
                HLSVariant(url: url, meetingURL: $0.meetingURL, metadata: $0.metadata, startedAt: now)
            },
            startsAt: room.liveStream?.startsAt
        )
        record(.hlsStarted(room: RoomRef(room), by: ActorRef(initiator), urls: [url]), at: now)
        recordStreamChange(room, by: ActorRef(initiator), at: now)
        return [Delivery(.hlsUpdate(room.liveStream!), to: room.peersInJoinOrder)].nonEmpty
    }

    /// REST `POST …/stream {state:"scheduled", starts_at}`: a show announced
    /// before it goes live (again, to move its start). Every peer gets `on-hls-update`.
    public func scheduleLiveStream(
        by initiator: Initiator,
        in room: Room,
        startsAt: Int64
    ) throws(RoomError)
        -> [Delivery]
    {
        try requirePermission(initiator, \.hlsStreaming, "hlsStreaming")
        if let state = room.liveStream?.state, state != .scheduled {
            throw RoomError(.wrongState, "stream: cannot schedule a stream that is \(state.rawValue)")
        }
        room.liveStream = LiveStream(state: .scheduled, startsAt: startsAt)
        recordStreamChange(room, by: ActorRef(initiator), at: clock.nowMillis())
        return [Delivery(.hlsUpdate(room.liveStream!), to: room.peersInJoinOrder)].nonEmpty
    }

    /// REST `POST …/stream {state:"vod", vod_url}`: an ended stream's recording
    /// is watchable. Every peer gets `on-hls-update`.
    public func publishVOD(by initiator: Initiator, in room: Room, url: String) throws(RoomError) -> [Delivery] {
        if url.isEmpty { throw .invalidParams("vod_url: must not be empty") }
        try checkSize(url, field: "vod_url", limit: Self.maxVariantFieldBytes)
        try requirePermission(initiator, \.hlsStreaming, "hlsStreaming")
        guard room.liveStream?.state == .ended else {
            let state = room.liveStream?.state.rawValue ?? "none"
            throw RoomError(.wrongState, "stream: only an ended stream becomes a VOD, this one is \(state)")
        }
        room.liveStream!.state = .vod
        room.liveStream!.vodURL = url
        recordStreamChange(room, by: ActorRef(initiator), at: clock.nowMillis())
        return [Delivery(.hlsUpdate(room.liveStream!), to: room.peersInJoinOrder)].nonEmpty
    }

    /// `stream.scheduled|live|ended|vod` for the operator.
    private func recordStreamChange(_ room: Room, by actor: ActorRef?, at now: Int64) {
        guard let stream = room.liveStream else { return }
        room.feed?.state(FeedState(room), at: now)  // the feed's `stream` follows every change
        record(
            .streamChanged(
                room: RoomRef(room),
                state: stream.state,
                by: actor,
                startsAt: stream.startsAt,
                vodURL: stream.vodURL
            ),
            at: now
        )
    }

    /// `hls-stop` (or REST `…/hls/stop`): every peer gets `on-hls-update` with
    /// `running:false`. A scheduled show is cancelled the same way (scheduled → ended).
    public func stopLiveStream(by initiator: Initiator, in room: Room) throws(RoomError) -> [Delivery] {
        try requirePermission(initiator, \.hlsStreaming, "hlsStreaming")
        switch room.liveStream?.state {
        case .live: endLiveStream(room, by: ActorRef(initiator), reason: "stopped")
        case .scheduled:
            let now = clock.nowMillis()
            room.liveStream!.state = .ended
            room.liveStream!.stoppedAt = now
            room.liveStream!.stoppedBy = ActorRef(initiator)
            recordStreamChange(room, by: ActorRef(initiator), at: now)
        case nil, .ended, .vod: throw RoomError(.wrongState, "hls: the stream is not running")
        }
        return [Delivery(.hlsUpdate(room.liveStream!), to: room.peersInJoinOrder)].nonEmpty
    }

    /// `hls-timed-metadata`: each object becomes a cue from now to now + duration;
    /// every peer gets `on-hls-timed-metadata {cues}`. All or nothing.
    public func addTimedMetadata(
        by initiator: Initiator,
        in room: Room,
        _ requests: [HLSCueRequest]
    )
        throws(RoomError) -> (cues: [HLSCue], deliveries: [Delivery])
    {
        if requests.isEmpty || requests.count > Self.maxCuesPerCall {
            throw .invalidParams("metadata_objs: 1 to \(Self.maxCuesPerCall) objects, got \(requests.count)")
        }
        for (i, request) in requests.enumerated() {
            try checkSize(request.payload, field: "metadata_objs[\(i)].payload", limit: Self.maxCuePayloadBytes)
            if !Self.cueDurationRange.contains(request.durationS) {
                throw .invalidParams(
                    "metadata_objs[\(i)].duration: must be between 1 and 3600 s, got \(request.durationS)"
                )
            }
        }
        try requirePermission(initiator, \.hlsStreaming, "hlsStreaming")
        guard room.liveStream?.running == true else { throw RoomError(.wrongState, "hls: the stream is not running") }
        let now = clock.nowMillis()
        room.liveStream!.prune(now: now)
        let limit = settings.hls.maxLiveCues
        if room.liveStream!.cues.count + requests.count > limit {
            throw RoomError(
                .tooMany,
                "metadata_objs: at most \(limit) live cues per room (settings.hls.max_live_cues), \(room.liveStream!.cues.count) live"
            )
        }
        let cues = requests.map {
            HLSCue(id: ids.next(.cue), payload: $0.payload, startDate: now, endDate: now + Int64($0.durationS) * 1000)
        }
        room.liveStream!.cues += cues
        timeCues(room)
        feedState(room)
        return (cues, [Delivery(.hlsTimedMetadata(cues), to: room.peersInJoinOrder)].nonEmpty)
    }

    /// The room's `CueEnd` is due at its earliest live cue's end (none without cues).
    func timeCues(_ room: Room) {
        guard let end = room.liveStream?.cues.lazy.map(\.endDate).min() else {
            cancel(room.cueEntry)
            room.cueEntry = nil
            return
        }
        if room.cueEntry.flatMap({ deadlines.deadline(of: $0) }) == end { return }
        cancel(room.cueEntry)
        room.cueEntry = schedule(CueEnd(room: room), at: end)
    }

    /// `settings.hls.playlist_url` with `{room_id}` and `{session_id}` replaced.
    public func playlistURL(for room: Room) -> String {
        settings.hls.playlistURL.replacing("{room_id}", with: room.id.rawValue).replacing(
            "{session_id}",
            with: room.sessionID
        )
    }

    /// The stream ends (a stop, or the room's end): no variants, no cues.
    func endLiveStream(_ room: Room, by actor: ActorRef?, reason: String) {
        guard room.liveStream?.running == true else { return }
        let now = clock.nowMillis()
        room.liveStream!.state = .ended
        room.liveStream!.stoppedAt = now
        room.liveStream!.stoppedBy = actor
        room.liveStream!.variants = []
        room.liveStream!.cues = []
        timeCues(room)
        record(.hlsStopped(room: RoomRef(room), by: actor, reason: reason), at: now)
        recordStreamChange(room, by: actor, at: now)
    }
}

/// The end of a room's earliest live HLS cue: the cues that ended are
/// dropped (nothing is pushed: a cue's end is known to all), so that
/// `room.hls.cues` is current in every Room object the server writes. One
/// entry per room with cues (`Room.cueEntry`).
struct CueEnd: ModelDeadline {
    static let rank = 3
    let room: Room

    func expire(in registry: RoomRegistry, at now: Int64) -> Expired {
        room.cueEntry = nil
        guard registry.rooms[room.id] === room else { return Expired() }
        room.liveStream?.prune(now: now)
        registry.timeCues(room)
        return Expired()
    }
}
