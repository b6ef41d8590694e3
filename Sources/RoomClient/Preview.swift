import RoomWire

// `preview` (PROTOCOL.md section 13): a token and its room checked without
// joining. Same conventions as Methods.swift and Models.swift.

extension RoomClient {
    // MARK: - Preview

    /// Checks a token and its room without joining (`preview {token}`).
    ///
    /// Allowed before `join`, any number of times; nothing is pushed to anyone.
    ///
    /// - Returns: The room's session (nil when the room has none now), the
    ///   Policy of the token's role, and the peer count.
    /// - Throws: `rpc` with the codes of ``join(token:name:data:roomID:peerID:timeout:)``
    ///   (2004, 40100–40109, 40001, 40002, 40003, 40900, 40901, 41300 for the
    ///   token's claim sizes), and 5001 after `join`.
    public func preview(
        token: String,
        roomID: String? = nil,
        timeout: Duration? = nil
    ) async throws
        -> PreviewResult
    {
        let result = try await call(
            "preview",
            params(["token": .string(token), "room_id": roomID.map(JSON.string)]),
            timeout: timeout
        )
        return try decode("preview", result) { try PreviewResult(WireReader($0, path: "")) }
    }
}

/// `preview`'s result: the room's session now (nil when it has none), the
/// caller's Policy, and the number of peers.
public struct PreviewResult: Sendable, Equatable {
    /// Nil when the room has no session now.
    public var room: Room?
    /// The Policy the token's role would get.
    public var policy: Policy
    /// Peers in the room now (0 without a session).
    public var peerCount: Int

    init(_ r: WireReader) throws {
        try r.requireObject()
        room = r.has("room") ? try Room(r.child("room")) : nil
        policy = try Policy(r.child("policy"))
        peerCount = try r.int("peer_count")
    }
}
