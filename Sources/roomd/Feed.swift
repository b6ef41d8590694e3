import ArgumentParser
import Foundation
import RoomWire

/// `roomd feed ROOM [--from T] [--to T]`: what the audience feed
/// (`GET /v2/rooms/{room_id}/feed`, PROTOCOL.md section 24) tells a viewer
/// about a span of seconds, asked with a management token. A span longer
/// than the route's 60 s is asked in 60-s pieces, in order.
struct Feed: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "What the audience feed tells about a span: chat, deletions, pins, reactions, polls, questions.",
        discussion: """
            Times are ISO 8601 (2026-11-29T20:00:00Z) or seconds since 1970; by default the last 10 seconds \
            (--to now, --from 10 s before --to). The feed answers the last settings.feed.window_s seconds \
            (300 by default; older is 410), up to the daemon's now (a later --to is 400). A span over 60 s is \
            asked in pieces of 60 s, at most \(maxSeconds) s in all; --json prints each piece's body on a line.
            """
    )
    /// The most seconds one command asks for: the largest `feed.window_s`.
    static let maxSeconds = 3600
    /// The longest span the route answers.
    static let spanSeconds = 60

    @OptionGroup var options: OperatorOptions
    @Argument(help: "Room id.") var room: String
    @Option(help: "The span's start (included).") var from: String?
    @Option(help: "The span's end (excluded; default now).") var to: String?

    /// `(from, to)` in whole seconds since 1970, checked.
    func span(now: Date = Date()) throws -> (Int64, Int64) {
        let end =
            try to.map { try typedTime($0, option: "--to", unitMillis: 1000) / 1000 }
            ?? Int64(now.timeIntervalSince1970.rounded(.down))
        let start = try from.map { try typedTime($0, option: "--from", unitMillis: 1000) / 1000 } ?? end - 10
        guard start < end else {
            throw ValidationError(
                "--from: must be before --to, got \(readableTime(Int(start) * 1000)) and \(readableTime(Int(end) * 1000))"
            )
        }
        guard end - start <= Self.maxSeconds else {
            throw ValidationError("--from: at most \(Self.maxSeconds) s before --to, got \(end - start) s")
        }
        return (start, end)
    }

    func validate() throws { _ = try span() }

    func run() throws {
        let path = "/v2/rooms/\(try roomPath(room))/feed"
        let (start, end) = try span()
        var piece = start
        while piece < end {
            let pieceEnd = min(piece + Int64(Self.spanSeconds), end)
            let answer = try options.request(.get, "\(path)?from=\(piece)&to=\(pieceEnd)")
            options.print(answer, human: feedLines)
            piece = pieceEnd
        }
    }
}

/// A feed body for people: a line for the span and the room as of its end,
/// then a line per event, then the chat state when it is not the default.
private func feedLines(_ body: JSON) -> [String] {
    let from = body["from"]?.intValue.map { readableTime($0 * 1000) } ?? "?"
    let to = body["to"]?.intValue.map { readableTime($0 * 1000) } ?? "?"
    let peers = body["peer_count"]?.intValue ?? 0
    var head = "\(body["room_id"]?.stringValue ?? "?")  \(from) to \(to)  \(peers) peer\(peers == 1 ? "" : "s")"
    if let state = body["stream"]?["state"]?.stringValue { head += "  stream \(state)" }
    var lines = [head]
    for message in body["chat"]?.arrayValue ?? [] {
        let time = message["timestamp"]?.intValue.map(readableTime) ?? "?"
        let type = message["info"]?["type"]?.stringValue.flatMap { $0 == "chat" ? nil : " [\($0)]" } ?? ""
        let text = message["info"]?["message"]?.stringValue ?? message["info"]?["message"]?.text ?? ""
        lines.append("  \(time)  \(actorName(message["sender"]))\(type): \(text)")
    }
    for id in body["deleted"]?.arrayValue ?? [] { lines.append("  deleted \(id.stringValue ?? id.text)") }
    if let pinned = body["pinned"], case .object = pinned {
        lines.append(
            "  pinned \(pinned["message_id"]?.stringValue ?? "?"): \(pinned["info"]?["message"]?.stringValue ?? "")"
        )
    }
    for reaction in body["reactions"]?.arrayValue ?? [] {
        let target = reaction["target"]?.stringValue ?? "?"
        lines.append(
            "  reaction \(reaction["type"]?.stringValue ?? "?") on \(target): \(reaction["total"]?.intValue ?? 0)"
        )
    }
    for poll in body["polls"]?.arrayValue ?? [] {
        lines.append(
            "  poll \(poll["poll_id"]?.stringValue ?? "?") \"\(poll["title"]?.stringValue ?? "")\" "
                + (poll["state"]?.stringValue ?? "?")
        )
    }
    for stats in body["poll_stats"]?.arrayValue ?? [] {
        let voters = stats["user_count"]?.intValue ?? 0
        lines.append(
            "  votes on \(stats["poll_id"]?.stringValue ?? "?"): \(voters) voter\(voters == 1 ? "" : "s"), "
                + "\(stats["total_response"]?.intValue ?? 0) answers"
        )
    }
    for question in body["questions"]?["changed"]?.arrayValue ?? [] {
        lines.append(
            "  question \(question["question_id"]?.stringValue ?? "?") \(question["state"]?.stringValue ?? "?")  "
                + "score \(question["score"]?.intValue ?? 0)  \"\(question["text"]?.stringValue ?? "")\""
        )
    }
    for id in body["questions"]?["removed"]?.arrayValue ?? [] {
        lines.append("  question \(id.stringValue ?? id.text) removed")
    }
    if body["chat_state"]?["paused"] == .bool(true) { lines.append("  chat paused") }
    if let slow = body["chat_state"]?["slow_mode_s"]?.intValue, slow > 0 { lines.append("  slow mode \(slow) s") }
    if body["ended"] == .bool(true) { lines.append("  the session ended") }
    return lines
}
