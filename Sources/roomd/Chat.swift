import ArgumentParser
import Foundation
import RoomWire

/// `roomd chat ROOM [--follow]`: a live room's chat over the REST API
/// (PROTOCOL.md section 32, `GET /v2/active-rooms/{room_id}/chat`): the
/// newest messages, oldest first, and with `--follow` the new ones as they
/// come. **Choice**: it polls the history (every `--interval` seconds, the
/// newest 200) rather than the audience feed: the history is what a
/// moderator sees (shadowed messages marked), needs no time window, and a
/// poll costs one REST request.
struct Chat: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A live room's chat (REST): the newest messages, or --follow to tail it.",
        discussion: """
            Each line: the time (ISO 8601), the sender, the message ([type] when not chat, [shadowed] for a \
            shadow-banned user's). --follow keeps printing new messages (it asks for the newest 200 every \
            --interval seconds: more than 200 in one interval are not all printed) until Ctrl-C, or until the \
            room ends (exit 1, the REST error); with --json one message per line.
            """
    )
    /// The newest messages one poll of `--follow` asks for (the route's most).
    static let pollLimit = 200

    @OptionGroup var options: OperatorOptions
    @Argument(help: "Room id.") var room: String
    @Option(help: "The newest messages to print first, 1 to 200.") var limit = 50
    @Flag(help: "Keep printing new messages as they come (Ctrl-C stops).") var follow = false
    @Option(help: "Seconds between two polls with --follow, 1 to 60.") var interval = 2

    func validate() throws {
        if !(1...200).contains(limit) { throw ValidationError("--limit: must be between 1 and 200, got \(limit)") }
        if !(1...60).contains(interval) {
            throw ValidationError("--interval: must be between 1 and 60 seconds, got \(interval)")
        }
    }

    func run() throws {
        let path = "/v2/active-rooms/\(try roomPath(room))/chat"
        let first = try options.request(.get, "\(path)?limit=\(limit)")
        guard follow else {
            options.print(first) { answer in
                let messages = answer["messages"]?.arrayValue ?? []
                return messages.isEmpty ? ["no messages"] : messages.map(messageLine)
            }
            return
        }
        var seen = show(first["messages"]?.arrayValue ?? [], seen: [])
        while true {
            Thread.sleep(forTimeInterval: Double(interval))
            let page = try options.request(.get, "\(path)?limit=\(Self.pollLimit)")
            seen = show(page["messages"]?.arrayValue ?? [], seen: seen)
        }
    }

    /// Prints the messages whose ids are not in `seen`, in order; returns the
    /// ids of `messages` (what the next poll compares with: at most 200).
    private func show(_ messages: [JSON], seen: Set<String>) -> Set<String> {
        for message in messages {
            guard let id = message["message_id"]?.stringValue, !seen.contains(id) else { continue }
            Swift.print(options.json ? message.text : messageLine(message))
        }
        fflush(nil)  // every stream: a pipe's reader sees each poll's lines at once
        return Set(messages.compactMap { $0["message_id"]?.stringValue })
    }
}

/// `2026-11-29T20:01:02Z  Ada (host): hello`.
private func messageLine(_ message: JSON) -> String {
    let time = message["timestamp"]?.intValue.map(readableTime) ?? "?"
    let type = message["info"]?["type"]?.stringValue.flatMap { $0 == "chat" ? nil : " [\($0)]" } ?? ""
    let shadowed = message["shadowed"] == .bool(true) ? " [shadowed]" : ""
    let text = message["info"]?["message"]?.stringValue ?? message["info"]?["message"]?.text ?? ""
    return "\(time)  \(actorName(message["sender"]))\(type)\(shadowed): \(text)"
}
