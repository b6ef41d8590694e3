import RoomWire

/// A server push (PROTOCOL.md sections 4–7 and 12), decoded.
///
/// Pushes are JSON-RPC notifications `{"jsonrpc":"2.0","method":M,"params":{…}}`.
/// Read them from a ``RoomClient`` with ``RoomClient/nextEvent(timeout:)``,
/// `next(_:timeout:)` with an extract closure or ``RoomClient/events``;
/// turn a raw inbox entry into one with ``decode(_:)``.
///
/// ```swift
/// let token = try await viewer.next { event in
///     if case .roleChangeRequest(_, "guest", let token) = event { token } else { nil }
/// }
/// ```
public enum RoomEvent: Sendable, Equatable {
    /// `on-peer-join {peer}`: someone joined (not announced one by one in large rooms).
    case peerJoin(Peer)
    /// `on-peer-leave {peer_id, reason}`. Reasons: `"client request"`,
    /// `"peer kicked"`, `"server removed peer"`, `"websocket closed"`, `"peer banned"` (1.2).
    case peerLeave(peerID: String, reason: String)
    /// `on-peer-update {peer, changed}`, sent to every peer, the changed one
    /// included. `changed` lists some of `"name"`, `"data"`, `"role"`, `"groups"`,
    /// `"attributes"` (1.3).
    case peerUpdate(Peer, changed: [String])
    /// `on-broadcast`: a chat message for this peer.
    case broadcast(Message)
    /// `on-track-add {peer_id, track}`: a track this peer can now see.
    case trackAdd(peerID: String, track: Track)
    /// `on-track-update {peer_id, track}`: a visible track changed (mute, description).
    case trackUpdate(peerID: String, track: Track)
    /// `on-track-remove {peer_id, track}`: a track this peer can no longer see.
    case trackRemove(peerID: String, track: Track)
    /// `on-policy-change`: this peer's role changed; the new Policy.
    case policyChange(Policy)
    /// `on-role-change-request {requested_by, role, token}`: a polite
    /// invitation to `role`. Answer with ``RoomClient/acceptRoleChange(token:timeout:)``
    /// or ``RoomClient/rejectRoleChange(token:timeout:)``.
    case roleChangeRequest(requestedBy: PeerRef, role: String, token: String)
    /// `on-role-change-rejected {token, requested_for, role, reason}`, to the
    /// requester. `reason` is `"rejected"` or `"expired"`.
    case roleChangeRejected(token: String, requestedFor: String, role: String, reason: String)
    /// `on-track-update-request {requested_by, track_id, mute}`, to the
    /// track's owner. `mute: true` was already enforced; `mute: false` is only
    /// a request (unmute it yourself with ``RoomClient/updateTrack(id:mute:description:timeout:)``).
    case trackUpdateRequest(requestedBy: PeerRef, trackID: String, mute: Bool)
    /// `on-change-track-mute-state-request {requested_by, roles?, type?, source?, value}`,
    /// one per affected owner; the filters are nil when the request had none.
    case changeTrackMuteStateRequest(
        requestedBy: PeerRef,
        roles: [String]?,
        type: TrackType?,
        source: TrackSource?,
        value: Bool
    )
    /// `on-peer-leave-request {requested_by, reason, room_end}`: this peer
    /// was removed (then close 4001) or the room ended (`roomEnd`, then close 4002).
    case peerLeaveRequest(requestedBy: PeerRef, reason: String, roomEnd: Bool)
    /// `active-speakers {"speaker-list"}`: loudest first; empty when speech stopped.
    case activeSpeakers([Speaker])
    /// `room-state {peer_count, joined, left}`: the batched joins and leaves
    /// of a large room (PROTOCOL.md section 12).
    case roomState(peerCount: Int, joined: [PeerRef], left: [String])
    /// `on-error {code, message, method}`: a notification (a call without
    /// an id, see ``RoomClient/notify(_:_:)``) failed.
    case error(code: Int, message: String, method: String)
    /// `on-metadata-change {entries}`: a session-store key this peer listens to was set.
    case metadataChanged([MetadataEntry])
    /// `on-poll-start {polls}`: polls this peer may read or vote in, with their questions.
    case pollStarted([PollInfo])
    /// `on-poll-stop {polls}`: a poll stopped (quizzes carry their questions with the answers).
    case pollStopped([PollInfo])
    /// `on-poll-stats`: a poll's counts, at most once per `stats_interval_ms`.
    case pollStats(PollResult)
    /// A push this SDK does not know, or a known one whose params do not
    /// have the protocol's shape; nothing is dropped.
    case unknown(method: String, params: JSON)
    /// `on-hls-update HLSState`: the live stream started or stopped (1.1).
    case hlsUpdate(HLSState)
    /// `on-hls-timed-metadata {cues}`: new timed-metadata cues (1.1).
    case hlsTimedMetadata([HLSCue])
    /// `on-questions {changed, removed}`: questions added or changed, and ids
    /// deleted (or hidden, for peers without `moderateChat`) since the last one (1.2).
    case questions(changed: [AudienceQuestion], removed: [String])
    /// `on-poll-answer {poll_id, answers}`: a stopped quiz's answers were set (1.2); `answers` as sent.
    case pollAnswer(pollID: String, answers: JSON)
    /// `on-message-delete {message_id, deleted_by}`: a message left the history (1.2).
    case messageDeleted(messageID: String, deletedBy: PeerRef)
    /// `on-chat-clear {cleared_by}`: the history was emptied (1.2).
    case chatCleared(clearedBy: PeerRef)
    /// `on-message-pin {message, pinned_by}`: the pinned message (nil: unpinned) (1.2).
    case messagePinned(Message?, pinnedBy: PeerRef)
    /// `on-reactions {counts}`: the totals that changed since the room's
    /// last one, at most once per `settings.reactions.interval_ms` (1.2).
    case reactions([ReactionCount])
    /// `on-chat-state {paused, slow_mode_s, chat_banned, until}`: this peer's
    /// whole chat state changed (`chat-state` to everyone; a chat ban or its
    /// end only to the banned user's peers) (1.2, section 22).
    case chatState(ChatState)
    /// `on-report {report_id, target, reason, reported_by, at}`: a report, to
    /// `moderateChat` peers (1.2, section 22).
    case report(ChatReport)
    /// `on-report-update {report}`: a report was resolved, to `moderateChat`
    /// peers (1.3, section 32).
    case reportUpdate(ChatReport)
    /// `on-rtmp-update`: RTMP out started or stopped (1.2, section 23).
    case rtmpUpdate(RTMPState)
    /// `on-record-update`: the recording started or stopped (1.2, section 23).
    case recordingUpdate(RecordingState)
    /// `on-token-expiring {expires_at}`: this peer's token expires within
    /// `settings.room.token_refresh_s`; answer with ``RoomClient/refreshToken(_:timeout:)``
    /// (``RoomClient/refreshTokens(using:)`` does it by itself) (1.2, section 23).
    case tokenExpiring(expiresAt: Int64)
    /// `on-stage-queue {changed, removed, waiting}`: the call-in queue
    /// changed, to moderating peers, at most once per
    /// `settings.stage.interval_ms`: the waiting, invited or live requests
    /// that changed, the ids of those that ended (declined, withdrawn,
    /// done), and how many wait now (1.3, section 26).
    case stageQueue(changed: [CallInRequest], removed: [String], waiting: Int)
    /// `on-stage-status {request}`: this user's request changed status
    /// (asked, invited, live, declined, withdrawn, done; not a new
    /// position) (1.3, section 26).
    case stageStatus(CallInRequest)

