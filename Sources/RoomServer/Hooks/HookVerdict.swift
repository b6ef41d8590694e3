import RoomConfig
import RoomWire

/// What a hook's answer asks instead of the call's own values (PROTOCOL.md
/// section 30): `join`'s `name`, `role`, `attributes`; a message's `info` or
/// `shadow`; a question's `text`; a stage request's `note`. The dispatcher
/// checks each against the call's limits (over them: a failed hook).
struct HookRewrite: Sendable, Equatable {
    var name: String?
    var role: String?
    var attributes: [String: String]?
    var info: JSON?
    var shadow = false
    /// A question's `text` or a stage request's `note`.
    var text: String?

    static let none = HookRewrite()
}

/// A hook's word on one call, read off the service thread from its answer.
enum HookVerdict: Sendable, Equatable {
    /// `{"allow":true, …}`: go on, with what it rewrites.
    case allow(HookRewrite)
    /// `{"allow":false, "reason"}`: 40305 with the reason (cut to `maxReasonBytes`).
    case deny(reason: String)
    /// No usable answer: why, for the log line (never the body). `on_error` decides.
    case failed(String)

    /// The most of a `reason` kept, in bytes, cut at a character boundary.
    static let maxReasonBytes = 256
    /// The most of an answer's body read: a longer one is a failed hook, and is
    /// not read past this (the connection is closed instead).
    static let maxBodyBytes = 64 * 1024
    /// A denial without a `reason`.
    static let defaultReason = "refused by the app's hook"

    /// The verdict of an answer: `status`, and its `body` when read whole
    /// within `maxBodyBytes` and the deadline (nil otherwise).
    static func of(status: Int, body: [UInt8]?, event: HookSettings.Event) -> HookVerdict {
        guard status == 200 else { return .failed("HTTP \(status)") }
        guard let body else { return .failed("body over \(maxBodyBytes) bytes, or not ended in time") }
        guard let json = try? JSON.parse(body), case .object = json else {
            return .failed("body is not a JSON object")
        }
        guard let allow = json["allow"]?.boolValue else { return .failed("body has no boolean allow") }
        if !allow {
            switch json["reason"] {
            case nil, .null?: return .deny(reason: defaultReason)
            case .string(let reason)?: return .deny(reason: cut(reason, toBytes: maxReasonBytes))
            default: return .failed("reason is not a string")
            }
        }
        var rewrite = HookRewrite()
        do throws(HookAnswerError) {
            switch event {
            case .join:
                rewrite.name = try string(json, "name")
                rewrite.role = try string(json, "role")
                if let attributes = json["attributes"], !attributes.isNull {
                    guard let members = attributes.objectValue else { throw HookAnswerError("attributes") }
                    var values: [String: String] = [:]
                    for member in members {
                        guard let value = member.value.stringValue else { throw HookAnswerError("attributes") }
                        values[member.key] = value
                    }
                    rewrite.attributes = values
                }
            case .message:
                if let info = json["info"], !info.isNull {
                    guard case .object = info else { throw HookAnswerError("info") }
                    rewrite.info = info
                }
                if let shadow = json["shadow"], !shadow.isNull {
                    guard let value = shadow.boolValue else { throw HookAnswerError("shadow") }
                    rewrite.shadow = value
                }
            case .question:
                rewrite.text = try string(json, "text")
            case .stageRequest:
                rewrite.text = try string(json, "note")
            }
        } catch {
            return .failed("\(error.field): wrong type")
        }
        return .allow(rewrite)
    }

    private static func string(_ json: JSON, _ key: String) throws(HookAnswerError) -> String? {
        switch json[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw HookAnswerError(key)
        }
    }

    /// `text` cut to at most `limit` bytes of UTF-8, at a character (scalar) boundary.
    static func cut(_ text: String, toBytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var kept = 0
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let size = UTF8.width(scalar)
            if kept + size > limit { break }
            kept += size
            scalars.append(scalar)
        }
        return String(scalars)
    }
}

/// A field of a hook's answer with the wrong type.
struct HookAnswerError: Error {
    let field: String
    init(_ field: String) { self.field = field }
}
