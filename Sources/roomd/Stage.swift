import ArgumentParser
import RoomWire

/// `roomd stage list|invite|decline|block|unblock`: a live room's call-in
/// queue over the REST API (PROTOCOL.md section 26), as a producer runs it
/// from a shell.
struct Stage: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A live room's call-in queue (REST): list, invite, decline, block, unblock.",
        subcommands: [List.self, Invite.self, Decline.self, Block.self, Unblock.self],
        defaultSubcommand: List.self
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A page of the queue (waiting by position; other statuses newest first) and of the blocks."
        )
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String
        @Option(help: "waiting, invited, live, declined, withdrawn or done.") var status = "waiting"
        @Option(help: "Requests to skip.") var offset = 0
        @Option(help: "Requests to list (1..100).") var limit = 50

        func run() throws {
            let query = "status=\(status)&offset=\(offset)&limit=\(limit)"
            let answer = try options.request(.get, "/v2/active-rooms/\(try roomPath(room))/stage?\(query)")
            options.print(answer) { answer in
                let requests = answer["requests"]?.arrayValue ?? []
                var lines = ["\(answer["total"]?.intValue ?? 0) \(status)"]
                lines += requests.map(requestLine)
                if answer["more"] == .bool(true) { lines.append("  … more: --offset \(offset + requests.count)") }
                let blocked = answer["blocked"]?.arrayValue ?? []
                if !blocked.isEmpty {
                    lines.append("blocked (\(answer["blocked_total"]?.intValue ?? blocked.count)):")
                    for block in blocked {
                        let until = block["until"]?.intValue.map { " until " + readableTime($0) } ?? " for the session"
                        lines.append("  \(block["user_id"]?.stringValue ?? "?")\(until)")
                    }
                }
                return lines
            }
        }
    }

    struct Invite: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Invite a waiting caller on stage (a polite role change; the token goes only to the caller)."
        )
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String
        @Argument(help: "Request id.") var request: String
        @Option(help: "The role to offer (default settings.stage.guest_role).") var role: String?

        func run() throws {
            var body: [JSON.Member] = []
            if let role { body.append(.init("role", .string(role))) }
            let answer = try options.request(
                .post,
                "/v2/active-rooms/\(try roomPath(room))/stage/\(try pathSegment(request, "request"))/invite",
                body: .object(body)
            )
            options.print(answer) { answer in ["invited: " + requestLine(answer["request"] ?? .null)] }
        }
    }

    struct Decline: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Decline a waiting or invited request.")
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String
        @Argument(help: "Request id.") var request: String
        @Option(help: "Shown to the caller (on-stage-status).") var reason: String?

        func run() throws {
            var body: [JSON.Member] = []
            if let reason { body.append(.init("reason", .string(reason))) }
            let answer = try options.request(
                .post,
                "/v2/active-rooms/\(try roomPath(room))/stage/\(try pathSegment(request, "request"))/decline",
                body: .object(body)
            )
            options.print(answer) { _ in ["declined \(request)"] }
        }
    }

    struct Block: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Keep a user out of the queue (its open request is declined); stage-request is 40303 for it."
        )
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String
        @Argument(help: "User id.") var user: String
        @Option(help: "Seconds (default: the rest of the session).") var duration: Int?

        func run() throws {
            var body: [JSON.Member] = [.init("user_id", .string(user))]
            if let duration { body.append(.init("duration_s", .int(duration))) }
            let answer = try options.request(
                .post,
                "/v2/active-rooms/\(try roomPath(room))/stage/block",
                body: .object(body)
            )
            options.print(answer) { _ in ["blocked \(user)" + (duration.map { " for \($0) s" } ?? "")] }
        }
    }

    struct Unblock: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lift a user's block (a user without one is fine).")
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String
        @Argument(help: "User id.") var user: String

        func run() throws {
            let answer = try options.request(
                .post,
                "/v2/active-rooms/\(try roomPath(room))/stage/unblock",
                body: .object([.init("user_id", .string(user))])
            )
            options.print(answer) { _ in ["unblocked \(user)"] }
        }
    }
}

/// `  REQUEST  STATUS  #POSITION  NAME (user USER)  "NOTE"`.
private func requestLine(_ request: JSON) -> String {
    let peer = request["peer"]
    let name = peer?["info"]?["name"]?.stringValue ?? "?"
    let user = request["user_id"]?.stringValue ?? "?"
    let position = request["position"]?.intValue.map { "  #\($0)" } ?? ""
    let note = request["note"]?.stringValue.flatMap { $0.isEmpty ? nil : "  \"\($0)\"" } ?? ""
    let role = request["role"]?.stringValue.map { "  as \($0)" } ?? ""
    return "  \(request["request_id"]?.stringValue ?? "?")  \(request["status"]?.stringValue ?? "?")\(position)"
        + "  \(name) (user \(user))\(role)\(note)"
}