    /// The push method this event came from, e.g. `"on-peer-join"`.
    public var method: String {
        switch self {
        case .peerJoin: "on-peer-join"
        case .peerLeave: "on-peer-leave"
        case .peerUpdate: "on-peer-update"
        case .broadcast: "on-broadcast"
        case .trackAdd: "on-track-add"
        case .trackUpdate: "on-track-update"
        case .trackRemove: "on-track-remove"
        case .policyChange: "on-policy-change"
        case .roleChangeRequest: "on-role-change-request"
        case .roleChangeRejected: "on-role-change-rejected"
        case .trackUpdateRequest: "on-track-update-request"
        case .changeTrackMuteStateRequest: "on-change-track-mute-state-request"
        case .peerLeaveRequest: "on-peer-leave-request"
        case .activeSpeakers: "active-speakers"
        case .roomState: "room-state"
        case .error: "on-error"
        case .metadataChanged: "on-metadata-change"
        case .pollStarted: "on-poll-start"
        case .pollStopped: "on-poll-stop"
        case .pollStats: "on-poll-stats"
        case .unknown(let method, _): method
        case .hlsUpdate: "on-hls-update"
        case .hlsTimedMetadata: "on-hls-timed-metadata"
        case .pollAnswer: "on-poll-answer"
        case .questions: "on-questions"
        case .messageDeleted: "on-message-delete"
        case .chatCleared: "on-chat-clear"
        case .messagePinned: "on-message-pin"
        case .reactions: "on-reactions"
        case .chatState: "on-chat-state"
        case .report: "on-report"
        case .reportUpdate: "on-report-update"
        case .rtmpUpdate: "on-rtmp-update"
        case .recordingUpdate: "on-record-update"
        case .tokenExpiring: "on-token-expiring"
        case .stageQueue: "on-stage-queue"
        case .stageStatus: "on-stage-status"
        }
    }

