import Foundation
import JWTKit

/// A claim as found in a token: absent, present with the wrong type, or a value.
enum Claim<Value: Decodable & Sendable>: Sendable {
    case missing
    case invalid
    case value(Value)

    var value: Value? { if case .value(let v) = self { v } else { nil } }
}

/// Every claim roomd reads, decoded leniently so that each defect maps to
/// its own protocol code instead of one generic decoding failure.
struct TokenClaims: JWTPayload {
    var type: Claim<String> = .missing
    var version: Claim<Int> = .missing
    var roomID: Claim<String> = .missing
    var userID: Claim<String> = .missing
    var role: Claim<String> = .missing
    var name: Claim<String> = .missing
    var avatar: Claim<String> = .missing
    var attributes: Claim<[String: String]> = .missing
    var accessKey: Claim<String> = .missing
    var userRestrictions: Claim<String> = .missing
    var exp: Claim<ExpirationClaim> = .missing
    var nbf: Claim<NotBeforeClaim> = .missing

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        func claim<T: Decodable>(_ key: String) -> Claim<T> {
            let key = Key(key)
            guard container.contains(key), (try? container.decodeNil(forKey: key)) != true else { return .missing }
            guard let value = try? container.decode(T.self, forKey: key) else { return .invalid }
            return .value(value)
        }
        type = claim("type")
        version = claim("version")
        roomID = claim("room_id")
        userID = claim("user_id")
        role = claim("role")
        name = claim("name")
        avatar = claim("avatar")
        attributes = claim("attributes")
        accessKey = claim("access_key")
        userRestrictions = claim("user_restrictions")
        exp = claim("exp")
        nbf = claim("nbf")
    }

    func encode(to encoder: any Encoder) throws {}

    /// Verification is done synchronously by `TokenVerifier`.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
