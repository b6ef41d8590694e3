import RoomModel
import RoomProtocol
import RoomWire

/// Wire shapes of PROTOCOL.md sections 16 and 23: HLSState (the stream),
/// Cue, RTMP and recording state, and the packager's EXT-X-DATERANGE lines.
extension JSONWriter {
    /// HLSState, or null before the room's first `hls-start`.
    mutating func liveStream(_ state: LiveStream?) {
        guard let state else { return null() }
        object { w in w.liveStreamFields(state, cues: state.cues) }
    }

    /// The HLSState members (inside an open object), with `cues` given (the
    /// feed's are those live at its `to`, RestFeed.swift).
    mutating func liveStreamFields(_ state: LiveStream, cues: [HLSCue]) {
        field("running", state.running)
        field("state", state.state.rawValue)
        optionalField("starts_at", state.startsAt)
        optionalField("vod_url", state.vodURL)
        optionalField("started_at", state.startedAt)
        key("started_by")
        actorRef(state.startedBy)
        optionalField("stopped_at", state.stoppedAt)
        key("stopped_by")
        actorRef(state.stoppedBy)
        key("variants")
        array { w in
            for variant in state.variants { variant.encode(into: &w) }
        }
        self.cues(cues)
    }

    /// `on-rtmp-update`'s params and `room.rtmp`, or null before the first start
    /// (the URLs themselves are not shown: they carry stream keys).
    mutating func rtmp(_ state: RTMPRun?) {
        guard let state else { return null() }
        object { w in
            w.field("running", state.running)
            w.optionalField("started_at", state.startedAt)
            w.key("started_by")
            w.actorRef(state.startedBy)
            w.field("rtmp_urls_count", state.urls.count)
            w.optionalField("stopped_at", state.stoppedAt)
        }
    }

    /// `on-record-update`'s params and `room.recording`, or null before the first start.
    mutating func recording(_ state: RecordingRun?) {
        guard let state else { return null() }
        object { w in
            w.field("running", state.running)
            w.optionalField("started_at", state.startedAt)
            w.key("started_by")
            w.actorRef(state.startedBy)
            w.optionalField("stopped_at", state.stoppedAt)
        }
    }

    /// `"cues":[Cue…]` inside an open object.
    mutating func cues(_ cues: [HLSCue]) {
        HLSCue.encodeCues(cues, into: &self)
    }

    /// A PeerRef as it was (the server's PeerRef for REST), or null.
    mutating func actorRef(_ actor: ActorRef?) {
        PeerRef.encode(actor, into: &self)
    }

    mutating func optionalField(_ key: String, _ value: String?) {
        self.key(key)
        if let value { string(value) } else { null() }
    }

    mutating func optionalField(_ key: String, _ value: Int64?) {
        if let value {
            field(key, value)
        } else {
            self.key(key)
            null()
        }
    }
}

extension Envelope {
    static func encodeLiveStream(_ state: LiveStream?) -> [UInt8] {
        var w = JSONWriter()
        w.liveStream(state)
        return w.bytes
    }
}

/// RFC 8216 §4.3.2.7 EXT-X-DATERANGE tags for a packager, one per live cue.
enum DateRange {
    /// `#EXT-X-DATERANGE:ID="<id>",START-DATE="<ISO 8601>",DURATION=<s.mmm>,X-ROOMD-PAYLOAD="<base64>"`
    static func tag(_ cue: HLSCue) -> String {
        let millis = cue.endDate - cue.startDate
        let duration = "\(millis / 1000).\(pad(Int(millis % 1000), 3))"
        return "#EXT-X-DATERANGE:ID=\"\(cue.id)\",START-DATE=\"\(iso8601(cue.startDate))\",DURATION=\(duration),"
            + "X-ROOMD-PAYLOAD=\"\(base64(Array(cue.payload.utf8)))\""
    }

    /// UTC with milliseconds: `2025-11-21T04:40:00.123Z`.
    static func iso8601(_ millis: Int64) -> String {
        let days = Int(floorDiv(millis, 86_400_000))
        let inDay = Int(millis - Int64(days) * 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(inDay / 3_600_000, 2)):"
            + "\(pad(inDay / 60_000 % 60, 2)):\(pad(inDay / 1000 % 60, 2)).\(pad(inDay % 1000, 3))Z"
    }

    /// Days since 1970-01-01 → proleptic Gregorian date (Howard Hinnant's algorithm).
    static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = Int(bytes[i])
            let b1 = i + 1 < bytes.count ? Int(bytes[i + 1]) : 0
            let b2 = i + 2 < bytes.count ? Int(bytes[i + 2]) : 0
            out.append(alphabet[b0 >> 2])
            out.append(alphabet[(b0 & 3) << 4 | b1 >> 4])
            out.append(i + 1 < bytes.count ? alphabet[(b1 & 15) << 2 | b2 >> 6] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[b2 & 63] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : (a - b + 1) / b }

    private static func pad(_ n: Int, _ width: Int) -> String {
        let digits = String(n)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
