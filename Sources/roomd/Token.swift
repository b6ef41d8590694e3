import ArgumentParser
import Foundation
import RoomServer
import RoomTokens

struct Token: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print a signed token (app token by default).")

    @Option(help: "Room id (app token).") var room: String?
    @Option(help: "User id (app token).") var user: String?
    @Option(help: "Role name (app token).") var role: String?
    @Option(help: "Display name claim.") var name: String?
    @Option(help: "avatar claim (a URL or any string of at most 512 bytes).") var avatar: String?
    @Option(name: .customLong("attribute"), help: "attributes claim entry key=value (repeatable, at most 16).")
    var attributes: [String] = []
    @Option(help: "Lifetime: 3600, 90s, 30m, 24h or 7d.") var ttl: String = "24h"
    @Option(help: "user_restrictions claim, e.g. view_and_polls_only.") var restrictions: String?
    @Option(help: "access_key claim.") var accessKey: String?
    @Flag(help: "A management token for the REST API.") var management = false
    @Option(
        help:
            "File holding the HS256 secret (else $ROOMD_SECRET_FILE, else $ROOMD_SECRET, else the dev secret of the roomd on --port)."
    )
    var secretFile: String?
    @Option(help: "Port of a local roomd started without a secret.") var port: Int = 7880

    func validate() throws {
        try validatePort(port, name: "--port", range: 1...65535)
        if !management { try validateIDs(room: room, user: user) }
        for entry in attributes where !entry.contains("=") {
            throw ValidationError("--attribute: expected key=value, got \(entry)")
        }
        if Self.parseTTL(ttl) == nil {
            throw ValidationError(
                "--ttl: expected a duration from 1s to 3650d like 3600, 90s, 30m, 24h or 7d, got \(ttl)"
            )
        }
    }

    func run() throws {
        let seconds = Self.parseTTL(ttl)!
        let secret = lookUpSecret(file: secretFile, port: port)
        if management {
            print(try TokenMinter(secret: secret).managementToken(ttl: seconds))
            return
        }
        guard let room, let user, let role else { fail("an app token needs --room, --user and --role") }
        print(
            try TokenMinter(secret: secret).appToken(
                room: room,
                user: user,
                role: role,
                name: name,
                avatar: avatar,
                attributes: attributes.isEmpty ? nil : Self.attributeClaim(attributes),
                ttl: seconds,
                restrictions: restrictions,
                accessKey: accessKey
            )
        )
    }

    /// `--attribute key=value` entries as the claim (the last of a repeated key wins).
    static func attributeClaim(_ entries: [String]) -> [String: String] {
        var claim: [String: String] = [:]
        for entry in entries {
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            claim[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return claim
    }

    /// Longest token lifetime: ten years (a longer one is a typo, and an
    /// `exp` must stay an integer).
    static let maxTTL: TimeInterval = 3650 * 86400

    static func parseTTL(_ text: String) -> TimeInterval? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        var seconds: Double?
        if let last = text.last, let unit = units[last], let value = Double(text.dropLast()) {
            seconds = value * unit
        } else if let value = Double(text) {
            seconds = value
        }
        guard let seconds, seconds.isFinite, seconds >= 1, seconds <= maxTTL else { return nil }
        return seconds
    }
}

/// The secret for minting: `--secret-file`, else `$ROOMD_SECRET_FILE`, else
/// `$ROOMD_SECRET`, else the dev secret of the roomd on `port` (exit 2 when
/// there is none).
func lookUpSecret(file: String?, port: Int) -> [UInt8] {
    lookUpSecretAndSource(file: file, port: port).secret
}

/// The secret as ``lookUpSecret(file:port:)`` finds it, and where it came
/// from in words (`--secret-file /x`, `$ROOMD_SECRET_FILE /x`,
/// `$ROOMD_SECRET`, `the dev secret of port 7880 (/run/user/0/roomd/dev-7880.secret)`),
/// for an error that must say which secret a token was signed with.
func lookUpSecretAndSource(
    file: String?,
    port: Int,
    environment: [String: String] = ProcessInfo.processInfo.environment
) -> (secret: [UInt8], source: String) {
    let fromEnvironment = environment["ROOMD_SECRET_FILE"].flatMap { $0.isEmpty ? nil : $0 }
    let chosen = file ?? fromEnvironment
    do {
        if let configured = try Secrets.load(file: chosen, environment: environment) {
            let source =
                if let file { "--secret-file \(file)" } else if let fromEnvironment {
                    "$ROOMD_SECRET_FILE \(fromEnvironment)"
                } else { "$ROOMD_SECRET" }
            return (configured, source)
        }
    } catch {
        fail("\(error)")
    }
    let devPath = Secrets.devSecretPath(port: port)
    if let dev = try? Secrets.load(file: devPath, environment: [:]) {
        return (dev, "the dev secret of port \(port) (\(devPath))")
    }
    fail(
        "no secret: pass --secret-file, set ROOMD_SECRET_FILE or ROOMD_SECRET, or start roomd on 127.0.0.1:\(port) without one first"
    )
}

/// A usage error for ids that `join` would refuse (40102 / 40107 / 41300).
func validateIDs(room: String?, user: String?) throws {
    if let room, !TokenMinter.isValidRoomID(room) {
        throw ValidationError(
            "--room: \"\(room)\" is not a room id join accepts: 1 to 64 characters from A-Z, a-z, 0-9, _ and -"
        )
    }
    if let user, !TokenMinter.isValidUserID(user) {
        throw ValidationError(
            "--user: must be 1 to \(TokenMinter.maxUserIDBytes) bytes, got \(user.utf8.count)"
        )
    }
}
