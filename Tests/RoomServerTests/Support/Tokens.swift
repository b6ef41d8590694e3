import Crypto
import Foundation
import RoomTokens

/// Hand-made JWTs for the token defect tests (what TokenMinter would never make).
enum Tokens {
    static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Signs `claims` (a JSON object text) with HS256 under `header` (JSON text).
    static func make(
        claims: String,
        secret: [UInt8],
        header: String = #"{"alg":"HS256","typ":"JWT"}"#,
        signature: String? = nil
    ) -> String {
        let signingInput = base64URL(Array(header.utf8)) + "." + base64URL(Array(claims.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Array(signingInput.utf8), using: SymmetricKey(data: secret))
        return signingInput + "." + (signature ?? base64URL(Array(mac)))
    }

    /// App-token claims with every field valid, then `overrides` applied
    /// (a value of nil removes the claim).
    static func appClaims(_ overrides: [String: Any?] = [:]) -> String {
        let now = Int(Date().timeIntervalSince1970)
        var claims: [String: Any] = [
            "room_id": "room-1", "user_id": "u-1", "role": "host", "type": "app", "version": 2,
            "iat": now, "nbf": now - 5, "exp": now + 3600, "jti": UUID().uuidString,
        ]
        for (key, value) in overrides {
            if let value { claims[key] = value } else { claims.removeValue(forKey: key) }
        }
        return String(
            decoding: try! JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]),
            as: UTF8.self
        )
    }
}
