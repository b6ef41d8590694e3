import Foundation
import RoomClient
import RoomWire
import RoomdTesting
import Testing

/// The kits' webhook verifiers against real deliveries (issue 25, item 6):
/// RoomdTesting's `WebhookVerifier` and `roomd webhooks verify` accept what
/// roomd signed and say why they refuse anything else.
@Suite struct WebhookVerifierTests {
    /// One real delivery: the raw body and headers as the receiver got them.
    func delivery() async throws -> (daemon: Daemon, body: [UInt8], headers: [String: String]) {
        let receiver = try WebhookReceiver()
        let daemon = try await Daemon.start(webhooksTo: receiver.url)
        _ = try await daemon.join("ada", as: "host", room: "show", name: "Ada")
        let requests = try await receiver.wait { $0.contains { $0["event"]?["type"] == "peer.join.success" } }
        let request = try #require(requests.first { $0["event"]?["type"] == "peer.join.success" })
        let body = Array(try #require(request["raw_body"]?.stringValue).utf8)
        let headers = [
            "x-roomd-timestamp": try #require(request["timestamp_header"]?.stringValue),
            "X-Roomd-Signature": try #require(request["signature_header"]?.stringValue),
        ]
        return (daemon, body, headers)
    }

    @Test func theSwiftVerifierGivesTheEventOrAReason() async throws {
        let (daemon, body, headers) = try await delivery()
        let event = try #require(WebhookVerifier.verify(body: body, headers: headers, secret: daemon.secret).event)
        #expect(event["type"] == "peer.join.success" && event["data"]?["room_id"] == "show")

        #expect(
            WebhookVerifier.verify(body: body + [0x20], headers: headers, secret: daemon.secret)
                == .invalid(
                    "the signature does not match: another secret (ROOMD_WEBHOOK_SECRET, else the daemon's), "
                        + "or the body was changed (verify the raw bytes, before any JSON parsing)"
                )
        )
        let withNewline = WebhookVerifier.verify(body: body, headers: headers, secret: daemon.secret + [0x0A])
        #expect(withNewline.event == nil)
        #expect(
            "\(withNewline)".contains("matches the secret without its trailing newline"),
            "a secret read from a file with its newline says so"
        )
        let sent = try #require(Double(headers["x-roomd-timestamp"] ?? ""))
        let later = Date(timeIntervalSince1970: sent / 1000 + 600)  // exactly 10 minutes after it was sent
        guard
            case .invalid(let stale) = WebhookVerifier.verify(
                body: body,
                headers: headers,
                secret: daemon.secret,
                now: later
            )
        else {
            Issue.record("a 10-minute-old delivery passed")
            return
        }
        #expect(stale.hasPrefix("stale: X-Roomd-Timestamp is 600 s old, more than 300 s"), "\(stale)")
        #expect(
            WebhookVerifier.verify(body: body, headers: headers, secret: daemon.secret, now: later, maxAge: nil).event
                != nil
        )
        #expect(
            WebhookVerifier.verify(body: body, headers: [:], secret: daemon.secret)
                == .invalid("no X-Roomd-Timestamp header")
        )
    }

    @Test func roomdWebhooksVerifyReadsABodyAndHeadersFile() async throws {
        let (daemon, body, headers) = try await delivery()
        let directory = daemon.directory
        let bodyFile = directory.appendingPathComponent("body.json")
        let headersFile = directory.appendingPathComponent("headers.txt")
        try Data(body).write(to: bodyFile)
        let head =
            "POST /hooks HTTP/1.1\r\nContent-Type: application/json\r\n"
            + headers.map { "\($0.key): \($0.value)\r\n" }.joined()
        try head.write(to: headersFile, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "ROOMD_WEBHOOK_SECRET")
        environment.removeValue(forKey: "ROOMD_SECRET")
        environment["ROOMD_SECRET_FILE"] = directory.appendingPathComponent("secret").path
        let arguments = ["webhooks", "verify", "--body", bodyFile.path, "--headers", headersFile.path]

        let valid = try await runCommand(Daemon.binary, arguments, environment: environment)
        #expect(
            valid.status == 0 && valid.out.hasPrefix("valid: peer.join.success id ")
                && valid.out.hasSuffix(" room show\n")
        )
        let json = try await runCommand(Daemon.binary, arguments + ["--json"], environment: environment)
        #expect(json.out == String(decoding: body, as: UTF8.self) + "\n")

        try Data(body + Array(" ".utf8)).write(to: bodyFile)
        let tampered = try await runCommand(Daemon.binary, arguments, environment: environment)
        #expect(tampered.status == 1 && tampered.out.hasPrefix("invalid: the signature does not match"), "\(tampered)")
        try Data(body).write(to: bodyFile)

        environment["ROOMD_WEBHOOK_SECRET"] = String(repeating: "z", count: 40)
        let otherSecret = try await runCommand(Daemon.binary, arguments, environment: environment)
        #expect(otherSecret.status == 1, "ROOMD_WEBHOOK_SECRET is the signing secret when set")
        let usage = try await runCommand(
            Daemon.binary,
            ["webhooks", "verify", "--body", bodyFile.path],
            environment: environment
        )
        #expect(usage.status == 64 && usage.err.contains("pass --headers FILE, or --timestamp and --signature"))
    }
}
