import RoomWire

// The call-in queue (PROTOCOL.md section 26). Same conventions as
// Methods.swift and Models.swift.

extension RoomClient {
    // MARK: - The call-in queue

    /// Asks to come on stage (`stage-request {note?}`): the user's one
    /// waiting request (a second ask replaces its note). Moderating peers
    /// see it in the next `on-stage-queue`; this user's peers get
    /// `on-stage-status` at each change.
    ///
    /// - Throws: `rpc` with 40303 (blocked), 40300 (a moderating role or the
    ///   guest role), 41300 (note over `note_bytes`), 40302 (word filter),
    ///   40907 (`max_waiting` waiting).
    public func askToJoinStage(note: String? = nil, timeout: Duration? = nil) async throws -> CallInRequest {
        let result = try await call("stage-request", params(["note": note.map { .string($0) }]), timeout: timeout)
        return try decode("stage-request", result) { try CallInRequest(WireReader($0, path: "").child("request")) }
    }

    /// Withdraws the user's waiting or invited request (`stage-withdraw`).
    ///
    /// - Throws: `rpc` with 40407 (no open request).
    public func withdrawStageRequest(timeout: Duration? = nil) async throws {
        _ = try await call("stage-withdraw", [:], timeout: timeout)
    }

    /// A page of the queue (`stage-list`, moderating): waiting requests by
    /// position, the other statuses newest first.
    public func stageQueue(
        status: CallInRequest.Status = .waiting,
        offset: Int = 0,
        limit: Int = 50,
        timeout: Duration? = nil
    ) async throws -> (requests: [CallInRequest], total: Int) {
        let result = try await call(
            "stage-list",
            ["status": .string(status.rawValue), "offset": .int(offset), "limit": .int(limit)],
            timeout: timeout
        )
        return try decode("stage-list", result) {
            let r = WireReader($0, path: "")
            return (try r.elements("requests").map { try CallInRequest($0) }, try r.int("total"))
        }
    }

    /// Invites a waiting request's peer on stage (`stage-invite`, moderating
    /// with `changeRole`): section 6's polite role change to `role` (the
    /// guest role by default); its peer accepts with
    /// ``acceptRoleChange(token:timeout:)`` and the request is live.
    ///
    /// - Throws: `rpc` with 40407 (unknown, or not waiting: `data.status`),
    ///   -32602 (the role the peer has).
    public func invite(
        _ request: CallInRequest,
        role: String? = nil,
        timeout: Duration? = nil
    ) async throws -> (request: CallInRequest, token: String) {
        try await inviteToStage(request.requestID, role: role, timeout: timeout)
    }

    /// ``invite(_:role:timeout:)`` by the request's id.
    public func inviteToStage(
        _ requestID: String,
        role: String? = nil,
        timeout: Duration? = nil
    ) async throws -> (request: CallInRequest, token: String) {
        let result = try await call(
            "stage-invite",
            params(["request_id": .string(requestID), "role": role.map { .string($0) }]),
            timeout: timeout
        )
        return try decode("stage-invite", result) {
            let r = WireReader($0, path: "")
            return (try CallInRequest(r.child("request")), try r.string("token"))
        }
    }

    /// Declines a waiting or invited request (`stage-decline`, moderating).
    ///
    /// - Throws: `rpc` with 40407 (unknown, or ended: `data.status`), 41300
    ///   (`reason` over 256 bytes).
    public func declineStageRequest(_ requestID: String, reason: String? = nil, timeout: Duration? = nil) async throws {
        _ = try await call(
            "stage-decline",
            params(["request_id": .string(requestID), "reason": reason.map { .string($0) }]),
            timeout: timeout
        )
    }

    /// Blocks a user from asking (`stage-block`, moderating): its open
    /// request is declined; until ``unblockFromStage(_:timeout:)``,
    /// `durationSeconds` or the session's end.
    public func blockFromStage(_ userID: String, durationSeconds: Int? = nil, timeout: Duration? = nil) async throws {
        _ = try await call(
            "stage-block",
            params(["user_id": .string(userID), "duration_s": durationSeconds.map { .int($0) }]),
            timeout: timeout
        )
    }

    /// Lifts a user's block (`stage-unblock`, moderating).
    public func unblockFromStage(_ userID: String, timeout: Duration? = nil) async throws {
        _ = try await call("stage-unblock", ["user_id": .string(userID)], timeout: timeout)
    }
}

/// A request to come on stage (PROTOCOL.md section 26), as the kit reads it
/// (the server's model calls it `StageRequest`).
public struct CallInRequest: Sendable, Equatable {
    public typealias Status = StageStatus

    public var requestID: String
    /// The peer that asked (the latest one of its user while it waits).
    public var peer: PeerRef
    public var userID: String
    /// `""` when none was given.
    public var note: String
    public var status: Status
    /// ms since the epoch.
    public var requestedAt: Int64
    public var updatedAt: Int64
    /// 1-based rank among the waiting requests; nil unless waiting.
    public var position: Int?
    /// Who invited it; nil until invited (and for the REST API's `server` it is that ref).
    public var invitedBy: PeerRef?
    /// The role it was invited to; nil until invited.
    public var role: String?

    init(_ r: WireReader) throws {
        try r.requireObject()
        requestID = try r.string("request_id")
        peer = try PeerRef(r.child("peer"))
        userID = try r.string("user_id")
        note = try r.string("note")
        status = try r.choice("status")
        requestedAt = try r.int64("requested_at")
        updatedAt = try r.int64("updated_at")
        position = try r.optionalInt("position")
        invitedBy = try r.optionalObject("invited_by") { try PeerRef($0) }
        role = try r.optionalString("role")
    }
}
