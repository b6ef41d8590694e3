import RoomModel
import RoomProtocol
import RoomWire

/// Records the moderation acts (PROTOCOL.md section 32) after they
/// succeeded, from the two tables of `AuditTable`: `prepare` runs before
/// the call or route (the actor as it was, the session's log — still the
/// same after `end-room` ended the session — and the target's user id while
/// its peer is still in the room); `record` runs after it succeeded.
struct PendingAudit {
    let log: AuditLog
    let actor: AuditActor
    let actions: [AuditAction]
    let target: [JSON.Member]
    let details: [JSON.Member]
}

enum AuditRecorder {
    /// A WebSocket call of `peer` (nil when it is no act).
    static func prepare(_ method: String, _ params: JSON, by peer: Peer) -> PendingAudit? {
        guard let rule = AuditTable.calls[method] else { return nil }
        let actions = rule.actions(params)
        if actions.isEmpty { return nil }
        let (target, details) = rule.entry(params)
        return PendingAudit(
            log: peer.room.audit,
            actor: .peer(PeerRef(peer)),
            actions: actions,
            target: withUserID(target, in: peer.room),
            details: details
        )
    }

    /// A REST request (nil when it is no act, or its room has no session held).
    static func prepare(_ request: HTTPRequest, registry: RoomRegistry) -> PendingAudit? {
        guard request.method != .get, let roomID = RestAPI.roomID(in: request.path) else { return nil }
        let parts = request.path.dropFirst(RestAPI.prefix.count).split(separator: "/", omittingEmptySubsequences: false)
            .dropFirst().map(String.init)
        guard let (rule, captured) = AuditTable.route(request.method, parts[...]) else { return nil }
        let body = request.body.isEmpty ? JSON.object([]) : ((try? JSON.parse(request.body)) ?? .object([]))
        let actions = rule.actions(body)
        guard !actions.isEmpty, let log = registry.auditLog(of: roomID) else { return nil }
        let (target, details) = rule.entry(body)
        let room = registry.room(roomID)
        return PendingAudit(
            log: log,
            actor: .rest,
            actions: actions,
            target: room.map { withUserID(captured + target, in: $0) } ?? captured + target,
            details: details
        )
    }

    /// Records the act that succeeded: one entry per action.
    static func record(_ pending: PendingAudit, registry: RoomRegistry) {
        for action in pending.actions {
            registry.recordAudit(
                in: pending.log,
                actor: pending.actor,
                action: action,
                target: pending.target,
                details: pending.details
            )
        }
    }

    /// A target that names a peer of the room gets that peer's `user_id` too.
    private static func withUserID(_ target: [JSON.Member], in room: Room) -> [JSON.Member] {
        guard !target.contains(where: { $0.key == "user_id" }),
            let peerID = target.first(where: { $0.key == "peer_id" })?.value.stringValue,
            let peer = room.peer(PeerID(peerID))
        else { return target }
        return target + [JSON.Member("user_id", .string(peer.userID.rawValue))]
    }
}
