import RoomWire

// The show (PROTOCOL.md sections 16 and 23): the stream's lifecycle, its
// outputs and timed-metadata cues. Same conventions as Peers.swift. roomd
// holds no media: this is the control plane's view.

/// The stream's lifecycle (1.2, section 23; HotMic's SCHEDULED → LIVE → ENDED →
/// VOD, and SCHEDULED → ENDED for a cancelled show).
public enum StreamState: String, Sendable, Equatable, Hashable, CaseIterable {
    case scheduled, live, ended, vod
}

/// One output of the stream: `{url, meeting_url, metadata, started_at}`.
public struct HLSVariant: Sendable, Equatable, Hashable {
    /// The playlist (`settings.hls.playlist_url` with the room and session ids).
    public var url: String
    /// The page a recorder/composer renders, as given to `hls-start`.
    public var meetingURL: String?
    /// Free text given to `hls-start`.
    public var metadata: String?
    public var startedAt: Int64

    /// Builds an output.
    public init(url: String, meetingURL: String?, metadata: String?, startedAt: Int64) {
        self.url = url
        self.meetingURL = meetingURL
        self.metadata = metadata
        self.startedAt = startedAt
    }

    package init(_ r: WireReader) throws {
        try r.requireObject()
        url = try r.string("url")
        meetingURL = try r.optionalString("meeting_url")
        metadata = try r.optionalString("metadata")
        startedAt = try r.int64("started_at")
    }

    @inlinable
    public func encode(into w: inout JSONWriter) {
        w.beginObject()
        w.field("url", url)
        w.wireField("meeting_url", orNull: meetingURL)
        w.wireField("metadata", orNull: metadata)
        w.field("started_at", startedAt)
        w.endObject()
    }
}

/// A timed-metadata cue (100ms `HMSHLSCue`): HLS players show `payload`
/// from `startDate` to `endDate` (ms since the epoch).
public struct HLSCue: Sendable, Equatable, Hashable {
    public var id: String
    public var payload: String
    public var startDate: Int64
    public var endDate: Int64

    /// Builds a cue.
    public init(id: String, payload: String, startDate: Int64, endDate: Int64) {
        self.id = id
        self.payload = payload
        self.startDate = startDate
        self.endDate = endDate
    }

    package init(_ r: WireReader) throws {
        try r.requireObject()
        id = try r.string("id")
        payload = try r.string("payload")
        startDate = try r.int64("start_date")
        endDate = try r.int64("end_date")
    }

    /// `{id, payload, start_date, end_date}`.
    @inlinable
    public func encode(into w: inout JSONWriter) {
        w.beginObject()
        w.field("id", id)
        w.field("payload", payload)
        w.field("start_date", startDate)
        w.field("end_date", endDate)
        w.endObject()
    }

    /// `"cues": [Cue…]` (inside an open object).
    @inlinable
    public static func encodeCues(_ cues: [HLSCue], into w: inout JSONWriter) {
        w.key("cues")
        w.beginArray()
        for cue in cues { cue.encode(into: &w) }
        w.endArray()
    }
}

/// What `hls-start` asks for, one per output.
public struct HLSVariantRequest: Sendable, Equatable, Hashable {
    public var meetingURL: String?
    public var metadata: String?

    public init(meetingURL: String? = nil, metadata: String? = nil) {
        self.meetingURL = meetingURL
        self.metadata = metadata
    }

    /// One entry of `hls-start`'s `variants`.
    package var json: JSON {
        .object(
            [
                meetingURL.map { .init("meeting_url", .string($0)) },
                metadata.map { .init("metadata", .string($0)) },
            ].compactMap { $0 }
        )
    }
}

