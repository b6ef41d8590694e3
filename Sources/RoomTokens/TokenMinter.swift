import Crypto
import Foundation
import JWTKit

/// Mints HS256 tokens the way an app backend would (`roomd token`, tests,
/// harnesses). Synchronous, like roomd's verifier: jwt-kit serializes the
/// claims, swift-crypto computes the MAC.
public struct TokenMinter: Sendable {
    /// Whether `join` accepts this `room_id` claim: `[A-Za-z0-9_-]{1,64}`.
    public static func isValidRoomID(_ id: String) -> Bool {
        let utf8 = id.utf8
        return !utf8.isEmpty && utf8.count <= 64
            && utf8.allSatisfy { byte in
                (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    /// The most bytes (UTF-8) of a `user_id` claim `join` accepts: the id is
    /// in every push about the peer, so it is bounded like a name.
    public static let maxUserIDBytes = 256

    /// Whether `join` accepts this `user_id` claim: a non-empty string of at
    /// most `maxUserIDBytes` bytes (empty is 40107, longer 41300).
    public static func isValidUserID(_ id: String) -> Bool { !id.isEmpty && id.utf8.count <= maxUserIDBytes }

    private let key: SymmetricKey
    private let serializer = DefaultJWTSerializer()
    /// The encoded header every token shares.
    private static let header = base64URL(Data(#"{"alg":"HS256","typ":"JWT"}"#.utf8))

    public init(secret: [UInt8]) {
        key = SymmetricKey(data: secret)
    }

    /// An app token for `join`.
    public func appToken(
        room: String,
        user: String,
        role: String,
        name: String? = nil,
        avatar: String? = nil,
        attributes: [String: String]? = nil,
        ttl: TimeInterval = 24 * 3600,
        restrictions: String? = nil,
        accessKey: String? = nil,
        now: Date = Date()
    ) throws -> String {
        let now = Self.wholeSeconds(now)
        return try sign(
            MintedClaims(
                type: "app",
                version: 2,
                room_id: room,
                user_id: user,
                role: role,
                name: name,
                avatar: avatar,
                attributes: attributes,
                user_restrictions: restrictions,
                access_key: accessKey,
                iat: IssuedAtClaim(value: now),
                nbf: NotBeforeClaim(value: now.addingTimeInterval(-1)),
                exp: ExpirationClaim(value: now.addingTimeInterval(ttl)),
                jti: IDClaim(value: UUID().uuidString)
            )
        )
    }

    /// A management token for the REST API.
    public func managementToken(ttl: TimeInterval = 24 * 3600, now: Date = Date()) throws -> String {
        let now = Self.wholeSeconds(now)
        return try sign(
            MintedClaims(
                type: "management",
                version: 2,
                iat: IssuedAtClaim(value: now),
                nbf: NotBeforeClaim(value: now.addingTimeInterval(-1)),
                exp: ExpirationClaim(value: now.addingTimeInterval(ttl)),
                jti: IDClaim(value: UUID().uuidString)
            )
        )
    }

    private func sign(_ claims: MintedClaims) throws -> String {
        let input = Self.header + "." + String(decoding: try serializer.serialize(claims), as: UTF8.self)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: key)
        return input + "." + Self.base64URL(Data(mac))
    }

    /// NumericDate claims as whole seconds: what most verifiers expect.
    private static func wholeSeconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

// swift-format-ignore: AlwaysUseLowerCamelCase
// The properties are the token's JSON claim names.
struct MintedClaims: JWTPayload {
    var type: String
    var version: Int
    var room_id: String?
    var user_id: String?
    var role: String?
    var name: String?
    /// Section 27: a URL or any string of at most 512 bytes.
    var avatar: String? = nil
    /// Section 27: at most 16 string values.
    var attributes: [String: String]? = nil
    var user_restrictions: String?
    var access_key: String?
    var iat: IssuedAtClaim
    var nbf: NotBeforeClaim
    var exp: ExpirationClaim
    var jti: IDClaim

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
