import ArgumentParser
import RoomWire

/// `roomd stream [get]|set`: a live room's stream state over the REST API
/// (PROTOCOL.md sections 16 and 23: `GET|POST /v2/active-rooms/{room_id}/stream`).
struct StreamCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stream",
        abstract: "A live room's stream (REST): its state, variants and live cues; schedule, start, end, VOD.",
        subcommands: [Get.self, Change.self],
        defaultSubcommand: Get.self
    )

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The stream: state (scheduled, live, ended, vod), who started or stopped it, variants, cues."
        )
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String

        func run() throws {
            let answer = try options.request(.get, "/v2/active-rooms/\(try roomPath(room))/stream")
            options.print(answer, human: streamLines)
        }
    }

    struct Change: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Move the stream: scheduled (--starts-at), live, ended, or vod (--vod-url); every peer is told.",
            discussion: """
                Allowed: none or scheduled -> scheduled (moves the start), none, scheduled or ended -> live, \
                live or scheduled -> ended, ended -> vod; others are 409 40904 (a VOD never goes live again).
                """
        )
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String
        @Argument(help: "scheduled, live, ended or vod.") var state: String
        @Option(help: "When a scheduled show starts: ISO 8601 (2026-11-29T20:00:00Z) or ms since 1970.")
        var startsAt: String?
        @Option(help: "Where the recording of an ended show plays (state vod).") var vodURL: String?

        func validate() throws {
            guard ["scheduled", "live", "ended", "vod"].contains(state) else {
                throw ValidationError("state: expected scheduled, live, ended or vod, got \"\(state.prefix(80))\"")
            }
            if state == "scheduled" && startsAt == nil { throw ValidationError("scheduled needs --starts-at") }
            if state == "vod" && vodURL == nil { throw ValidationError("vod needs --vod-url") }
            if startsAt != nil && state != "scheduled" { throw ValidationError("--starts-at goes with scheduled") }
            if vodURL != nil && state != "vod" { throw ValidationError("--vod-url goes with vod") }
        }

        func run() throws {
            var body: [JSON.Member] = [.init("state", .string(state))]
            if let startsAt {
                body.append(.init("starts_at", .int(try typedTime(startsAt, option: "--starts-at", unitMillis: 1))))
            }
            if let vodURL { body.append(.init("vod_url", .string(vodURL))) }
            let answer = try options.request(
                .post,
                "/v2/active-rooms/\(try roomPath(room))/stream",
                body: .object(body)
            )
            options.print(answer, human: streamLines)
        }
    }
}

/// The stream object (HLSState) for people: a line of state, then a line
/// per variant and per live cue; `no stream` before the session had one.
func streamLines(_ stream: JSON) -> [String] {
    guard case .object = stream else { return ["no stream in this session"] }
    let state = stream["state"]?.stringValue ?? (stream["running"] == .bool(true) ? "live" : "ended")
    var line = state
    if let startsAt = stream["starts_at"]?.intValue { line += "  starts " + readableTime(startsAt) }
    if let started = stream["started_at"]?.intValue {
        line += "  started \(readableTime(started)) by \(actorName(stream["started_by"]))"
    }
    if let stopped = stream["stopped_at"]?.intValue {
        let by = stream["stopped_by"].flatMap { $0.isNull ? nil : actorName($0) } ?? "the room's end"
        line += "  stopped \(readableTime(stopped)) by \(by)"
    }
    if let vod = stream["vod_url"]?.stringValue { line += "  vod \(vod)" }
    var lines = [line]
    for variant in stream["variants"]?.arrayValue ?? [] {
        var text = "  variant \(variant["url"]?.stringValue ?? "?")"
        if let meeting = variant["meeting_url"]?.stringValue { text += "  meeting \(meeting)" }
        if let metadata = variant["metadata"]?.stringValue { text += "  \"\(metadata)\"" }
        lines.append(text)
    }
    for cue in stream["cues"]?.arrayValue ?? [] {
        let start = cue["start_date"]?.intValue.map(readableTime) ?? "?"
        let end = cue["end_date"]?.intValue.map(readableTime) ?? "?"
        lines.append(
            "  cue \(cue["id"]?.stringValue ?? "?")  \(start) to \(end)  \"\(cue["payload"]?.stringValue ?? "")\""
        )
    }
    return lines
}
