import Crypto
import Foundation
import JWTKit
import RoomModel
import RoomTokens

/// What a valid app token grants.
struct AppGrant: Sendable {
    var roomID: RoomID
    var userID: UserID
    var role: String
    /// The `name` claim, trimmed (section 27: it wins over the `name` param).
    var name: String?
    /// The `avatar` and `attributes` claims (section 27).
    var avatar: String?
    var attributes: [String: String] = [:]
    var viewOnly: Bool
    /// The token's `exp` (ms since 1970).
    var expiresAt: Int64
    /// It expired less than the `expiredGrace` asked for ago (a resume, section 23).
    var expired: Bool = false
}

/// Verifies HS256 tokens synchronously on the service thread: jwt-kit's
/// parser splits and decodes, swift-crypto checks the MAC in constant time.
/// Each defect maps to the code PROTOCOL.md section 8 gives it.
struct TokenVerifier: Sendable {
    private let key: SymmetricKey
    private let accessKey: String?
    /// The bound of a `name` claim: `limits.max_name_bytes` (64), as for the `name` param.
    private let maxNameBytes: Int
    private let parser = DefaultJWTParser()
    private let now: @Sendable () -> Date
    /// Test mode's manual clock, for app tokens (nil: `now`).
    private let appClock: (@Sendable () -> Date)?

    /// `appClock` (test mode's manual clock, PROTOCOL.md section 25): an app
    /// token's `exp` is checked on it, its `nbf` on the later of it and the
    /// real time (a token a harness mints in real time is valid at once).
    /// Management tokens keep real time: they are the harness' and the
    /// operator's control plane, also after the clock jumped a year.
    init(
        secret: [UInt8],
        accessKey: String?,
        maxNameBytes: Int,
        now: @escaping @Sendable () -> Date = { Date() },
        appClock: (@Sendable () -> Date)? = nil
    ) {
        self.key = SymmetricKey(data: secret)
        self.accessKey = accessKey
        self.maxNameBytes = maxNameBytes
        self.now = now
        self.appClock = appClock
    }

    /// A token for `join` and `preview`. The claims that end up in pushes
    /// about the peer (`user_id`, `name`) are bounded here, whatever the
    /// call's params, so that `preview` refuses what `join` would (41300).
    ///
    /// `expiredGrace` (seconds): a token that expired less than that ago is
    /// granted with `expired` set — a resume inside the reconnect grace
    /// (section 23); the caller decides what it may do.
    func verifyApp(_ token: String, expiredGrace: TimeInterval = 0) throws(RoomError) -> AppGrant {
        let real = now()
        let (claims, expired) = try verifySigned(
            token,
            expiresAgainst: appClock?() ?? real,
            notBefore: max(appClock?() ?? real, real),
            expiredGrace: expiredGrace
        )
        guard claims.type.value == "app", claims.version.value == 2 else {
            throw RoomError(.tokenInvalid, "not an app token (type must be \"app\" and version 2)")
        }
        if let accessKey, claims.accessKey.value != accessKey {
            throw RoomError(.accessKeyMismatch, "access_key does not match")
        }
        guard let roomID = claims.roomID.value, TokenMinter.isValidRoomID(roomID) else {
            throw RoomError(.roomIDClaimInvalid, "room_id claim missing or invalid")
        }
        guard let userID = claims.userID.value, !userID.isEmpty else {
            throw RoomError(.userIDClaimInvalid, "user_id claim missing or not a string")
        }
        guard let role = claims.role.value else {
            throw RoomError(.roleClaimInvalid, "role claim missing or not a string")
        }
        try Self.checkSize(userID, claim: "user_id", limit: TokenMinter.maxUserIDBytes)
        let identity = try identityClaims(claims)
        return AppGrant(
            roomID: RoomID(roomID),
            userID: UserID(userID),
            role: role,
            name: identity.name,
            avatar: identity.avatar,
            attributes: identity.attributes,
            viewOnly: claims.userRestrictions.value == "view_and_polls_only",
            expiresAt: Self.millis(claims.exp.value!.value),
            expired: expired
        )
    }