    /// Decodes one inbox entry. Returns nil if it is not a push (a response,
    /// a batch array, unparseable text, an object without a string `method`
    /// or with an `id`). A push with an unknown method, or whose params do
    /// not decode, becomes ``unknown(method:params:)``.
    public static func decode(_ push: JSON) -> RoomEvent? {
        guard case .object = push, push["id"] == nil, let method = push["method"]?.stringValue else { return nil }
        let params = push["params"] ?? .object([])
        do {
            return try decode(method: method, WireReader(params, path: method))
                ?? .unknown(method: method, params: params)
        } catch {
            return .unknown(method: method, params: params)
        }
    }

    private static func decode(method: String, _ p: WireReader) throws -> RoomEvent? {
        try p.requireObject()
        switch method {
        case "on-peer-join":
            return .peerJoin(try Peer(p.child("peer")))
        case "on-peer-leave":
            return .peerLeave(peerID: try p.string("peer_id"), reason: try p.string("reason"))
        case "on-peer-update":
            return .peerUpdate(try Peer(p.child("peer")), changed: try p.strings("changed"))
        case "on-broadcast":
            return .broadcast(try Message(p))
        case "on-track-add":
            return .trackAdd(peerID: try p.string("peer_id"), track: try Track(p.child("track")))
        case "on-track-update":
            return .trackUpdate(peerID: try p.string("peer_id"), track: try Track(p.child("track")))
        case "on-track-remove":
            return .trackRemove(peerID: try p.string("peer_id"), track: try Track(p.child("track")))
        case "on-policy-change":
            return .policyChange(try Policy(p))
        case "on-role-change-request":
            return .roleChangeRequest(
                requestedBy: try PeerRef(p.child("requested_by")),
                role: try p.string("role"),
                token: try p.string("token")
            )
        case "on-role-change-rejected":
            return .roleChangeRejected(
                token: try p.string("token"),
                requestedFor: try p.string("requested_for"),
                role: try p.string("role"),
                reason: try p.string("reason")
            )
        case "on-track-update-request":
            return .trackUpdateRequest(
                requestedBy: try PeerRef(p.child("requested_by")),
                trackID: try p.string("track_id"),
                mute: try p.bool("mute")
            )
        case "on-change-track-mute-state-request":
            return .changeTrackMuteStateRequest(
                requestedBy: try PeerRef(p.child("requested_by")),
                roles: p.has("roles") ? try p.strings("roles") : nil,
                type: try p.optionalChoice("type"),
                source: try p.optionalChoice("source"),
                value: try p.bool("value")
            )
        case "on-peer-leave-request":
            return .peerLeaveRequest(
                requestedBy: try PeerRef(p.child("requested_by")),
                reason: try p.string("reason"),
                roomEnd: try p.bool("room_end")
            )
        case "active-speakers":
            return .activeSpeakers(try p.elements("speaker-list").map { try Speaker($0) })
        case "room-state":
            return .roomState(
                peerCount: try p.int("peer_count"),
                joined: try p.elements("joined").map { try PeerRef($0) },
                left: try p.strings("left")
            )
        case "on-error":
            return .error(code: try p.int("code"), message: try p.string("message"), method: try p.string("method"))
        case "on-metadata-change":
            return .metadataChanged(try p.elements("entries").map { try MetadataEntry($0) })
        case "on-poll-start":
            return .pollStarted(try p.elements("polls").map { try PollInfo($0) })
        case "on-poll-stop":
            return .pollStopped(try p.elements("polls").map { try PollInfo($0) })
        case "on-poll-stats":
            return .pollStats(try PollResult(p))
        case "on-hls-update":
            return .hlsUpdate(try HLSState(p))
        case "on-rtmp-update":
            return .rtmpUpdate(try RTMPState(p))
        case "on-record-update":
            return .recordingUpdate(try RecordingState(p))
        case "on-token-expiring":
            return .tokenExpiring(expiresAt: try p.int64("expires_at"))
        case "on-hls-timed-metadata":
            return .hlsTimedMetadata(try p.elements("cues").map { try HLSCue($0) })
        case "on-questions":
            return .questions(
                changed: try p.elements("changed").map { try AudienceQuestion($0) },
                removed: try p.strings("removed")
            )
        case "on-poll-answer":
            return .pollAnswer(pollID: try p.string("poll_id"), answers: p.child("answers").json ?? .null)
        case "on-message-delete":
            return .messageDeleted(
                messageID: try p.string("message_id"),
                deletedBy: try PeerRef(p.child("deleted_by"))
            )
        case "on-chat-clear":
            return .chatCleared(clearedBy: try PeerRef(p.child("cleared_by")))
        case "on-message-pin":
            return .messagePinned(
                p.has("message") ? try Message(kept: p.child("message")) : nil,
                pinnedBy: try PeerRef(p.child("pinned_by"))
            )
        case "on-reactions":
            return .reactions(try p.elements("counts").map { try ReactionCount($0) })
        case "on-chat-state":
            return .chatState(try ChatState(p))
        case "on-report":
            return .report(try ChatReport(p))
        case "on-report-update":
            return .reportUpdate(try ChatReport(p.child("report")))
        case "on-stage-queue":
            return .stageQueue(
                changed: try p.elements("changed").map { try CallInRequest($0) },
                removed: try p.strings("removed"),
                waiting: try p.int("waiting")
            )
        case "on-stage-status":
            return .stageStatus(try CallInRequest(p.child("request")))
        default:
            return nil
        }
    }
}

