import RoomWire

// Moderation (PROTOCOL.md section 6): muting others, removing peers, ending
// the room. Same conventions as Methods.swift.

extension RoomClient {
    // MARK: - Moderation

    /// Mutes another peer's track, or asks its owner to unmute it
    /// (`track-update-request {requested_for, track_id, mute}`).
    ///
    /// `mute: true` needs `mute` and is enforced (subscribers get
    /// `on-track-update`); `mute: false` needs `unmute` and is only a
    /// request. Either way the owner gets `on-track-update-request`.
    ///
    /// - Throws: `rpc` with 40300, 40400 (no such peer), 40401 (no such
    ///   track of that peer), -32602.
    public func requestTrackUpdate(
        for peerID: String,
        trackID: String,
        mute: Bool,
        timeout: Duration? = nil
    ) async throws {
        _ = try await call(
            "track-update-request",
            ["requested_for": .string(peerID), "track_id": .string(trackID), "mute": .bool(mute)],
            timeout: timeout
        )
    }

    /// Mutes (or asks to unmute) every matching track of every other peer
    /// (`change-track-mute-state-request {value, roles?, type?, source?}`).
    ///
    /// Each affected owner gets one `on-change-track-mute-state-request`.
    ///
    /// - Parameters:
    ///   - value: true mutes (needs `mute`), false asks to unmute (needs `unmute`).
    ///   - roles, type, source: Filters; nil matches everything.
    /// - Returns: `tracks_affected`: tracks muted (`value: true`) or asked to
    ///   unmute (`value: false`).
    /// - Throws: `rpc` with 40300, -32602.
    @discardableResult
    public func changeTrackMuteState(
        mute value: Bool,
        roles: [String]? = nil,
        type: TrackType? = nil,
        source: TrackSource? = nil,
        timeout: Duration? = nil
    ) async throws -> Int {
        let result = try await call(
            "change-track-mute-state-request",
            params([
                "value": .bool(value), "roles": roles.map { .array($0.map(JSON.string)) },
                "type": type.map { .string($0.rawValue) }, "source": source.map { .string($0.rawValue) },
            ]),
            timeout: timeout
        )
        return try decode("change-track-mute-state-request", result) {
            try WireReader($0, path: "").int("tracks_affected")
        }
    }

    /// Removes another peer from the room (`peer-leave-request {requested_for, reason?}`).
    /// Needs `removeOthers`.
    ///
    /// The target gets `on-peer-leave-request {…, room_end:false}` and is
    /// closed with 4001; others get `on-peer-leave {reason:"peer kicked"}`.
    ///
    /// - Throws: `rpc` with 40300, 40400 (no such peer), -32602.
    public func removePeer(_ peerID: String, reason: String? = nil, timeout: Duration? = nil) async throws {
        _ = try await call(
            "peer-leave-request",
            params(["requested_for": .string(peerID), "reason": reason.map(JSON.string)]),
            timeout: timeout
        )
    }

    /// Ends the room for everyone (`end-room {reason?, lock}`). Needs `endRoom`.
    ///
    /// Every peer, the caller included, gets `on-peer-leave-request {…,
    /// room_end:true}` and is closed with 4002. With `lock`, later joins of
    /// this room id fail with 40003 until the REST API unlocks it.
    ///
    /// - Throws: `rpc` with 40300.
    public func endRoom(reason: String? = nil, lock: Bool = false, timeout: Duration? = nil) async throws {
        _ = try await call(
            "end-room",
            params(["reason": reason.map(JSON.string), "lock": .bool(lock)]),
            timeout: timeout
        )
    }
}
