/// The protocol's error codes (PROTOCOL.md section 8) that the domain and the
/// server can produce.
public enum ErrorCode: Int, Sendable, CaseIterable {
    case parseError = -32700
    case invalidRequest = -32600
    case methodNotFound = -32601
    case invalidParams = -32602
    case internalError = -32603
    case notAJWT = 2004
    case tokenInvalid = 40100
    case accessKeyMismatch = 40101
    case roomIDClaimInvalid = 40102
    case userIDClaimInvalid = 40107
    case roleClaimInvalid = 40108
    case badJWT = 40109
    case roomNotFound = 40001
    case roomIDMismatch = 40002
    case roomLocked = 40003
    case peerIDOfOtherUser = 40004
    case notJoined = 40005
    case peerGone = 41001
    case alreadyJoined = 5001
    /// 1.1, section 18: the cluster's bus (NATS) is unreachable.
    case clusterUnavailable = 5003
    case permissionDenied = 40300
    case peerNotFound = 40400
    case trackNotFound = 40401
    case roleNotFound = 40402
    case roleChangeRequestNotFound = 40403
    case roleLimitReached = 40900
    case roomFull = 40901
    case bulkTargetInSources = 40902
    case trackConflict = 40903
    case tooLarge = 41300
    case rateLimited = 42900
    /// 1.1: poll not found.
    case pollNotFound = 40404
    /// 1.2: message not found (not in the room's history, or deleted).
    case messageNotFound = 40405
    /// 1.2: question not found (or hidden, for a peer without moderateChat).
    case questionNotFound = 40406
    /// 1.1: wrong state for this call (poll not started / already stopped; HLS already running / not running).
    case wrongState = 40904
    /// 1.1: that question was already answered by this user.
    case alreadyAnswered = 40906
    /// 1.1: too many (polls, questions, options, session-store keys, live cues).
    case tooMany = 40907
    /// 1.3: that name is reserved: a peer of a moderating role in this room uses it (section 27).
    case nameReserved = 40908
    /// 1.3: stage request not found, or not in a state that allows the call (`data.status`).
    case stageRequestNotFound = 40407
    /// 1.3: report not found (`report-resolve`, REST `…/reports/{report_id}/resolve`; section 32).
    case reportNotFound = 40408
    /// 1.3: blocked from the call-in queue (`stage-request`, section 26).
    case stageBlocked = 40303
    /// 1.2: banned from this room (`join`, `preview`; section 22).
    case banned = 40301
    /// 1.2: chat is closed to the caller: chat-banned, chat paused, or the word filter.
    case chatClosed = 40302
    /// 1.2: slow mode: wait before the next message (`data.retry_after_ms`).
    case slowMode = 42901
    /// 1.3: refused by the app's hook (section 30; the message is the hook's `reason`).
    case hookDenied = 40305
    /// 1.3: the app's hook failed and `settings.hooks.on_error` is `"deny"` (section 30).
    case hookFailed = 5004
}

/// A failed call: a protocol code and a message that names the field or rule.
public struct RoomError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    /// `data.retry_after_ms` of the error object (42901).
    public var retryAfterMs: Int64?
    /// `data.status` of the error object (40407: the stage request's status).
    public var status: String?

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }

    public static func invalidParams(_ message: String) -> RoomError { RoomError(.invalidParams, message) }
    public static func restricted(_ call: String) -> RoomError {
        RoomError(.permissionDenied, "permission denied: \(call) is not allowed for view_and_polls_only")
    }
    public static func denied(_ permission: String) -> RoomError {
        RoomError(.permissionDenied, "permission denied: role lacks \(permission)")
    }
}