// MARK: - Reading events

extension RoomClient {
    /// The next push in the inbox, decoded, and removed from the inbox.
    ///
    /// Only pushes are taken: responses to raw sends, batch arrays and
    /// unparseable text stay in the inbox, in order, for ``nextMessage(timeout:)``.
    ///
    /// - Throws: ``RoomClientError/timeout(_:)`` if no push arrives within
    ///   `timeout`; ``RoomClientError/closed(code:reason:)`` once the
    ///   connection is closed and no push is left.
    public func nextEvent(
        timeout: Duration? = nil,
        fileID: String = #fileID,
        filePath: String = #filePath,
        line: Int = #line,
        column: Int = #column
    ) async throws -> RoomEvent {
        let site = WaitSite("a push (any)", fileID: fileID, filePath: filePath, line: line, column: column)
        return try await waitForEvent(timeout: timeout ?? defaultTimeout, site: site) { _ in true }
    }

    /// The first push, in arrival order, for which `extract` returns a
    /// value; that push is removed from the inbox and every other entry
    /// stays where it is.
    ///
    /// ```swift
    /// let joined = try await host.next { event in
    ///     if case .peerJoin(let peer) = event { peer } else { nil }
    /// }
    /// let reason = try await guest.next(timeout: .seconds(10), description: "the room's end") { event in
    ///     if case .peerLeaveRequest(_, let reason, roomEnd: true) = event { reason } else { nil }
    /// }
    /// ```
    ///
    /// `extract` should be a quick, pure function of the event: it may run
    /// more than once per push, under the connection's lock and on the
    /// client loop's thread, so it must not call back into the client.
    /// To match on a push's raw params instead, use the one predicate
    /// contract of all three kits, ``next(_:where:description:timeout:fileID:filePath:line:column:)``.
    ///
    /// - Throws: ``RoomClientError/timeout(_:)`` saying `description` (else
    ///   "a push the extract closure takes"), the timeout, the caller's line
    ///   and the pushes queued instead; ``RoomClientError/closed(code:reason:)``
    ///   once the connection is closed and no matching push is left.
    public func next<T>(
        timeout: Duration? = nil,
        description: String? = nil,
        fileID: String = #fileID,
        filePath: String = #filePath,
        line: Int = #line,
        column: Int = #column,
        _ extract: @escaping @Sendable (RoomEvent) -> T?
    ) async throws -> T {
        let what = description ?? "a push the extract closure takes"
        let site = WaitSite(what, fileID: fileID, filePath: filePath, line: line, column: column)
        while true {
            let event = try await waitForEvent(timeout: timeout ?? defaultTimeout, site: site) { extract($0) != nil }
            if let value = extract(event) { return value }
            // Only reachable if `extract` is not deterministic: the push is consumed; keep looking.
        }
    }

