import RoomWire

// Large rooms (PROTOCOL.md section 12): paging through a room's peers.
// Same conventions as Methods.swift.

extension RoomClient {
    // MARK: - Large rooms

    /// The first page of the peers matching all given filters, the caller
    /// included (`find-peer {role?, group?, limit?}`). Works in rooms of any size.
    ///
    /// - Parameter limit: 1...100, server default 10.
    /// - Returns: A page; pass its `iterator` to ``nextPeers(iterator:limit:timeout:)``.
    /// - Throws: `rpc` with -32602.
    public func findPeers(
        role: String? = nil,
        group: String? = nil,
        limit: Int? = nil,
        timeout: Duration? = nil
    ) async throws -> PeerPage {
        let result = try await call(
            "find-peer",
            params(["role": role.map(JSON.string), "group": group.map(JSON.string), "limit": limit.map { .int($0) }]),
            timeout: timeout
        )
        return try decode("find-peer", result) { try PeerPage(WireReader($0, path: "")) }
    }

    /// The next page of a ``findPeers(role:group:limit:timeout:)`` listing
    /// (`peer-iter-next {iterator, limit?}`).
    ///
    /// - Throws: `rpc` with -32602 (unknown iterator).
    public func nextPeers(
        iterator: String,
        limit: Int? = nil,
        timeout: Duration? = nil
    ) async throws
        -> PeerPage
    {
        let result = try await call(
            "peer-iter-next",
            params(["iterator": .string(iterator), "limit": limit.map { .int($0) }]),
            timeout: timeout
        )
        return try decode("peer-iter-next", result) { try PeerPage(WireReader($0, path: "")) }
    }
}
