import ArgumentParser
import Foundation
import RoomWire

/// `roomd audit ROOM`: a room session's audit log over the REST API
/// (PROTOCOL.md section 32): who did which moderation act, oldest first,
/// times in ISO 8601. `--follow` keeps asking for new entries (every 2 s).
struct Audit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A room session's audit log (REST): who banned, deleted, muted, ended what, oldest first."
    )
    @OptionGroup var options: OperatorOptions
    @Argument(help: "Room id.") var room: String
    @Option(help: "The session (default: the current one, else the latest ended one).") var session: String?
    @Option(help: "Only entries after this seq.") var after: Int?
    @Option(help: "Entries per request, 1 to 500.") var limit: Int = 100
    @Flag(help: "Keep printing new entries as they come (every 2 s) until interrupted.") var follow = false

    func validate() throws {
        if !(1...500).contains(limit) { throw ValidationError("--limit: must be between 1 and 500, got \(limit)") }
        if let after, after < 0 { throw ValidationError("--after: must be 0 or more, got \(after)") }
        if let session,
            session.isEmpty || session.count > 128
                || session.contains(where: { !$0.isASCII || $0 == "&" || $0 == "#" || $0 == " " })
        {
            throw ValidationError("--session: a session id (1 to 128 ASCII characters)")
        }
    }

    func run() throws {
        let path = "/v2/rooms/\(try roomPath(room))/audit"
        var cursor = after
        var session = self.session
        var printedAny = false
        while true {
            var query = "limit=\(limit)"
            if let session { query += "&session_id=\(session)" }
            if let cursor { query += "&after=\(cursor)" }
            let answer = try options.request(.get, "\(path)?\(query)")
            let entries = answer["entries"]?.arrayValue ?? []
            session = session ?? answer["session_id"]?.stringValue  // --follow stays on one session
            if options.json {
                if !entries.isEmpty || !follow { options.print(answer) { _ in [] } }
            } else {
                for entry in entries { Swift.print(auditLine(entry)) }
                if entries.isEmpty, !follow, !printedAny { Swift.print("no entries") }
            }
            printedAny = printedAny || !entries.isEmpty
            cursor = entries.last?["seq"]?.intValue ?? cursor
            if answer["next"]?.intValue != nil { continue }  // more now
            guard follow else { return }
            fflush(nil)  // every stream: a pipe's reader sees each poll's lines at once
            Thread.sleep(forTimeInterval: 2)
        }
    }
}

/// `#3  2026-11-29T11:00:00Z  Ada (host)  peer.ban  user_id=eve  duration_s=600 reason="spam"`.
func auditLine(_ entry: JSON) -> String {
    var line = "#\(entry["seq"]?.intValue ?? 0)  " + readableTime(entry["at"]?.intValue ?? 0) + "  "
    let actor = entry["actor"]
    line += actor?["type"]?.stringValue.map { $0 == "rest" ? "REST" : $0 } ?? actorName(actor)
    line += "  " + (entry["action"]?.stringValue ?? "?")
    let target = pairs(entry["target"])
    if !target.isEmpty { line += "  " + target }
    let details = pairs(entry["details"])
    if !details.isEmpty { line += "  (" + details + ")" }
    return line
}

/// `key=value key2="text"` of an object's members.
private func pairs(_ object: JSON?) -> String {
    (object?.objectValue ?? []).map { member in
        switch member.value {
        case .string(let s): "\(member.key)=\(JSON.string(s).text)"
        default: "\(member.key)=\(member.value.text)"
        }
    }
    .joined(separator: " ")
}