    /// The same as ``next(timeout:description:fileID:filePath:line:column:_:)``
    /// with the closure first: `next({ … }, timeout: .seconds(3))`.
    public func next<T>(
        _ extract: @escaping @Sendable (RoomEvent) -> T?,
        timeout: Duration,
        description: String? = nil,
        fileID: String = #fileID,
        filePath: String = #filePath,
        line: Int = #line,
        column: Int = #column
    ) async throws -> T {
        try await next(
            timeout: timeout,
            description: description,
            fileID: fileID,
            filePath: filePath,
            line: line,
            column: column,
            extract
        )
    }

    /// Every push, decoded, in arrival order, for as long as the connection
    /// lasts (the stream finishes once it is closed and no push is left).
    ///
    /// The stream is a view of the inbox, not a copy: each element is
    /// removed from the inbox when the stream yields it, exactly as
    /// ``nextEvent(timeout:)`` would. So do not mix it with `next(_:timeout:)`
    /// or ``drain()`` on the same client unless you mean to split the pushes
    /// between them. Non-push entries stay in the inbox. Each access makes a
    /// new stream over the same inbox. Cancelling the iterating task ends
    /// the stream without consuming anything.
    ///
    /// ```swift
    /// for await event in client.events {
    ///     if case .peerLeaveRequest(_, _, roomEnd: true) = event { break }
    /// }
    /// ```
    public var events: AsyncStream<RoomEvent> {
        AsyncStream(unfolding: { [self] in
            try? await self.waitForEvent(timeout: nil, site: WaitSite("a push (events)")) { _ in true }
        })
    }

    private func waitForEvent(
        timeout: Duration?,
        site: WaitSite,
        where test: @escaping @Sendable (RoomEvent) -> Bool
    ) async throws
        -> RoomEvent
    {
        let push = try await session.wait(timeout: timeout, site: site) { state in
            for index in state.inbox.indices {
                if let event = RoomEvent.decode(state.inbox[index]), test(event) {
                    return .done(.success(state.inbox.remove(at: index)))
                }
            }
            if state.closed != nil { return .done(.failure(state.closedError)) }
            return .pending(.event(test))
        }
        // Only pushes reach here (the test ran on their decoded form).
        return RoomEvent.decode(push)
            ?? .unknown(method: push["method"]?.stringValue ?? "", params: push["params"] ?? .null)
    }
}
