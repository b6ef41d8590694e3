/// A polite role-change request waiting for its target's answer.
public struct RoleChangeRequest {
    public var token: String
    public var requester: Initiator
    public var target: Peer
    public var role: String
    public var expiresAt: Int64
    /// Its `RoleChangeExpiry` in the registry's deadlines while it is pending.
    var entry: DeadlineID?
    /// The stage request it invites (`stage-invite`, section 26), if any.
    var stageRequestID: String?
}

/// Polite role-change requests by token (PROTOCOL.md section 6): each waits
/// for its target's `role-change` or `role-change-reject` until it expires,
/// and goes with its target.
struct RoleChangeRequests {
    private var pending: [String: RoleChangeRequest] = [:]

    var count: Int { pending.count }

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

    /// Removes and returns the request behind `token`, whoever it is for.
    mutating func remove(_ token: String) -> RoleChangeRequest? {
        pending.removeValue(forKey: token)
    }

    /// Drops the requests addressed to a peer that left; returns them.
    mutating func forget(_ peer: Peer) -> [RoleChangeRequest] {
        var dropped: [RoleChangeRequest] = []
        for (token, request) in pending where request.target === peer {
            pending.removeValue(forKey: token)
            dropped.append(request)
        }
        return dropped
    }
}

/// The end of a polite request's `request_ttl_s`: the requester hears
/// `on-role-change-rejected` with `expired`. Requests that expire in one
/// millisecond do so in the order they were made (the queue's order).
struct RoleChangeExpiry: ModelDeadline {
    static let rank = 1
    let token: String

    func expire(in registry: RoomRegistry, at now: Int64) -> Expired {
        guard let request = registry.roleChanges.remove(token) else { return Expired() }
        var effects = registry.rejected(request, reason: .expired)
        effects.deliveries += registry.stageInvitationAnswered(request, rejected: false)
        return Expired(effects: effects)
    }
}
