import RoomWire

// Groups and the hand raise (PROTOCOL.md section 6). Same conventions as
// Methods.swift.

extension RoomClient {
    // MARK: - Groups

    /// Joins a group (`group-join {name}`).
    ///
    /// Everyone gets `on-peer-update {changed:["groups"]}`, unless this peer
    /// already was in it (then nothing is sent).
    ///
    /// - Returns: This peer's groups.
    /// - Throws: `rpc` with -32602 (name not `[A-Za-z0-9_-]{1,64}`), 40300
    ///   (`view_and_polls_only` token), 40903 (17th group).
    @discardableResult
    public func joinGroup(_ name: String, timeout: Duration? = nil) async throws -> [String] {
        try await groups("group-join", ["name": .string(name)], timeout: timeout)
    }

    /// Leaves a group (`group-leave {name}`); nothing is sent if this peer was not in it.
    ///
    /// - Returns: This peer's groups.
    /// - Throws: `rpc` with -32602.
    @discardableResult
    public func leaveGroup(_ name: String, timeout: Duration? = nil) async throws -> [String] {
        try await groups("group-leave", ["name": .string(name)], timeout: timeout)
    }

    /// Puts another peer in a group (`group-add {name, peer_id}`). Needs `changeRole`.
    ///
    /// - Returns: The target's groups.
    /// - Throws: `rpc` with 40300, 40400 (no such peer), 40903, -32602.
    @discardableResult
    public func addToGroup(
        _ name: String,
        peer peerID: String,
        timeout: Duration? = nil
    ) async throws
        -> [String]
    {
        try await groups("group-add", ["name": .string(name), "peer_id": .string(peerID)], timeout: timeout)
    }

    /// Takes another peer out of a group (`group-remove {name, peer_id}`). Needs `changeRole`.
    ///
    /// - Returns: The target's groups.
    /// - Throws: `rpc` with 40300, 40400 (no such peer), -32602.
    @discardableResult
    public func removeFromGroup(
        _ name: String,
        peer peerID: String,
        timeout: Duration? = nil
    ) async throws
        -> [String]
    {
        try await groups("group-remove", ["name": .string(name), "peer_id": .string(peerID)], timeout: timeout)
    }

    /// Raises this peer's hand: ``joinGroup(_:timeout:)`` with `"_handraise"`.
    ///
    /// - Returns: This peer's groups.
    /// - Throws: `rpc` with 40300 (`view_and_polls_only` token), 40903.
    @discardableResult
    public func raiseHand(timeout: Duration? = nil) async throws -> [String] {
        try await joinGroup(Self.handRaiseGroup, timeout: timeout)
    }

    /// Lowers this peer's hand: ``leaveGroup(_:timeout:)`` with `"_handraise"`.
    ///
    /// - Returns: This peer's groups.
    @discardableResult
    public func lowerHand(timeout: Duration? = nil) async throws -> [String] {
        try await leaveGroup(Self.handRaiseGroup, timeout: timeout)
    }

    private func groups(_ method: String, _ params: JSON, timeout: Duration?) async throws -> [String] {
        let result = try await call(method, params, timeout: timeout)
        return try decode(method, result) { try WireReader($0, path: "").strings("groups") }
    }
}
