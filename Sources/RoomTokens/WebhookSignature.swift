import Crypto
import Foundation

/// roomd's webhook signature (PROTOCOL.md section 17), for an app backend
/// that receives the webhooks: `X-Roomd-Signature: sha256=<hex
/// HMAC-SHA256(secret, X-Roomd-Timestamp + "." + body)>`, where the secret
/// is `ROOMD_WEBHOOK_SECRET` when the daemon has one, else its HS256 secret.
public enum WebhookSignature {
    /// The `X-Roomd-Signature` value roomd sends for `body` at `timestamp` (ms, as the header has it).
    public static func sign(body: [UInt8], timestamp: String, secret: [UInt8]) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Array(timestamp.utf8) + [UInt8(ascii: ".")] + body,
            using: SymmetricKey(data: secret)
        )
        return "sha256=" + mac.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// Why a request is not a fresh webhook signed with `secret`, or nil when it is.
    ///
    /// - Parameters:
    ///   - timestamp: the `X-Roomd-Timestamp` header (nil: absent).
    ///   - signature: the `X-Roomd-Signature` header (nil: absent).
    ///   - now: the receiver's clock.
    ///   - maxAge: how far the timestamp may be from `now`, in seconds (replays);
    ///     nil: not checked (a daemon on test mode's manual clock signs with its time).
    public static func problem(
        body: [UInt8],
        timestamp: String?,
        signature: String?,
        secret: [UInt8],
        now: Date = Date(),
        maxAge: TimeInterval? = 300
    ) -> String? {
        guard let timestamp else { return "no X-Roomd-Timestamp header" }
        guard let millis = Int64(timestamp), millis >= 0, timestamp.allSatisfy(\.isASCII) else {
            return "X-Roomd-Timestamp is not a time in milliseconds: \(timestamp.prefix(40))"
        }
        guard let signature else { return "no X-Roomd-Signature header" }
        guard signature.hasPrefix("sha256=") else {
            return "X-Roomd-Signature does not start with sha256=: \(signature.prefix(40))"
        }
        if !constantTimeEqual(signature, sign(body: body, timestamp: timestamp, secret: secret)) {
            if secret.last == UInt8(ascii: "\n"),
                constantTimeEqual(signature, sign(body: body, timestamp: timestamp, secret: Array(secret.dropLast())))
            {
                return "the signature matches the secret without its trailing newline: strip it "
                    + "(roomd ignores one trailing newline of a secret file)"
            }
            return "the signature does not match: another secret (ROOMD_WEBHOOK_SECRET, else the daemon's), "
                + "or the body was changed (verify the raw bytes, before any JSON parsing)"
        }
        if let maxAge {
            let age = now.timeIntervalSince1970 - Double(millis) / 1000
            if abs(age) > maxAge {
                return "stale: X-Roomd-Timestamp is \(Int(abs(age).rounded())) s "
                    + (age > 0 ? "old" : "ahead") + ", more than \(Int(maxAge)) s (a replay?)"
            }
        }
        return nil
    }

    private static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}
