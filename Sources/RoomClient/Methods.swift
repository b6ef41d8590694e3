import RoomWire

// One typed method per protocol call (PROTOCOL.md section 4). Each is a
// thin wrapper over `call`: it sends the params (nil optionals are left
// out), waits for the response (`timeout`, default 5 s), and decodes the
// result.
//
// Every method but `join` and `ping` needs a joined peer, else the server
// answers 40005. Any call may also fail with 42900 (rate limited). Errors:
// ``RoomClientError/rpc(code:message:data:)`` for a protocol error,
// ``RoomClientError/timeout(_:)``, ``RoomClientError/closed(code:reason:)``,
// ``RoomClientError/invalidPayload(_:)`` if the result does not decode.

extension RoomClient {
    /// The hand-raise group (`"_handraise"`).
    public static let handRaiseGroup = "_handraise"

    // MARK: - Joining and leaving

    /// Joins the room of `token` (`join`).
    ///
    /// Sends `{token, name?, data?, room_id?, peer_id?}`. The peer joins the
    /// token's room with the token's role; others get `on-peer-join`.
    ///
    /// - Parameters:
    ///   - token: An HS256 app token (PROTOCOL.md section 11).
    ///   - name: Display name; defaults to the token's `name` claim, else its `user_id`.
    ///   - data: The peer's metadata string.
    ///   - roomID: If given, must equal the token's `room_id` (else 40002).
    ///   - peerID: Resume this peer within its reconnect grace (same user).
    /// - Returns: The caller's peer, the room, its policy and the other peers;
    ///   `resumed` is true when `peerID` resumed a peer.
    /// - Throws: `rpc` with 2004 (not a JWT), 40100 (other token problem,
    ///   e.g. a management token), 40101 (`access_key`), 40102 (`room_id`
    ///   claim), 40107 (`user_id` claim), 40108 (unknown role or
    ///   `maxPeerCount: -1`), 40109 (signature, `exp`, `nbf`, algorithm),
    ///   40001 (room does not exist), 40002, 40003 (room locked), 40004
    ///   (`peerID` of another user), 41001 (peer gone), 5001 (already
    ///   joined), 40900 (role limit), 40901 (room full), 41300 (name or data
    ///   too long, or the token's `user_id` claim over 256 bytes or `name`
    ///   claim over `max_name_bytes`), -32602.
    @discardableResult
    public func join(
        token: String,
        name: String? = nil,
        data: String? = nil,
        roomID: String? = nil,
        peerID: String? = nil,
        timeout: Duration? = nil
    ) async throws -> JoinResult {
        let result = try await call(
            "join",
            params([
                "token": .string(token), "name": name.map(JSON.string), "data": data.map(JSON.string),
                "room_id": roomID.map(JSON.string), "peer_id": peerID.map(JSON.string),
            ]),
            timeout: timeout
        )
        return try decode("join", result) { try JoinResult(WireReader($0, path: "")) }
    }

    /// Leaves the room (`leave {reason?}`).
    ///
    /// Others get `on-peer-leave {peer_id, reason:"client request"}`; the
    /// server then closes the connection with 1000 (see ``closeCode(timeout:)``).
    ///
    /// - Throws: `rpc` with 40005 (not joined).
    public func leave(reason: String? = nil, timeout: Duration? = nil) async throws {
        _ = try await call("leave", params(["reason": reason.map(JSON.string)]), timeout: timeout)
    }

    // MARK: - The peer

    /// Changes this peer's name and/or metadata (`peer-update {name?, data?}`).
    ///
    /// Every peer, this one included, gets `on-peer-update {peer, changed}`.
    ///
    /// - Returns: This peer as it is now.
    /// - Throws: `rpc` with 40300 (`view_and_polls_only` token, or a role
    ///   without `updateOwnMetadata`), 40302 (a blocked word in the name),
    ///   40908 (the name of a moderating peer in the room), 41300 (too
    ///   long), -32602 (a name empty once trimmed).
    @discardableResult
    public func updatePeer(
        name: String? = nil,
        data: String? = nil,
        timeout: Duration? = nil
    ) async throws
        -> Peer
    {
        let result = try await call(
            "peer-update",
            params(["name": name.map(JSON.string), "data": data.map(JSON.string)]),
            timeout: timeout
        )
        return try decode("peer-update", result) { try Peer(WireReader($0["peer"], path: "peer")) }
    }

