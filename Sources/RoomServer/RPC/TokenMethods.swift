import Logging
import RoomModel
import RoomWire

/// `token-refresh {token}` (1.2, section 23): a peer swaps in a new token
/// of its user and room before the old one expires; `on-token-expiring`
/// (the timer in Schedule.swift) says when.
extension Dispatcher {
    static var tokenMethods: [String: Method] {
        ["token-refresh": .joined(Dispatcher.tokenRefresh)]
    }

    func tokenRefresh(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let token = try params.requiredString("token")
        let grant = try verifier.verifyApp(token)
        let effects = try registry.refreshToken(
            of: peer,
            with: RefreshedToken(
                roomID: grant.roomID,
                userID: grant.userID,
                roleName: grant.role,
                expiresAt: grant.expiresAt
            )
        )
        apply(effects, &call)
        logger.info(
            "token refreshed",
            metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)", "role": "\(peer.role.name)"]
        )
        return Self.encode { w in w.field("expires_at", grant.expiresAt) }
    }
}
