import Foundation
import RoomTokens
import RoomWire

/// Checks a webhook request the way an app backend must before trusting it
/// (PROTOCOL.md section 17) and hands back the event: roomd's counterpart
/// of LiveKit's `WebhookReceiver`. The Python kit has the same as
/// `roomd.webhooks.verify`.
///
/// ```swift
/// switch WebhookVerifier.verify(body: body, headers: headers, secret: roomd.secret) {
/// case .valid(let event): #expect(event["type"] == "peer.join.success")
/// case .invalid(let reason): Issue.record("not roomd's: \(reason)")
/// }
/// ```
public enum WebhookVerifier {
    public enum Verification: Sendable, Equatable {
        /// The event, `{"version":"2.0","id","timestamp","type","data"}`.
        case valid(JSON)
        /// Why the request is not a fresh webhook signed with the secret.
        case invalid(String)

        /// The event, or nil when invalid.
        public var event: JSON? {
            if case .valid(let event) = self { return event }
            return nil
        }
    }

    /// - Parameters:
    ///   - body: the request body, the raw bytes.
    ///   - headers: the request headers (names in any case).
    ///   - secret: `ROOMD_WEBHOOK_SECRET` when the daemon has one, else its HS256 secret.
    ///   - maxAge: seconds the timestamp may be off the receiver's clock; nil: not checked.
    public static func verify(
        body: [UInt8],
        headers: [String: String],
        secret: [UInt8],
        now: Date = Date(),
        maxAge: TimeInterval? = 300
    ) -> Verification {
        func header(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
        if let problem = WebhookSignature.problem(
            body: body,
            timestamp: header("X-Roomd-Timestamp"),
            signature: header("X-Roomd-Signature"),
            secret: secret,
            now: now,
            maxAge: maxAge
        ) {
            return .invalid(problem)
        }
        guard let event = try? JSON.parse(body), event["type"]?.stringValue != nil, event["id"]?.stringValue != nil
        else {
            return .invalid("signed, but the body is not a webhook event {version, id, timestamp, type, data}")
        }
        return .valid(event)
    }
}
