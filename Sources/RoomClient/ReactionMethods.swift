import RoomWire

// Reactions and tap votes (PROTOCOL.md section 20). Same conventions as
// Methods.swift and Models.swift.

extension RoomClient {
    // MARK: - Reactions

    /// Reacts to a message of the history, or taps the stream or a
    /// contestant (`react {target, type, count}`). `target` is a
    /// `message_id`, `"stream"` or `"contestant:<id>"`; `type` one of the
    /// template's `settings.reactions.types`. On a message a user has at
    /// most one reaction of each type (`count` must be 1; a repeat changes
    /// nothing); taps (`count` 1...50) add up. Returns the total after the
    /// call. Every peer hears of the change in the next coalesced
    /// ``RoomEvent/reactions(_:)``.
    ///
    /// - Throws: `rpc` with -32602 (bad target, type or count), 40405 (the
    ///   message is not in the history), 40907 (a bound of the room).
    @discardableResult
    public func react(
        _ target: String,
        type: String,
        count: Int = 1,
        timeout: Duration? = nil
    ) async throws -> ReactionCount {
        let params: JSON = ["target": .string(target), "type": .string(type), "count": .int(count)]
        let result = try await call("react", params, timeout: timeout)
        return try decode("react", result) { try ReactionCount(WireReader($0, path: "")) }
    }

    /// Takes this user's reaction of `type` off a message (`unreact {target,
    /// type}`); none there changes nothing. Taps cannot be taken back.
    /// Returns the total after the call.
    ///
    /// - Throws: `rpc` with -32602 (not a message, bad type), 40405.
    @discardableResult
    public func unreact(_ target: String, type: String, timeout: Duration? = nil) async throws -> ReactionCount {
        let result = try await call("unreact", ["target": .string(target), "type": .string(type)], timeout: timeout)
        return try decode("unreact", result) { try ReactionCount(WireReader($0, path: "")) }
    }

    /// The counts of up to 100 targets (`reactions-get {targets}`): every
    /// (target, type) with a total above 0, with this user's own count as
    /// ``ReactionCount/mine``.
    ///
    /// - Throws: `rpc` with -32602 (over 100 targets, a bad contestant id), 40405.
    public func reactions(targets: [String], timeout: Duration? = nil) async throws -> [ReactionCount] {
        let result = try await call("reactions-get", ["targets": .array(targets.map(JSON.string))], timeout: timeout)
        return try decode("reactions-get", result) { json in
            try WireReader(json, path: "").elements("counts").map { try ReactionCount($0) }
        }
    }
}
