/// Peers whose token expires soon (1.2, section 23), by when to warn them:
/// a binary heap (tokens expire at any time, so a queue in join order would
/// not be sorted). An entry whose peer left, was warned or refreshed its
/// token since is stale and skipped (`Peer.tokenWarnAt` says).
struct TokenExpiries {
    private var heap: [(at: Int64, peer: Peer)] = []

    mutating func warn(_ peer: Peer, at time: Int64) {
        peer.tokenWarnAt = time
        heap.append((time, peer))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].at < heap[parent].at else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// The next peer to warn at `now`; nil when there is none.
    mutating func nextDue(now: Int64) -> Peer? {
        while let top = heap.first, top.at <= now {
            pop()
            if !top.peer.hasLeft, top.peer.tokenWarnAt == top.at { return top.peer }
        }
        return nil
    }

    /// When the next warning is due, stale entries dropped on the way.
    mutating func nextDeadline() -> Int64? {
        while let top = heap.first, top.peer.hasLeft || top.peer.tokenWarnAt != top.at { pop() }
        return heap.first?.at
    }

    private mutating func pop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].at < heap[smallest].at { smallest = left }
            if right < heap.count, heap[right].at < heap[smallest].at { smallest = right }
            if smallest == parent { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}

/// A token that replaces a peer's own (`token-refresh`), as the server verified it.
public struct RefreshedToken: Sendable {
    public var roomID: String
    public var userID: String
    public var roleName: String
    /// Its `exp`, in ms.
    public var expiresAt: Int64

    public init(roomID: String, userID: String, roleName: String, expiresAt: Int64) {
        self.roomID = roomID
        self.userID = userID
        self.roleName = roleName
        self.expiresAt = expiresAt
    }
}

/// Token refresh (1.2, section 23): `on-token-expiring {expires_at}` once
/// when a peer's token has less than `settings.room.token_refresh_s` left,
/// `token-refresh {token}` swaps in a new one.
extension RoomRegistry {
    /// `peer`'s token expires at `expiresAt` (ms): its warning is due
    /// `token_refresh_s` before (at once when that has passed).
    ///
    /// `refreshed`: a `token-refresh` brought it. A token that does not
    /// expire later than the one it replaces is not warned about again (it
    /// was); one that is already inside the window is warned halfway to its
    /// expiry (at least 1 s on), so a client with short tokens refreshes at
    /// their half-life instead of in a loop.
    func trackToken(of peer: Peer, expiresAt: Int64?, refreshed: Bool = false) {
        let previous = peer.tokenExpiresAt
        peer.tokenExpiresAt = expiresAt
        peer.tokenWarnAt = nil
        let ahead = Int64(settings.room.tokenRefreshS) * 1000
        guard let expiresAt, ahead > 0 else { return }
        let now = clock.nowMillis()
        var due = expiresAt - ahead
        if refreshed {
            if let previous, expiresAt <= previous { return }
            if due <= now { due = now + max(1000, (expiresAt - now) / 2) }
        }
        tokenExpiries.warn(peer, at: max(due, now))
    }

    /// When the next `on-token-expiring` is due, for the server's timer.
    public var nextTokenWarning: Int64? { tokenExpiries.nextDeadline() }

    /// `on-token-expiring` to every peer whose warning is due.
    public func warnExpiringTokens() -> [Delivery] {
        var deliveries: [Delivery] = []
        let now = clock.nowMillis()
        while let peer = tokenExpiries.nextDue(now: now) {
            peer.tokenWarnAt = nil
            guard let expiresAt = peer.tokenExpiresAt else { continue }
            deliveries.append(Delivery(.tokenExpiring(expiresAt: expiresAt), to: [peer]))
        }
        return deliveries
    }

    /// `token-refresh {token}`: the same user and room (40004, 40002); a
    /// new role in the token is a forced role change by the server. The
    /// warning may come again for the new token.
    public func refreshToken(of peer: Peer, with token: RefreshedToken) throws(RoomError) -> Effects {
        if token.roomID != peer.room.id {
            throw RoomError(.roomIDMismatch, "token: its room_id \"\(token.roomID)\" is not the peer's room")
        }
        if token.userID != peer.userID {
            throw RoomError(.peerIDOfOtherUser, "token: it belongs to another user")
        }
        guard template.role(token.roleName) != nil else {
            throw RoomError(.roleClaimInvalid, "token: role \"\(token.roleName)\" is not in the template")
        }
        var effects = Effects()
        if token.roleName != peer.role.name {
            (_, effects) = try requestRoleChange(
                by: .server,
                in: peer.room,
                targetID: peer.id,
                role: token.roleName,
                force: true
            )
        }
        trackToken(of: peer, expiresAt: token.expiresAt, refreshed: true)
        return effects
    }
}