/// The room's live stream (PROTOCOL.md section 16): `room.hls` of `join`,
/// and ``RoomEvent/hlsUpdate(_:)``. roomd holds no media; this is the
/// control plane's view of the HLS stream.
public struct HLSState: Sendable, Equatable, Hashable {
    /// Whether the stream runs now (`state == .live`).
    public var running: Bool
    /// Where the show's stream is in its life (1.2, section 23).
    public var state: StreamState
    /// When a scheduled show starts, ms since the epoch (1.2).
    public var startsAt: Int64?
    /// The recording's URL once the stream is a VOD (1.2).
    public var vodURL: String?
    /// When the (last) run started, ms since the epoch.
    public var startedAt: Int64?
    /// Who started it; `PeerRef.peerID` is nil when the REST API did.
    public var startedBy: PeerRef?
    /// When the last run stopped (nil while running).
    public var stoppedAt: Int64?
    /// Who stopped it; nil when the room's end did.
    public var stoppedBy: PeerRef?
    /// The outputs of a running stream (empty once stopped).
    public var variants: [HLSVariant]
    /// Timed-metadata cues whose end has not passed, oldest first.
    public var cues: [HLSCue]

    /// Decodes an HLSState object. Throws ``WireError``.
    public init(json: JSON) throws {
        try self.init(WireReader(json, path: "hls"))
    }

    package init(_ r: WireReader) throws {
        try r.requireObject()
        running = try r.bool("running")
        // A 1.1 daemon sends no state: live or ended.
        let state = try r.optionalString("state") ?? (running ? "live" : "ended")
        guard let known = StreamState(rawValue: state) else {
            throw WireError(path: "hls.state", problem: "unknown state \"\(state)\"")
        }
        self.state = known
        startsAt = try r.optionalInt64("starts_at")
        vodURL = try r.optionalString("vod_url")
        startedAt = try r.optionalInt64("started_at")
        startedBy = try r.optionalObject("started_by", PeerRef.init)
        stoppedAt = try r.optionalInt64("stopped_at")
        stoppedBy = try r.optionalObject("stopped_by", PeerRef.init)
        variants = try r.elements("variants").map { try HLSVariant($0) }
        cues = try r.elements("cues").map { try HLSCue($0) }
    }
}

/// One object of ``RoomClient/sendHLSTimedMetadata(_:timeout:)`` (100ms
/// `HMSHLSTimedMetadata(payload:duration:)`).
public struct HLSTimedMetadata: Sendable, Equatable, Hashable {
    /// At most 4096 bytes of UTF-8.
    public var payload: String
    /// Seconds the cue lasts, 1...3600.
    public var duration: Int

    public init(payload: String, duration: Int) {
        self.payload = payload
        self.duration = duration
    }
}

/// RTMP out of the room (PROTOCOL.md section 23): `room.rtmp` of `join` and
/// ``RoomEvent/rtmpUpdate(_:)``. State only; the URLs (they carry stream
/// keys) are not shown, only their count.
public struct RTMPState: Sendable, Equatable, Hashable {
    public var running: Bool
    /// When the (last) run started, ms since the epoch.
    public var startedAt: Int64?
    /// Who started it; `PeerRef.peerID` is nil when the REST API did.
    public var startedBy: PeerRef?
    /// How many RTMP URLs the run streams to (1...3; 0 once stopped).
    public var urlsCount: Int
    public var stoppedAt: Int64?

    package init(_ r: WireReader) throws {
        try r.requireObject()
        running = try r.bool("running")
        startedAt = try r.optionalInt64("started_at")
        startedBy = try r.optionalObject("started_by", PeerRef.init)
        urlsCount = try r.int("rtmp_urls_count")
        stoppedAt = try r.optionalInt64("stopped_at")
    }
}

/// The room's recording (PROTOCOL.md section 23): `room.recording` of `join`
/// and ``RoomEvent/recordingUpdate(_:)``. State only.
public struct RecordingState: Sendable, Equatable, Hashable {
    public var running: Bool
    public var startedAt: Int64?
    public var startedBy: PeerRef?
    public var stoppedAt: Int64?

    package init(_ r: WireReader) throws {
        try r.requireObject()
        running = try r.bool("running")
        startedAt = try r.optionalInt64("started_at")
        startedBy = try r.optionalObject("started_by", PeerRef.init)
        stoppedAt = try r.optionalInt64("stopped_at")
    }
}
