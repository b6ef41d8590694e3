import ArgumentParser
import RoomWire

/// `roomd reports [list]|resolve`: a live room's reports over the REST API
/// (PROTOCOL.md section 32): the open (or resolved) ones, oldest first, and
/// resolving one (every `moderateChat` peer gets `on-report-update`).
struct Reports: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A live room's reports (REST): list, resolve.",
        subcommands: [List.self, Resolve.self],
        defaultSubcommand: List.self
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The room's reports of one status, oldest first: id, when, target, who, reason."
        )
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String
        @Option(help: "open (default) or resolved.") var status = "open"

        func validate() throws {
            if !["open", "resolved"].contains(status) {
                throw ValidationError("--status: open or resolved, got \"\(status)\"")
            }
        }

        func run() throws {
            let answer = try options.request(.get, "/v2/active-rooms/\(try roomPath(room))/reports?status=\(status)")
            options.print(answer) { answer in
                let reports = answer["reports"]?.arrayValue ?? []
                var lines = reports.isEmpty ? ["no \(status) reports"] : reports.map(reportLine)
                if answer["more"] == .bool(true) { lines.append("(more: the page was cut)") }
                return lines
            }
        }
    }

    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resolve an open report (40408 unknown, 40904 resolved already)."
        )
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String
        @Argument(help: "Report id.") var report: String
        @Option(help: "A note for the other moderators (at most 1024 bytes).") var note: String?

        func run() throws {
            var body: [JSON.Member] = []
            if let note { body.append(.init("note", .string(note))) }
            let answer = try options.request(
                .post,
                "/v2/active-rooms/\(try roomPath(room))/reports/\(try idPath(report))/resolve",
                body: .object(body)
            )
            options.print(answer) { answer in ["resolved " + reportLine(answer["report"] ?? .null)] }
        }
    }
}

/// An id as one path segment: refused when it would leave the segment.
private func idPath(_ id: String) throws -> String {
    guard !id.isEmpty, id.allSatisfy({ $0.isLetter || $0.isNumber || "-_.~".contains($0) }) else {
        throw ValidationError("\"\(id)\" is not a report id")
    }
    return id
}

/// `4f1c…  2026-11-29T20:01:02Z  message 5454…  by Bob (viewer)  "spam"`, and
/// for a resolved one `  resolved by server at …: note`.
private func reportLine(_ report: JSON) -> String {
    var line = report["report_id"]?.stringValue ?? "?"
    line += "  " + (report["at"]?.intValue.map(readableTime) ?? "?")
    line += "  \(report["target"]?["type"]?.stringValue ?? "?") \(report["target"]?["id"]?.stringValue ?? "?")"
    line += "  by " + actorName(report["reported_by"])
    line += "  \"\(report["reason"]?.stringValue ?? "")\""
    if report["status"] == "resolved" {
        line += "  resolved by " + actorName(report["resolved_by"])
        if let at = report["resolved_at"]?.intValue { line += " at " + readableTime(at) }
        if let note = report["note"]?.stringValue, !note.isEmpty { line += ": \(note)" }
    }
    return line
}
