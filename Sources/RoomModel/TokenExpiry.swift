/// The `on-token-expiring` of one peer (1.2, section 23), due
/// `token_refresh_s` before its token expires. One entry per peer at most
/// (`Peer.tokenEntry`), moved by a refresh and cancelled when it leaves.
struct TokenWarning: ModelDeadline {
    static let rank = 6
    let peer: Peer

    func expire(in registry: RoomRegistry, at now: Int64) -> Expired {
        guard !peer.hasLeft, peer.tokenWarnAt == now else { return Expired() }
        peer.tokenWarnAt = nil
        peer.tokenEntry = nil
        guard let expiresAt = peer.tokenExpiresAt else { return Expired() }
        return Expired([Delivery(.tokenExpiring(expiresAt: expiresAt), to: [peer])])
    }
}

/// A token that replaces a peer's own (`token-refresh`), as the server verified it.
public struct RefreshedToken: Sendable {
    public var roomID: RoomID
    public var userID: UserID
    public var roleName: String
    /// Its `exp`, in ms.
    public var expiresAt: Int64

    public init(roomID: RoomID, userID: UserID, roleName: String, expiresAt: Int64) {
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
        cancel(peer.tokenEntry)
        peer.tokenEntry = nil
        let ahead = Int64(settings.room.tokenRefreshS) * 1000
        guard let expiresAt, ahead > 0 else { return }
        let now = clock.nowMillis()
        var due = expiresAt - ahead
        if refreshed {
            if let previous, expiresAt <= previous { return }
            if due <= now { due = now + max(1000, (expiresAt - now) / 2) }
        }
        let at = max(due, now)
        peer.tokenWarnAt = at
        peer.tokenEntry = schedule(TokenWarning(peer: peer), at: at)
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
