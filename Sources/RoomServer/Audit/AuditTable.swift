import RoomModel
import RoomWire

/// Which calls and REST routes are moderation acts (PROTOCOL.md section 32),
/// and how each becomes audit entries: the one table of each side. A row
/// names the params (or path parts) that identify the target (`target`,
/// with the name the entry gives them), the params kept as `details`
/// (nil: every other param), and the actions a call with these params
/// records (none: not an act, e.g. a polite role change). Only calls that
/// succeeded are recorded (`AuditRecorder`). A bulk act (a role change,
/// mute or removal of every peer of some roles) is one entry whose target
/// names the roles.
struct AuditRule {
    /// (param, name in `target`).
    let target: [(param: String, name: String)]
    let details: [String]?
    let actions: @Sendable (JSON) -> [AuditAction]

    init(
        _ target: [(param: String, name: String)],
        details: [String]? = nil,
        _ actions: @escaping @Sendable (JSON) -> [AuditAction]
    ) {
        self.target = target
        self.details = details
        self.actions = actions
    }

    /// A row that always records `action`.
    static func always(
        _ action: AuditAction,
        _ target: [(param: String, name: String)],
        details: [String]? = nil
    )
        -> AuditRule
    {
        AuditRule(target, details: details) { _ in [action] }
    }

    /// The ids the act named and its other params.
    func entry(_ params: JSON) -> (target: [JSON.Member], details: [JSON.Member]) {
        let members = params.objectValue ?? []
        var target: [JSON.Member] = []
        for (param, name) in self.target {
            if let value = params[param], !value.isNull { target.append(JSON.Member(name, value)) }
        }
        let named = Set(self.target.map(\.param))
        let details = members.filter { member in
            !named.contains(member.key) && (self.details.map { $0.contains(member.key) } ?? true)
        }
        return (target, details)
    }
}

private func id(_ name: String) -> (param: String, name: String) { (name, name) }
private func isTrue(_ params: JSON, _ key: String) -> Bool { params[key]?.boolValue == true }

enum AuditTable {
    /// WebSocket calls (the dispatcher's success path), by method name.
    static let calls: [String: AuditRule] = [
        "peer-ban": .always(.peerBan, [id("user_id"), id("peer_id")]),
        "peer-unban": .always(.peerUnban, [id("user_id")]),
        "chat-ban": .always(.chatBan, [id("user_id"), id("peer_id")]),
        "chat-unban": .always(.chatUnban, [id("user_id")]),
        "message-delete": .always(.messageDelete, [id("message_id")]),
        "chat-clear": .always(.chatClear, []),
        "message-pin": AuditRule([]) { _ in [.messagePin] }.pinning,
        "chat-state": .always(.chatState, []),
        "message-approve": .always(.messageApprove, [id("message_id")]),
        "message-reject": .always(.messageReject, [id("message_id")]),
        "report-resolve": .always(.reportResolve, [id("report_id")]),
        "peer-leave-request": .always(.peerRemove, [("requested_for", "peer_id")]),
        "role-change-request": AuditRule([("requested_for", "peer_id"), id("roles")]) { p in
            isTrue(p, "force") ? [.roleForce] : []
        },
        "track-update-request": AuditRule([("requested_for", "peer_id"), id("track_id")]) { p in
            isTrue(p, "mute") ? [.trackMute] : []
        },
        "change-track-mute-state-request": AuditRule([id("roles"), id("type"), id("source")]) { p in
            isTrue(p, "value") ? [.trackMute] : []
        },
        "end-room": AuditRule([]) { p in isTrue(p, "lock") ? [.roomEnd, .roomLock] : [.roomEnd] },
        "stage-invite": .always(.stageInvite, [id("request_id")]),
        "stage-decline": .always(.stageDecline, [id("request_id")]),
        "stage-block": .always(.stageBlock, [id("user_id")]),
        "stage-unblock": .always(.stageUnblock, [id("user_id")]),
    ]

    /// One REST route under `/v2/active-rooms/{room_id}/`: its method and
    /// path parts after the room id, `{name}` taking that part into `target`.
    struct Route {
        let method: HTTPRequest.Method
        let parts: [String]
        let rule: AuditRule
    }

    /// REST routes (after a 2xx answer): those of 1.2 and section 26, and
    /// section 32's parity routes.
    static let routes: [Route] = [
        Route(method: .post, parts: ["ban"], rule: .always(.peerBan, [id("user_id")])),
        Route(method: .post, parts: ["unban"], rule: .always(.peerUnban, [id("user_id")])),
        Route(method: .post, parts: ["remove-peers"], rule: .always(.peerRemove, [id("peer_id"), id("role")])),
        Route(method: .post, parts: ["end-room"], rule: calls["end-room"]!),
        Route(method: .post, parts: ["unlock"], rule: .always(.roomUnlock, [])),
        Route(
            method: .post,
            parts: ["peers", "{peer_id}"],
            rule: AuditRule([], details: ["role"]) { p in p["role"].map { !$0.isNull } == true ? [.roleForce] : [] }
        ),
        Route(method: .post, parts: ["stage", "{request_id}", "invite"], rule: .always(.stageInvite, [])),
        Route(method: .post, parts: ["stage", "{request_id}", "decline"], rule: .always(.stageDecline, [])),
        Route(method: .post, parts: ["stage", "block"], rule: .always(.stageBlock, [id("user_id")])),
        Route(method: .post, parts: ["stage", "unblock"], rule: .always(.stageUnblock, [id("user_id")])),
        Route(method: .delete, parts: ["chat", "{message_id}"], rule: .always(.messageDelete, [])),
        Route(method: .post, parts: ["chat", "pin"], rule: calls["message-pin"]!),
        Route(method: .post, parts: ["chat", "clear"], rule: .always(.chatClear, [])),
        Route(method: .post, parts: ["chat", "state"], rule: .always(.chatState, [])),
        Route(method: .post, parts: ["chat-bans"], rule: .always(.chatBan, [id("user_id")])),
        Route(method: .delete, parts: ["chat-bans", "{user_id}"], rule: .always(.chatUnban, [])),
        Route(method: .post, parts: ["held", "{message_id}", "approve"], rule: .always(.messageApprove, [])),
        Route(method: .post, parts: ["held", "{message_id}", "reject"], rule: .always(.messageReject, [])),
        Route(method: .post, parts: ["peers", "{peer_id}", "mute"], rule: .always(.trackMute, [id("track_id")])),
        Route(method: .post, parts: ["reports", "{report_id}", "resolve"], rule: .always(.reportResolve, [])),
    ]

    /// The route `method` and `parts` match, and the ids its path named.
    static func route(_ method: HTTPRequest.Method, _ parts: ArraySlice<String>) -> (AuditRule, [JSON.Member])? {
        for route in routes where route.method == method && route.parts.count == parts.count {
            var captured: [JSON.Member] = []
            var matches = true
            for (pattern, part) in zip(route.parts, parts) {
                if pattern.hasPrefix("{") {
                    captured.append(JSON.Member(String(pattern.dropFirst().dropLast()), .string(part)))
                } else if pattern != part {
                    matches = false
                    break
                }
            }
            if matches { return (route.rule, captured) }
        }
        return nil
    }
}

extension AuditRule {
    /// `message-pin {message_id|null}`: the message in `target` (null: unpinned).
    fileprivate var pinning: AuditRule {
        AuditRule([id("message_id")], details: self.details, self.actions)
    }
}