    /// Sets and deletes attributes (`peer-attributes-set {peer_id?, set?,
    /// delete?}`, 1.3): of this peer (the role's `updateOwnMetadata`), or
    /// with `peerID` of another one (a moderating role). Keys not named
    /// keep their values; a `nil` value in `set` deletes its key.
    ///
    /// The room gets `on-peer-update {peer, changed:["attributes"]}` (in a
    /// large room, about a peer that may not publish: that peer and the
    /// moderating peers); a call that changes nothing pushes nothing.
    ///
    /// - Returns: The peer as it is now.
    /// - Throws: `rpc` with 40300, 40400 (no such peer), 41300 (a value over
    ///   256 bytes), -32602 (a bad key, a 17th key, a key both set and deleted).
    @discardableResult
    public func setAttributes(
        _ set: [String: String?] = [:],
        delete: [String] = [],
        for peerID: String? = nil,
        timeout: Duration? = nil
    ) async throws
        -> Peer
    {
        var values: [JSON.Member] = []
        for key in set.keys.sorted() { values.append(JSON.Member(key, set[key]!.map(JSON.string) ?? .null)) }
        let result = try await call(
            "peer-attributes-set",
            params([
                "peer_id": peerID.map(JSON.string),
                "set": set.isEmpty ? nil : .object(values),
                "delete": delete.isEmpty ? nil : .array(delete.map(JSON.string)),
            ]),
            timeout: timeout
        )
        return try decode("peer-attributes-set", result) { try Peer(WireReader($0["peer"], path: "peer")) }
    }

    // MARK: - Tracks

    /// Publishes a track (`track-add {track_id?, type, source?, mute?, description?}`).
    ///
    /// Subscribers get `on-track-add {peer_id, track}`; the publisher never
    /// gets pushes about its own tracks.
    ///
    /// - Parameters:
    ///   - id: `[A-Za-z0-9_-]{1,64}`, unique in the room; the server makes one if nil.
    ///   - type: Audio or video.
    ///   - source: Server default `.regular`.
    ///   - mute: Server default false.
    ///   - description: Server default `""`.
    /// - Returns: The track as the server stored it.
    /// - Throws: `rpc` with 40300 (the role may not publish this kind, or a
    ///   `view_and_polls_only` token), 40903 (duplicate id, too many tracks),
    ///   41300, -32602 (bad id).
    @discardableResult
    public func addTrack(
        id: String? = nil,
        type: TrackType,
        source: TrackSource? = nil,
        mute: Bool? = nil,
        description: String? = nil,
        timeout: Duration? = nil
    ) async throws -> Track {
        let result = try await call(
            "track-add",
            params([
                "track_id": id.map(JSON.string), "type": .string(type.rawValue),
                "source": source.map { .string($0.rawValue) }, "mute": mute.map(JSON.bool),
                "description": description.map(JSON.string),
            ]),
            timeout: timeout
        )
        return try decode("track-add", result) { try Track(WireReader($0["track"], path: "track")) }
    }

    /// Changes one of this peer's tracks (`track-update {track_id, mute?, description?}`).
    ///
    /// Subscribers get `on-track-update {peer_id, track}`.
    ///
    /// - Returns: The track as it is now.
    /// - Throws: `rpc` with 40401 (not this peer's track), 41300, -32602.
    @discardableResult
    public func updateTrack(
        id: String,
        mute: Bool? = nil,
        description: String? = nil,
        timeout: Duration? = nil
    ) async throws -> Track {
        let result = try await call(
            "track-update",
            params([
                "track_id": .string(id), "mute": mute.map(JSON.bool),
                "description": description.map(JSON.string),
            ]),
            timeout: timeout
        )
        return try decode("track-update", result) { try Track(WireReader($0["track"], path: "track")) }
    }

    /// Unpublishes one of this peer's tracks (`track-remove {track_id}`).
    ///
    /// Subscribers get `on-track-remove {peer_id, track}`.
    ///
    /// - Throws: `rpc` with 40401 (not this peer's track), -32602.
    public func removeTrack(id: String, timeout: Duration? = nil) async throws {
        _ = try await call("track-remove", ["track_id": .string(id)], timeout: timeout)
    }

    // MARK: - Active speakers