    /// Section 27's claims, all optional: `name` (trimmed, not empty, at
    /// most `max_name_bytes`), `avatar` (≤ 512 bytes), `attributes` (as
    /// `peer-attributes-set` takes them). A bad one is 40100, whatever the call.
    private func identityClaims(
        _ claims: TokenClaims
    ) throws(RoomError) -> (name: String?, avatar: String?, attributes: [String: String]) {
        var name: String?
        switch claims.name {
        case .missing: break
        case .invalid: throw RoomError(.tokenInvalid, "name claim: not a string")
        case .value(let raw):
            let trimmed = raw.trimmedOfWhiteSpace
            if trimmed.isEmpty { throw RoomError(.tokenInvalid, "name claim: empty after trimming white space") }
            if trimmed.utf8.count > maxNameBytes {
                throw RoomError(
                    .tokenInvalid,
                    "name claim: \(trimmed.utf8.count) bytes is over the limit of \(maxNameBytes)"
                )
            }
            name = trimmed
        }
        var avatar: String?
        switch claims.avatar {
        case .missing: break
        case .invalid: throw RoomError(.tokenInvalid, "avatar claim: not a string")
        case .value(let value):
            if value.utf8.count > PeerAttributes.maxAvatarBytes {
                throw RoomError(
                    .tokenInvalid,
                    "avatar claim: \(value.utf8.count) bytes is over the limit of \(PeerAttributes.maxAvatarBytes)"
                )
            }
            avatar = value
        }
        var attributes: [String: String] = [:]
        switch claims.attributes {
        case .missing: break
        case .invalid: throw RoomError(.tokenInvalid, "attributes claim: not an object of string values")
        case .value(let values):
            do { try PeerAttributes.check(values, field: "attributes claim") } catch {
                throw RoomError(.tokenInvalid, error.message)
            }
            attributes = values
        }
        return (name, avatar, attributes)
    }

    /// A token for the REST API. A valid app token is 40300 (authenticated,
    /// but not allowed); anything else that is not a management token is 40100.
    func verifyManagement(_ token: String) throws(RoomError) {
        let real = now()
        let (claims, _) = try verifySigned(token, expiresAgainst: real, notBefore: real)
        if claims.type.value == "app" { throw RoomError(.permissionDenied, "an app token cannot use the REST API") }
        guard claims.type.value == "management", claims.version.value == 2 else {
            throw RoomError(.tokenInvalid, "not a management token")
        }
    }

    private func verifySigned(
        _ token: String,
        expiresAgainst current: Date,
        notBefore notBeforeNow: Date,
        expiredGrace: TimeInterval = 0
    ) throws(RoomError) -> (TokenClaims, expired: Bool) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty,
            parts.allSatisfy(isBase64URL)
        else {
            throw RoomError(.notAJWT, "token is not a JWT (three base64url parts)")
        }
        let header: JWTHeader
        let claims: TokenClaims
        let signature: Data
        do {
            (header, claims, signature) = try parser.parse(Array(token.utf8), as: TokenClaims.self)
        } catch {
            throw RoomError(.tokenInvalid, "token header or payload is not valid JSON")
        }
        guard header.alg == "HS256" else {
            throw RoomError(.badJWT, "token algorithm must be HS256")
        }
        let signed = Data(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        guard HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: signed, using: key) else {
            throw RoomError(.badJWT, "token signature does not verify")
        }
        guard let exp = claims.exp.value else {
            throw RoomError(.badJWT, "token exp claim missing or invalid")
        }
        var expired = false
        do { try exp.verifyNotExpired(currentDate: current) } catch {
            guard expiredGrace > 0, current.timeIntervalSince(exp.value) < expiredGrace else {
                throw RoomError(.badJWT, "token expired")
            }
            expired = true
        }
        if case .invalid = claims.nbf { throw RoomError(.badJWT, "token nbf claim invalid") }
        if let nbf = claims.nbf.value {
            do { try nbf.verifyNotBefore(currentDate: notBeforeNow) } catch {
                throw RoomError(.badJWT, "token not valid yet (nbf)")
            }
        }
        return (claims, expired)
    }

    /// A claim's date in ms since 1970, clamped (a far-future `exp` does not overflow).
    static func millis(_ date: Date) -> Int64 {
        let ms = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard ms.isFinite else { return ms > 0 ? Int64.max / 2 : 0 }
        return Int64(max(0, min(ms, Double(Int64.max / 2))))
    }

    /// A claim over its limit is 41300, as a param over its limit is.
    private static func checkSize(_ value: String, claim: String, limit: Int) throws(RoomError) {
        let size = value.utf8.count
        if size > limit {
            throw RoomError(.tooLarge, "\(claim) claim: \(size) bytes is over the limit of \(limit)")
        }
    }

    private func isBase64URL(_ part: Substring) -> Bool {
        part.utf8.count % 4 != 1
            && part.utf8.allSatisfy { byte in
                (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }
}

/// Server-made and client-chosen ids: `[A-Za-z0-9_-]{1,64}`.
