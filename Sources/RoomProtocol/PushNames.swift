// Generated from docs/openrpc.json by scripts/kit-methods.py: do not edit.

/// Every push roomd sends (the methods of docs/openrpc.json marked
/// `x-roomd-push`), shared by the server and the kits: the Swift kit's
/// `next(_:)` refuses any other name at once, and test mode's push
/// faults (PROTOCOL.md section 33) refuse to wait for one.
public enum PushNames {
    public static let all: Set<String> = [
        "active-speakers",
        "on-broadcast",
        "on-change-track-mute-state-request",
        "on-chat-clear",
        "on-chat-state",
        "on-error",
        "on-hls-timed-metadata",
        "on-hls-update",
        "on-message-delete",
        "on-message-held",
        "on-message-pin",
        "on-message-review",
        "on-metadata-change",
        "on-peer-join",
        "on-peer-leave",
        "on-peer-leave-request",
        "on-peer-update",
        "on-policy-change",
        "on-poll-answer",
        "on-poll-start",
        "on-poll-stats",
        "on-poll-stop",
        "on-questions",
        "on-reactions",
        "on-record-update",
        "on-report",
        "on-report-update",
        "on-role-change-rejected",
        "on-role-change-request",
        "on-rtmp-update",
        "on-stage-queue",
        "on-stage-status",
        "on-token-expiring",
        "on-track-add",
        "on-track-remove",
        "on-track-update",
        "on-track-update-request",
        "room-state",
    ]
}
