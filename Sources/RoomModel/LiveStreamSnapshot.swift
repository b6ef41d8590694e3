import RoomProtocol
import RoomWire

// The `live_stream` section of a `RoomSnapshot` (a LiveStream, or null):
//
//     {"running", "state", "starts_at", "vod_url", "started_at", "started_by",
//      "stopped_at", "stopped_by",
//      "variants":[{"url", "meeting_url", "metadata", "started_at"}],
//      "cues":[{"id", "payload", "start_date", "end_date"}]}
//
// `state`, `starts_at` and `vod_url` came with 1.2 (section 23); a stream
// saved before them reads as `live` or `ended`.

extension JSONWriter {
    /// The `live_stream` section.
    mutating func liveStreamSection(_ stream: LiveStream?) {
        guard let stream else { return null() }
        beginObject()
        field("running", stream.running)
        field("state", stream.state.rawValue)
        nullable("starts_at", stream.startsAt)
        nullable("vod_url", stream.vodURL)
        runStamps(stream.startedAt, stream.startedBy, stream.stoppedAt, stream.stoppedBy)
        key("variants")
        beginArray()
        for variant in stream.variants {
            beginObject()
            field("url", variant.url)
            nullable("meeting_url", variant.meetingURL)
            nullable("metadata", variant.metadata)
            field("started_at", variant.startedAt)
            endObject()
        }
        endArray()
        key("cues")
        beginArray()
        for cue in stream.cues {
            beginObject()
            field("id", cue.id)
            field("payload", cue.payload)
            field("start_date", cue.startDate)
            field("end_date", cue.endDate)
            endObject()
        }
        endArray()
        endObject()
    }
}

extension LiveStream {
    init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        let running = try r.bool("running")
        // Saved before 1.2's lifecycle: live or ended.
        let state = try r.has("state") ? r.string("state") : running ? "live" : "ended"
        guard let state = StreamState(rawValue: state), state == .live || !running else {
            throw r.failure("state", "expected scheduled, live, ended or vod (live exactly when running), got \(state)")
        }
        let run = try RunStamps(r)
        try self.init(
            state: state,
            startedAt: run.startedAt,
            startedBy: run.startedBy,
            stoppedAt: run.stoppedAt,
            stoppedBy: run.stoppedBy,
            variants: r.objects("variants") { v throws(RoomSnapshotError) in
                try HLSVariant(
                    url: v.string("url"),
                    meetingURL: v.nullable("meeting_url", v.string),
                    metadata: v.nullable("metadata", v.string),
                    startedAt: v.int64("started_at")
                )
            },
            cues: r.objects("cues") { c throws(RoomSnapshotError) in
                try HLSCue(
                    id: c.string("id"),
                    payload: c.string("payload"),
                    startDate: c.int64("start_date"),
                    endDate: c.int64("end_date")
                )
            },
            startsAt: r.has("starts_at") ? r.nullable("starts_at", r.int64) : nil,
            vodURL: r.has("vod_url") ? r.nullable("vod_url", r.string) : nil
        )
    }
}
