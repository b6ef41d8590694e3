import Foundation
import JWTKit

/// Mints HS256 tokens the way an app backend would (`roomd token`, tests,
/// harnesses).
public struct TokenMinter: Sendable {
    private let keys: JWTKeyCollection

    public init(secret: [UInt8]) async {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        self.keys = keys
    }

    /// An app token for `join`.
    public func appToken(room: String, user: String, role: String, name: String? = nil,
                         ttl: TimeInterval = 24 * 3600, restrictions: String? = nil,
                         accessKey: String? = nil, now: Date = Date()) async throws -> String {
        let claims = MintedClaims(
            type: "app", version: 2, room_id: room, user_id: user, role: role, name: name,
            user_restrictions: restrictions, access_key: accessKey,
            iat: IssuedAtClaim(value: now), nbf: NotBeforeClaim(value: now.addingTimeInterval(-1)),
            exp: ExpirationClaim(value: now.addingTimeInterval(ttl)), jti: IDClaim(value: UUID().uuidString))
        return try await keys.sign(claims)
    }

    /// A management token for the REST API.
    public func managementToken(ttl: TimeInterval = 24 * 3600, now: Date = Date()) async throws -> String {
        let claims = MintedClaims(
            type: "management", version: 2, iat: IssuedAtClaim(value: now),
            nbf: NotBeforeClaim(value: now.addingTimeInterval(-1)),
            exp: ExpirationClaim(value: now.addingTimeInterval(ttl)), jti: IDClaim(value: UUID().uuidString))
        return try await keys.sign(claims)
    }
}

struct MintedClaims: JWTPayload {
    var type: String
    var version: Int
    var room_id: String?
    var user_id: String?
    var role: String?
    var name: String?
    var user_restrictions: String?
    var access_key: String?
    var iat: IssuedAtClaim
    var nbf: NotBeforeClaim
    var exp: ExpirationClaim
    var jti: IDClaim

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
