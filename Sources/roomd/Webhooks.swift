import ArgumentParser
import Foundation
import RoomTokens
import RoomWire

/// `roomd webhooks verify`: is this request a webhook roomd signed? (PROTOCOL.md section 17.)
struct Webhooks: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Webhooks as a backend receives them.",
        subcommands: [Verify.self]
    )

    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a webhook request's signature and age; print the event, or why not (exit 1).",
            discussion: """
                The body is checked as raw bytes (a file, or - for stdin). The headers come from a file of \
                `Name: value` lines (a captured request head works: other lines are skipped), or from \
                --timestamp and --signature. Or --record FILE takes all three from the last line of a \
                receiver's log (scripts/webhook-receiver.py's JSON lines: raw_body, timestamp_header, \
                signature_header). The secret is --secret-file, else $ROOMD_WEBHOOK_SECRET (the daemon signs \
                with it when set), else $ROOMD_SECRET_FILE, else $ROOMD_SECRET, else the dev secret of port \
                7880; a refusal names the one it used. One trailing newline of a secret file is ignored, as \
                roomd does.
                """
        )
        @Option(help: "The request body: a file, or - for stdin.") var body: String?
        @Option(help: "A receiver's log (one JSON object a line; the last line is checked), or - for stdin.")
        var record: String?
        @Option(help: "A file of the request's headers (`Name: value` lines).") var headers: String?
        @Option(help: "The X-Roomd-Timestamp header.") var timestamp: String?
        @Option(help: "The X-Roomd-Signature header.") var signature: String?
        @Option(help: "File holding the signing secret.") var secretFile: String?
        @Option(help: "Seconds the timestamp may be off this machine's clock (0: not checked).") var maxAge: Int = 300
        @Flag(help: "Print the event as JSON (one line).") var json = false

        func validate() throws {
            if record != nil {
                if body != nil || headers != nil || timestamp != nil || signature != nil {
                    throw ValidationError("--record carries the body and headers: pass it alone")
                }
            } else if body == nil {
                throw ValidationError(
                    "pass --body FILE (with --headers FILE, or --timestamp and --signature), or --record FILE"
                )
            } else if headers == nil && (timestamp == nil || signature == nil) {
                throw ValidationError("pass --headers FILE, or --timestamp and --signature")
            }
            if maxAge < 0 { throw ValidationError("--max-age: must be 0 or more, got \(maxAge)") }
        }

        /// The bytes of `path`, or of stdin for "-".
        private func contents(_ path: String, _ option: String) -> [UInt8] {
            if path == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
            guard let data = FileManager.default.contents(atPath: path) else { fail("\(option): cannot read \(path)") }
            return Array(data)
        }

        /// Body, timestamp and signature from the last line of a receiver's log.
        private func fromRecord(_ path: String) -> (body: [UInt8], timestamp: String, signature: String) {
            let lines = String(decoding: contents(path, "--record"), as: UTF8.self).split(whereSeparator: \.isNewline)
            guard let last = lines.last(where: { !$0.allSatisfy(\.isWhitespace) }) else {
                fail("--record: \(path) is empty")
            }
            guard let line = try? JSON.parse(Array(last.utf8)),
                let body = line["raw_body"]?.stringValue,
                let timestamp = line["timestamp_header"]?.stringValue,
                let signature = line["signature_header"]?.stringValue
            else {
                fail(
                    "--record: the last line is not a JSON object with raw_body, timestamp_header and signature_header"
                )
            }
            return (Array(body.utf8), timestamp, signature)
        }

        func run() throws {
            let bodyBytes: [UInt8]
            var timestamp = self.timestamp
            var signature = self.signature
            if let record {
                let logged = fromRecord(record)
                (bodyBytes, timestamp, signature) = (logged.body, logged.timestamp, logged.signature)
            } else {
                bodyBytes = contents(body ?? "-", "--body")
            }
            if let headers {
                guard let data = FileManager.default.contents(atPath: headers) else {
                    fail("--headers: cannot read \(headers)")
                }
                for line in String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline) {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
                    let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    if name == "x-roomd-timestamp", timestamp == nil { timestamp = value }
                    if name == "x-roomd-signature", signature == nil { signature = value }
                }
            }
            let environment = ProcessInfo.processInfo.environment
            let (secret, source): ([UInt8], String)
            if secretFile == nil, let webhookSecret = environment["ROOMD_WEBHOOK_SECRET"], !webhookSecret.isEmpty {
                (secret, source) = (Array(webhookSecret.utf8), "$ROOMD_WEBHOOK_SECRET")
            } else {
                (secret, source) = lookUpSecretAndSource(file: secretFile, port: 7880)
            }
            if let problem = WebhookSignature.problem(
                body: bodyBytes,
                timestamp: timestamp,
                signature: signature,
                secret: secret,
                maxAge: maxAge == 0 ? nil : TimeInterval(maxAge)
            ) {
                print("invalid: \(problem) (checked with the secret of \(source))")
                throw ExitCode(1)
            }
            guard let event = try? JSON.parse(bodyBytes), let type = event["type"]?.stringValue else {
                print("invalid: signed, but the body is not a webhook event {version, id, timestamp, type, data}")
                throw ExitCode(1)
            }
            if json {
                print(event.text)
            } else {
                let room = event["data"]?["room_id"]?.stringValue.map { " room \($0)" } ?? ""
                print("valid: \(type) id \(event["id"]?.stringValue ?? "?")\(room)")
            }
        }
    }
}
