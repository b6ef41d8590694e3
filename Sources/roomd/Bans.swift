import ArgumentParser
import RoomWire

/// `roomd bans [list]|add|remove`: a live room's bans over the REST API
/// (PROTOCOL.md section 22). A ban closes the user's peers with 4001 and
/// refuses its joins with 40301 until it ends.
struct Bans: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A live room's bans (REST): list, add, remove.",
        subcommands: [List.self, Add.self, Remove.self],
        defaultSubcommand: List.self
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The room's bans, oldest first: user, until when, reason, who banned."
        )
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String

        func run() throws {
            let answer = try options.request(.get, "/v2/active-rooms/\(try roomPath(room))/bans")
            options.print(answer) { answer in
                let bans = answer["bans"]?.arrayValue ?? []
                return bans.isEmpty ? ["no bans"] : bans.map(banLine)
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Ban a user (in the room or not): its peers are closed with 4001, its joins refused (40301)."
        )
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String
        @Argument(help: "User id.") var user: String
        @Option(help: "Seconds, 1 to 31536000 (default: the rest of the session).") var duration: Int?
        @Option(help: "Why (at most 256 bytes; shown in the list).") var reason: String?

        func validate() throws {
            if let duration, !(1...31_536_000).contains(duration) {
                throw ValidationError("--duration: must be between 1 and 31536000 seconds, got \(duration)")
            }
        }

        func run() throws {
            var body: [JSON.Member] = [.init("user_id", .string(user))]
            if let duration { body.append(.init("duration_s", .int(duration))) }
            if let reason { body.append(.init("reason", .string(reason))) }
            let answer = try options.request(.post, "/v2/active-rooms/\(try roomPath(room))/ban", body: .object(body))
            options.print(answer) { _ in ["banned \(user)" + (duration.map { " for \($0) s" } ?? " for the session")] }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lift a user's ban (a user without one is fine).")
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String
        @Argument(help: "User id.") var user: String

        func run() throws {
            let answer = try options.request(
                .post,
                "/v2/active-rooms/\(try roomPath(room))/unban",
                body: .object([.init("user_id", .string(user))])
            )
            options.print(answer) { _ in ["unbanned \(user)"] }
        }
    }
}

/// `eve  until 2026-11-29T11:00:00Z  by Ada (host)  "spam"`.
private func banLine(_ ban: JSON) -> String {
    var line = ban["user_id"]?.stringValue ?? "?"
    line += ban["until"]?.intValue.map { "  until " + readableTime($0) } ?? "  for the session"
    line += "  by " + actorName(ban["banned_by"])
    if let reason = ban["reason"]?.stringValue, !reason.isEmpty { line += "  \"\(reason)\"" }
    return line
}

/// A PeerRef for people: `Ada (host)`, or `server` for the REST API's changes.
func actorName(_ ref: JSON?) -> String {
    let name = ref?["info"]?["name"]?.stringValue ?? "?"
    return ref?["role"]?.stringValue.map { "\(name) (\($0))" } ?? name
}
