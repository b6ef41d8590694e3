import RoomWire

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

    /// Decodes an HLSState object. Throws ``RoomClientError/invalidPayload(_:)``.
    public init(json: JSON) throws {
        try self.init(WireReader(json, path: "hls"))
    }

    init(_ r: WireReader) throws {
        try r.requireObject()
        running = try r.bool("running")
        // A 1.1 daemon sends no state: live or ended.
        let state = try r.optionalString("state") ?? (running ? "live" : "ended")
        guard let known = StreamState(rawValue: state) else {
            throw RoomClientError.invalidPayload("hls.state: unknown state \"\(state)\"")
        }
        self.state = known
        startsAt = r.has("starts_at") ? try r.int64("starts_at") : nil
        vodURL = try r.optionalString("vod_url")
        startedAt = r.has("started_at") ? try r.int64("started_at") : nil
        startedBy = r.has("started_by") ? try PeerRef(r.child("started_by")) : nil
        stoppedAt = r.has("stopped_at") ? try r.int64("stopped_at") : nil
        stoppedBy = r.has("stopped_by") ? try PeerRef(r.child("stopped_by")) : nil
        variants = try r.elements("variants").map { try HLSVariant($0) }
        cues = try r.elements("cues").map { try HLSCue($0) }
    }
}

/// The stream's lifecycle (1.2, section 23; HotMic's SCHEDULED → LIVE → ENDED → VOD).
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

    init(_ r: WireReader) throws {
        try r.requireObject()
        url = try r.string("url")
        meetingURL = try r.optionalString("meeting_url")
        metadata = try r.optionalString("metadata")
        startedAt = try r.int64("started_at")
    }
}

/// A timed-metadata cue (100ms `HMSHLSCue`): HLS players show `payload`
/// from `startDate` to `endDate` (ms since the epoch).
public struct HLSCue: Sendable, Equatable, Hashable {
    public var id: String
    public var payload: String
    public var startDate: Int64
    public var endDate: Int64

    init(_ r: WireReader) throws {
        try r.requireObject()
        id = try r.string("id")
        payload = try r.string("payload")
        startDate = try r.int64("start_date")
        endDate = try r.int64("end_date")
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

/// What `hls-start` asks for, one per output.
public struct HLSVariantRequest: Sendable, Equatable, Hashable {
    public var meetingURL: String?
    public var metadata: String?

    public init(meetingURL: String? = nil, metadata: String? = nil) {
        self.meetingURL = meetingURL
        self.metadata = metadata
    }
}

extension RoomClient {
    // MARK: - Live stream (PROTOCOL.md section 16)

    /// Starts the room's HLS stream (`hls-start {variants?}`).
    ///
    /// Every peer, this one included, gets ``RoomEvent/hlsUpdate(_:)`` with
    /// `running` true; each variant's `url` is the daemon's playlist URL.
    ///
    /// - Parameter variants: 1 to 8 outputs; nil asks for one default variant.
    /// - Throws: `rpc` with 40300 (the role lacks `hlsStreaming`, or a
    ///   `view_and_polls_only` token), 40904 (already running), 41300
    ///   (`meeting_url` or `metadata` over 4096 bytes), -32602.
    public func startHLSStreaming(variants: [HLSVariantRequest]? = nil, timeout: Duration? = nil) async throws {
        var members: [JSON.Member] = []
        if let variants {
            members.append(
                .init(
                    "variants",
                    .array(
                        variants.map { variant in
                            .object(
                                [
                                    variant.meetingURL.map { .init("meeting_url", .string($0)) },
                                    variant.metadata.map { .init("metadata", .string($0)) },
                                ].compactMap { $0 }
                            )
                        }
                    )
                )
            )
        }
        _ = try await call("hls-start", .object(members), timeout: timeout)
    }

    /// Stops the room's HLS stream (`hls-stop`).
    ///
    /// Every peer gets ``RoomEvent/hlsUpdate(_:)`` with `running` false.
    ///
    /// - Throws: `rpc` with 40300, 40904 (not running).
    public func stopHLSStreaming(timeout: Duration? = nil) async throws {
        _ = try await call("hls-stop", nil, timeout: timeout)
    }

    /// Sends timed metadata into the running stream (`hls-timed-metadata
    /// {metadata_objs}`): each object becomes a cue from now to now +
    /// `duration`; every peer gets ``RoomEvent/hlsTimedMetadata(_:)``, and
    /// late joiners find live cues in `room.hls.cues`.
    ///
    /// - Parameter metadata: 1 to 20 objects.
    /// - Returns: The cues, in order.
    /// - Throws: `rpc` with 40300, 40904 (stream not running), 40907 (too many
    ///   live cues in the room), 41300 (payload over 4096 bytes), -32602
    ///   (count, duration outside 1...3600).
    @discardableResult
    public func sendHLSTimedMetadata(
        _ metadata: [HLSTimedMetadata],
        timeout: Duration? = nil
    ) async throws
        -> [HLSCue]
    {
        let objects: [JSON] = metadata.map {
            .object([.init("payload", .string($0.payload)), .init("duration", .int($0.duration))])
        }
        let result = try await call(
            "hls-timed-metadata",
            .object([.init("metadata_objs", .array(objects))]),
            timeout: timeout
        )
        do {
            return try WireReader(result, path: "").elements("cues").map { try HLSCue($0) }
        } catch RoomClientError.invalidPayload(let problem) {
            throw RoomClientError.invalidPayload("hls-timed-metadata result: \(problem)")
        }
    }
}
