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
        // A refusal names the secret it checked with (issue 38: it used to say only "does not match").
        #expect(
            tampered.out.hasSuffix(
                "(checked with the secret of $ROOMD_SECRET_FILE \(environment["ROOMD_SECRET_FILE"]!))\n"
            ),
            "\(tampered)"
        )
        try Data(body).write(to: bodyFile)

        // A receiver's log line (scripts/webhook-receiver.py's) carries the body and both headers; the last line counts.
        let logged: JSON = [
            "raw_body": .string(String(decoding: body, as: UTF8.self)),
            "timestamp_header": .string(headers["x-roomd-timestamp"]!),
            "signature_header": .string(headers["X-Roomd-Signature"]!),
        ]
        let log = directory.appendingPathComponent("hooks.jsonl")
        try (#"{"raw_body":"{}","timestamp_header":"1","signature_header":"sha256=00"}"# + "\n" + logged.text + "\n")
            .write(to: log, atomically: true, encoding: .utf8)
        let fromLog = try await runCommand(
            Daemon.binary,
            ["webhooks", "verify", "--record", log.path],
            environment: environment
        )
        #expect(fromLog.status == 0 && fromLog.out.hasPrefix("valid: peer.join.success id "), "\(fromLog)")
        let both = try await runCommand(
            Daemon.binary,
            ["webhooks", "verify", "--record", log.path, "--body", bodyFile.path],
            environment: environment
        )
        #expect(both.status == 64 && both.err.contains("--record carries the body and headers"), "\(both)")

        environment["ROOMD_WEBHOOK_SECRET"] = String(repeating: "z", count: 40)
        let otherSecret = try await runCommand(Daemon.binary, arguments, environment: environment)
        #expect(otherSecret.status == 1, "ROOMD_WEBHOOK_SECRET is the signing secret when set")
        #expect(otherSecret.out.hasSuffix("(checked with the secret of $ROOMD_WEBHOOK_SECRET)\n"), "\(otherSecret)")
        let usage = try await runCommand(
            Daemon.binary,
            ["webhooks", "verify", "--body", bodyFile.path],
            environment: environment
        )
        #expect(usage.status == 64 && usage.err.contains("pass --headers FILE, or --timestamp and --signature"))
    }

    /// The example webhooks config README's "watch webhooks" recipe serves
    /// with (issue 38: the recipe named a file that did not exist): the
    /// shipped roles, plus `settings.webhooks` pointing at the receiver's
    /// `--port 8088`; `check-config` takes it.
    @Test func theExampleWebhooksConfigIsTheShippedRolesWithAReceiver() throws {
        let example = URL(fileURLWithPath: Daemon.shippedConfig).deletingLastPathComponent()
            .appendingPathComponent("roles-with-webhooks.json").path
        let run = try runCommand(Daemon.binary, ["check-config", example])
        #expect(run.status == 0, "\(run)")
        let config = try JSON.parse(Array(try Data(contentsOf: URL(fileURLWithPath: example))))
        let shipped = try JSON.parse(Array(try Data(contentsOf: URL(fileURLWithPath: Daemon.shippedConfig))))
        #expect(config["roles"] == shipped["roles"], "the example keeps the shipped roles")
        #expect(config["settings"]?["webhooks"]?["url"] == "http://127.0.0.1:8088/hooks")
    }
}