    /// Reports levels of this peer's own audio tracks (`audio-level {levels:[{track_id, level}]}`).
    ///
    /// Feeds the room's `active-speakers` pushes (PROTOCOL.md section 7).
    /// A muted track counts as 0.
    ///
    /// - Parameter levels: Levels 0...100, at most `max_tracks_per_peer` entries.
    /// - Throws: `rpc` with 40401 (not this peer's track), -32602 (level out
    ///   of range, too many entries).
    public func reportAudioLevels(
        _ levels: [(trackID: String, level: Int)],
        timeout: Duration? = nil
    )
        async throws
    {
        let entries: [JSON] = levels.map { .obj(["track_id": .string($0.trackID), "level": .int($0.level)]) }
        _ = try await call("audio-level", ["levels": .array(entries)], timeout: timeout)
    }

    // MARK: - Messages

    /// Sends a chat message to every other peer (`broadcast {info:{message, type}}`).
    ///
    /// Recipients get `on-broadcast` with `recipient.type == .broadcast`.
    ///
    /// - Returns: The message id and timestamp the recipients see.
    /// - Throws: `rpc` with 40300 (`view_and_polls_only` token), 41300
    ///   (message over `max_chat_bytes`), -32602.
    @discardableResult
    public func broadcast(
        _ message: String,
        type: String = "chat",
        timeout: Duration? = nil
    ) async throws
        -> MessageReceipt
    {
        try await send(message, type: type, to: [], timeout: timeout)
    }

    /// Sends a chat message to one peer (`broadcast {info, peer_id}`).
    ///
    /// The recipient gets `on-broadcast` with `recipient.type == .peer`.
    ///
    /// - Returns: The message id and timestamp the recipient sees.
    /// - Throws: `rpc` with 40400 (no such peer in the room), 40300, 41300, -32602.
    @discardableResult
    public func sendDirect(
        _ message: String,
        to peerID: String,
        type: String = "chat",
        timeout: Duration? = nil
    ) async throws -> MessageReceipt {
        try await send(message, type: type, to: [.init("peer_id", .string(peerID))], timeout: timeout)
    }

    /// Sends a chat message to every peer whose role is listed, never the
    /// sender (`broadcast {info, roles}`).
    ///
    /// Recipients get `on-broadcast` with `recipient.type == .roles`.
    ///
    /// - Returns: The message id and timestamp the recipients see.
    /// - Throws: `rpc` with -32602 (`roles` empty), 40300, 41300.
    @discardableResult
    public func sendToRoles(
        _ message: String,
        roles: [String],
        type: String = "chat",
        timeout: Duration? = nil
    ) async throws -> MessageReceipt {
        try await send(message, type: type, to: [.init("roles", .array(roles.map(JSON.string)))], timeout: timeout)
    }

    private func send(
        _ message: String,
        type: String,
        to target: [JSON.Member],
        timeout: Duration?
    ) async throws
        -> MessageReceipt
    {
        let info = JSON.object([.init("message", .string(message)), .init("type", .string(type))])
        let result = try await call("broadcast", .object([.init("info", info)] + target), timeout: timeout)
        return try decode("broadcast", result) { try MessageReceipt(WireReader($0, path: "")) }
    }

    // MARK: - Ping

    /// A round trip (`ping {timestamp?}`); works before `join` and is not rate limited.
    ///
    /// - Parameter timestamp: Any JSON value; echoed back. Nil sends no timestamp.
    /// - Returns: The echoed `timestamp` (`.null` if none was sent) and the
    ///   server's clock in ms since the epoch.
    @discardableResult
    public func ping(
        timestamp: JSON? = nil,
        timeout: Duration? = nil
    ) async throws
        -> (timestamp: JSON, serverTime: Int64)
    {
        let result = try await call("ping", params(["timestamp": timestamp]), timeout: timeout)
        return try decode("ping", result) { result in
            let r = WireReader(result, path: "")
            try r.requireObject()
            guard let echoed = result["timestamp"] else { throw r.child("timestamp").fail("missing") }
            return (echoed, try r.int64("server_time"))
        }
    }

    // MARK: - Helpers

    /// An object of the given members in order, without the nil ones.
    func params(_ pairs: KeyValuePairs<String, JSON?>) -> JSON {
        .object(pairs.compactMap { pair in pair.value.map { JSON.Member(pair.key, $0) } })
    }

    /// Runs a decoder over a call's result, naming the method in `invalidPayload`.
    func decode<T>(_ method: String, _ result: JSON, _ body: (JSON) throws -> T) throws -> T {
        do {
            return try body(result)
        } catch let error as WireError {
            throw RoomClientError.invalidPayload("\(method) result: \(error)")
        } catch RoomClientError.invalidPayload(let problem) {
            throw RoomClientError.invalidPayload("\(method) result: \(problem)")
        }
    }
}
