/// A polite role-change request waiting for its target's answer.
public struct RoleChangeRequest {
    public var token: String
    public var requester: Initiator
    public var target: Peer
    public var role: String
    public var expiresAt: Int64
}

/// Polite role-change requests by token (PROTOCOL.md section 6): each waits
/// for its target's `role-change` or `role-change-reject` until it expires,
/// and goes with its target.
struct RoleChangeRequests {
    private var pending: [String: RoleChangeRequest] = [:]

    var count: Int { pending.count }

    /// When the next pending request expires.
    var nextExpiry: Int64? { pending.values.map(\.expiresAt).min() }

    mutating func add(_ request: RoleChangeRequest) {
        pending[request.token] = request
    }

    /// Removes and returns the request behind `token` when it is addressed
    /// to `peer` and has not expired at `now`.
    mutating func take(_ token: String, for peer: Peer, now: Int64) throws(RoomError) -> RoleChangeRequest {
        guard let request = pending[token], request.target === peer, request.expiresAt > now else {
            throw RoomError(.roleChangeRequestNotFound, "token: no pending role change request for you")
        }
        pending.removeValue(forKey: token)
        return request
    }

    /// A request taken but not applied stays answerable (e.g. with `role-change-reject`).
    mutating func putBack(_ request: RoleChangeRequest) {
        pending[request.token] = request
    }

    /// Removes and returns the requests whose time is up at `now`.
    mutating func takeExpired(now: Int64) -> [RoleChangeRequest] {
        var expired: [RoleChangeRequest] = []
        for (token, request) in pending where request.expiresAt <= now {
            pending.removeValue(forKey: token)
            expired.append(request)
        }
        return expired
    }

    /// Drops the requests addressed to a peer that left.
    mutating func forget(_ peer: Peer) {
        for (token, request) in pending where request.target === peer {
            pending.removeValue(forKey: token)
        }
    }
}
