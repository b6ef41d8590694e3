import RoomWire

/// One line typed into `roomd join`: a call `method {json params}`, a
/// shorthand (JoinMethods.aliases), `help` or `me`.
enum JoinInput: Equatable {
    case call(String, JSON?)
    case help
    case me
    /// The line cannot be sent; the text says why.
    case problem(String)

    /// `invitation` is the token of the last `on-role-change-request`, for `accept` and `reject`.
    static func parse(_ line: String, invitation: String?) -> JoinInput {
        let (word, rest) =
            line.firstIndex(of: " ").map {
                (String(line[..<$0]), String(line[line.index(after: $0)...]).trimmingCharacters(in: .whitespaces))
            } ?? (line, "")
        let arguments = rest.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        switch word {
        case "help", "--help", "?":
            return .help
        case "me":
            return .me
        case "hand":
            return .call("group-join", ["name": "_handraise"])
        case "unhand":
            return .call("group-leave", ["name": "_handraise"])
        case "chat":
            guard !rest.isEmpty else { return .problem("usage: chat TEXT") }
            return .call("broadcast", ["info": ["message": .string(rest), "type": "chat"]])
        case "invite":
            guard arguments.count == 2 else { return .problem("usage: invite PEER ROLE") }
            return .call(
                "role-change-request",
                ["requested_for": .string(arguments[0]), "role": .string(arguments[1])]
            )
        case "ask":
            return .call("stage-request", rest.isEmpty ? [:] : ["note": .string(rest)])
        case "queue":
            guard rest.isEmpty else { return .problem("usage: queue") }
            return .call("stage-list", [:])
        case "invite-req", "decline":
            guard arguments.count == 1 else { return .problem("usage: \(word) ID") }
            return .call(word == "decline" ? "stage-decline" : "stage-invite", ["request_id": .string(arguments[0])])
        case "block":
            guard arguments.count == 1 else { return .problem("usage: block USER") }
            return .call("stage-block", ["user_id": .string(arguments[0])])
        case "held":
            guard rest.isEmpty else { return .problem("usage: held") }
            return .call("held-list", [:])
        case "approve":
            guard arguments.count == 1 else { return .problem("usage: approve MESSAGE_ID") }
            return .call("message-approve", ["message_id": .string(arguments[0])])
        case "reject" where !arguments.isEmpty:
            // `reject MESSAGE_ID [REASON…]`: a held message; `reject` alone answers an invitation.
            let reason = arguments.dropFirst().joined(separator: " ")
            var params: [JSON.Member] = [.init("message_id", .string(arguments[0]))]
            if !reason.isEmpty { params.append(.init("reason", .string(reason))) }
            return .call("message-reject", .object(params))
        case "resolve":
            // `resolve REPORT_ID [NOTE…]`: a report (1.3, section 32).
            guard !arguments.isEmpty else { return .problem("usage: resolve REPORT_ID [NOTE]") }
            let note = arguments.dropFirst().joined(separator: " ")
            var params: [JSON.Member] = [.init("report_id", .string(arguments[0]))]
            if !note.isEmpty { params.append(.init("note", .string(note))) }
            return .call("report-resolve", .object(params))
        case "accept", "reject":
            guard let invitation else { return .problem("no invitation to \(word): no on-role-change-request yet") }
            return .call(word == "accept" ? "role-change" : "role-change-reject", ["token": .string(invitation)])
        default:
            guard !rest.isEmpty else { return .call(word, nil) }
            do {
                return .call(word, try JSON.parse(Array(rest.utf8)))
            } catch {
                return .problem("params are not JSON: \(error)")
            }
        }
    }
}
