import RoomWire

// The audit log (1.3, PROTOCOL.md section 32): the moderators' side. Same
// conventions as ChatModerationMethods.swift.

/// One moderation act of the room session.
public struct AuditLogEntry: Sendable, Equatable {
    /// Who did it.
    public enum Actor: Sendable, Equatable {
        /// A peer, as it was at that moment.
        case peer(PeerRef)
        /// The REST API (`{"type":"rest"}`).
        case rest
        /// A synchronous hook's denial (`{"type":"hook"}`).
        case hook
    }

    /// Grows by 1 per entry within the session.
    public var seq: Int
    /// When (ms since the Unix epoch).
    public var at: Int64
    public var actor: Actor
    /// `peer.ban`, `message.delete`, `room.end`, … (PROTOCOL.md section 32).
    public var action: String
    /// The ids the act named (`user_id`, `peer_id`, `message_id`, …).
    public var target: JSON
    /// The act's other params (`shadow`, `duration_s`, `reason`, …).
    public var details: JSON

    init(_ r: WireReader) throws {
        try r.requireObject()
        seq = try r.int("seq")
        at = try r.int64("at")
        let actor = r.child("actor")
        switch actor.json?["type"]?.stringValue {
        case "rest": self.actor = .rest
        case "hook": self.actor = .hook
        default: self.actor = .peer(try PeerRef(actor))
        }
        action = try r.string("action")
        target = r.json?["target"] ?? .object([])
        details = r.json?["details"] ?? .object([])
    }
}

extension RoomClient {
    /// The session's audit log after seq `after`, oldest first (`audit-list`;
    /// a moderating role or `moderateChat`): at most `limit` (default 100,
    /// at most 500); `next` is the seq to pass as `after` for the rest, nil
    /// at the end.
    ///
    /// - Throws: `rpc` with 40300.
    public func auditLog(
        after: Int? = nil,
        limit: Int? = nil,
        timeout: Duration? = nil
    ) async throws
        -> (entries: [AuditLogEntry], next: Int?)
    {
        var params: [JSON.Member] = []
        if let after { params.append(.init("after", .int(after))) }
        if let limit { params.append(.init("limit", .int(limit))) }
        let result = try await call("audit-list", .object(params), timeout: timeout)
        return try decode("audit-list", result) {
            let r = WireReader($0, path: "")
            return (try r.elements("entries").map(AuditLogEntry.init), try r.optionalInt("next"))
        }
    }
}
