import RoomWire

// Moderation that holds (PROTOCOL.md section 22): bans, chat bans, the chat's
// state, reports. Same conventions as Methods.swift and Models.swift.

extension RoomClient {
    // MARK: - Bans

    /// Bans a user from the room session (`peer-ban {user_id | peer_id,
    /// duration_s?, reason?}`, `removeOthers`): every peer of the user is
    /// removed (close 4001; the others get ``RoomEvent/peerLeave(peerID:reason:)``
    /// with `"peer banned"`) and its joins and previews are 40301 until the
    /// ban ends (`duration`, else the session's end). Give `userID` or `peerID`.
    ///
    /// - Throws: `rpc` with 40300, 40400 (no such peer), 41300 (reason over
    ///   256 bytes), 40907 (1000 bans), -32602.
    public func ban(
        userID: String? = nil,
        peerID: String? = nil,
        duration: Int? = nil,
        reason: String? = nil,
        timeout: Duration? = nil
    ) async throws {
        var params: [JSON.Member] = []
        if let userID { params.append(.init("user_id", .string(userID))) }
        if let peerID { params.append(.init("peer_id", .string(peerID))) }
        if let duration { params.append(.init("duration_s", .int(duration))) }
        if let reason { params.append(.init("reason", .string(reason))) }
        _ = try await call("peer-ban", .object(params), timeout: timeout)
    }

    /// Lifts a user's ban (`peer-unban {user_id}`, `removeOthers`); a user
    /// without one is fine too.
    public func unban(userID: String, timeout: Duration? = nil) async throws {
        _ = try await call("peer-unban", ["user_id": .string(userID)], timeout: timeout)
    }

    // MARK: - Chat bans and the chat's state

    /// Silences a user's chat (`chat-ban {user_id | peer_id, duration_s?}`,
    /// `moderateChat`): `broadcast`, `question-add` and `report` are 40302
    /// for it; only its peers get ``RoomEvent/chatState(_:)``.
    public func chatBan(
        userID: String? = nil,
        peerID: String? = nil,
        duration: Int? = nil,
        shadow: Bool = false,
        timeout: Duration? = nil
    ) async throws {
        var params: [JSON.Member] = []
        if let userID { params.append(.init("user_id", .string(userID))) }
        if let peerID { params.append(.init("peer_id", .string(peerID))) }
        if let duration { params.append(.init("duration_s", .int(duration))) }
        if shadow { params.append(.init("shadow", true)) }
        _ = try await call("chat-ban", .object(params), timeout: timeout)
    }

    /// Ends a user's chat ban (`chat-unban {user_id}`, `moderateChat`).
    public func chatUnban(userID: String, timeout: Duration? = nil) async throws {
        _ = try await call("chat-unban", ["user_id": .string(userID)], timeout: timeout)
    }

    /// Pauses the chat and/or sets slow mode (`chat-state {paused?,
    /// slow_mode_s?}`, `moderateChat`; give at least one). Every peer gets
    /// ``RoomEvent/chatState(_:)``.
    ///
    /// - Returns: the room's `(paused, slowModeSeconds)` after the call.
    @discardableResult
    public func setChatState(
        paused: Bool? = nil,
        slowModeSeconds: Int? = nil,
        timeout: Duration? = nil
    ) async throws -> (paused: Bool, slowModeSeconds: Int) {
        var params: [JSON.Member] = []
        if let paused { params.append(.init("paused", .bool(paused))) }
        if let slowModeSeconds { params.append(.init("slow_mode_s", .int(slowModeSeconds))) }
        let result = try await call("chat-state", .object(params), timeout: timeout)
        return try decode("chat-state", result) { json in
            let r = WireReader(json, path: "")
            return (try r.bool("paused"), try r.int("slow_mode_s"))
        }
    }

    // MARK: - Reports

    /// Reports a message, a question or a peer to the moderators (`report`);
    /// a repeat of the same target answers the first report's id.
    ///
    /// - Returns: `report_id`.
    /// - Throws: `rpc` with 40300 (`view_and_polls_only`), 40302 (chat-banned),
    ///   40405 / 40406 / 40400 (unknown target), 41300 (reason over 256 bytes).
    @discardableResult
    public func report(
        _ target: ChatReport.Target,
        reason: String,
        timeout: Duration? = nil
    ) async throws -> String {
        let key =
            switch target.type {
            case .message: "message_id"
            case .question: "question_id"
            case .peer: "peer_id"
            }
        let result = try await call(
            "report",
            [key: .string(target.id), "reason": .string(reason)],
            timeout: timeout
        )
        return try decode("report", result) { try WireReader($0, path: "").string("report_id") }
    }

    /// Resolves an open report (`report-resolve {report_id, note?}`, 1.3,
    /// `moderateChat`); every `moderateChat` peer gets `on-report-update`.
    ///
    /// - Returns: the report, `resolved`.
    /// - Throws: `rpc` with 40300 (no `moderateChat`), 40408 (unknown
    ///   report), 40904 (resolved already), 41300 (note over 1,024 bytes).
    @discardableResult
    public func resolveReport(
        _ reportID: String,
        note: String? = nil,
        timeout: Duration? = nil
    ) async throws
        -> ChatReport
    {
        var params: [String: JSON] = ["report_id": .string(reportID)]
        if let note { params["note"] = .string(note) }
        let result = try await call(
            "report-resolve",
            .object(params.map { JSON.Member($0.key, $0.value) }),
            timeout: timeout
        )
        return try decode("report-resolve", result) { try ChatReport(WireReader($0, path: "").child("report")) }
    }
}

/// A report, as moderators get it (`on-report`, `on-report-update`,
/// `report-resolve`). `on-report` carries a new report: `open`, the
/// resolution fields nil.
public struct ChatReport: Sendable, Equatable {
    /// What is reported: `{type, id}`.
    public typealias Target = ReportTarget

    public var reportID: String
    public var target: Target
    public var reason: String
    public var reportedBy: PeerRef
    /// When it was made (ms).
    public var at: Int64
    /// `open`, or `resolved` by a moderator (1.3).
    public var status: ReportStatus = .open
    /// Who resolved it (a moderator, or the server PeerRef for REST), when (ms), and its note (1.3).
    public var resolvedBy: PeerRef?
    public var resolvedAt: Int64?
    public var note: String?

    init(_ r: WireReader) throws {
        try r.requireObject()
        reportID = try r.string("report_id")
        let target = r.child("target")
        try target.requireObject()
        self.target = Target(try target.choice("type"), try target.string("id"))
        reason = try r.string("reason")
        reportedBy = try PeerRef(r.child("reported_by"))
        at = try r.int64("at")
        if r.has("status") { status = try r.choice("status") }
        resolvedBy = r.has("resolved_by") ? try PeerRef(r.child("resolved_by")) : nil
        resolvedAt = try r.optionalInt64("resolved_at")
        note = try r.optionalString("note")
    }
}
