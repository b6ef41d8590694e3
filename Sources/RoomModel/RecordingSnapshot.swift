import RoomWire

// The `rtmp` and `recording` sections of a `RoomSnapshot` (1.2, section 23;
// each a run or null, and absent in older snapshots):
//
//     "rtmp": {"running", "started_at", "started_by", "stopped_at", "stopped_by",
//              "meeting_url", "urls"}
//     "recording": {"running", "started_at", "started_by", "stopped_at",
//                   "stopped_by", "with_rtmp"}

extension JSONWriter {
    /// The `rtmp` section.
    mutating func rtmpSection(_ rtmp: RTMPRun?) {
        guard let rtmp else { return null() }
        beginObject()
        field("running", rtmp.running)
        runStamps(rtmp.startedAt, rtmp.startedBy, rtmp.stoppedAt, rtmp.stoppedBy)
        nullable("meeting_url", rtmp.meetingURL)
        key("urls")
        strings(rtmp.urls)
        endObject()
    }

    /// The `recording` section.
    mutating func recordingSection(_ recording: RecordingRun?) {
        guard let recording else { return null() }
        beginObject()
        field("running", recording.running)
        runStamps(recording.startedAt, recording.startedBy, recording.stoppedAt, recording.stoppedBy)
        field("with_rtmp", recording.withRTMP)
        endObject()
    }
}

extension RTMPRun {
    init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        let run = try RunStamps(r)
        try self.init(
            running: r.bool("running"),
            startedAt: run.startedAt,
            startedBy: run.startedBy,
            stoppedAt: run.stoppedAt,
            stoppedBy: run.stoppedBy,
            meetingURL: r.nullable("meeting_url", r.string),
            urls: r.strings("urls")
        )
    }
}

extension RecordingRun {
    init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        let run = try RunStamps(r)
        try self.init(
            running: r.bool("running"),
            startedAt: run.startedAt,
            startedBy: run.startedBy,
            stoppedAt: run.stoppedAt,
            stoppedBy: run.stoppedBy,
            withRTMP: r.bool("with_rtmp")
        )
    }
}
