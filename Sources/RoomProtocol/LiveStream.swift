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
