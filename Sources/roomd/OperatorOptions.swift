import ArgumentParser
import AsyncHTTPClient
import Dispatch
import Foundation
import NIOCore
import RoomTokens
import RoomWire
import Synchronization

/// The REST API's two verbs.
enum RestMethod {
    case get, post
}

/// What every operator subcommand (`rooms`, `peers`, `send`) takes: where
/// the daemon is, the secret to mint a management token with, and whether
/// to print the answer as JSON.
struct OperatorOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The daemon: http://HOST:PORT (a ws:// URL works too); else $ROOMD_URL, else http://127.0.0.1:7880.",
            valueName: "url"
        )
    )
    var url: String?
    @Option(
        help:
            "File holding the HS256 secret (else $ROOMD_SECRET_FILE, else $ROOMD_SECRET, else the dev secret of the port)."
    )
    var secretFile: String?
    @Flag(help: "Print the daemon's answer as JSON (one line), as the REST API gives it.") var json = false

    /// `http://HOST:PORT` from `--url`, `$ROOMD_URL` or the default.
    func baseURL(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String {
        let given = url ?? environment["ROOMD_URL"].flatMap { $0.isEmpty ? nil : $0 } ?? "http://127.0.0.1:7880"
        var rest: Substring
        if given.hasPrefix("http://") {
            rest = given.dropFirst(7)
        } else if given.hasPrefix("ws://") {
            rest = given.dropFirst(5)
        } else {
            throw ValidationError("--url / $ROOMD_URL: expected http://HOST:PORT or ws://HOST:PORT/ws, got \(given)")
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        guard !authority.isEmpty else { throw ValidationError("--url / $ROOMD_URL: no host in \(given)") }
        return "http://\(authority)"
    }

    /// One REST request with a fresh management token; the answer's JSON.
    /// A status other than 200 exits 1 with `roomd: STATUS CODE message`.
    func request(_ method: RestMethod, _ path: String, body: JSON? = nil) throws -> JSON {
        let base = try baseURL()
        let port = Int(base.split(separator: ":").last ?? "") ?? 80
        let (secret, source) = lookUpSecretAndSource(file: secretFile, port: port)
        let token = try TokenMinter(secret: secret).managementToken(ttl: 60)
        let answer = Mutex<Result<(UInt, JSON), any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<(UInt, JSON), any Error>
            do { result = .success(try await Self.send(method, base + path, token: token, body: body)) } catch {
                result = .failure(error)
            }
            answer.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        switch answer.withLock({ $0 })! {
        case .failure(let error):
            fail("cannot reach \(base): \(error)", code: 1)
        case .success(let (status, json)) where status == 200:
            return json
        case .success(let (status, json)):
            var line =
                "\(status) \(json["code"]?.intValue.map { "\($0) " } ?? "")\(json["message"]?.stringValue ?? json.text)"
            if status == 401 { line += " (the management token was signed with \(source))" }
            fail(line, code: 1)
        }
    }

    private static func send(
        _ method: RestMethod,
        _ url: String,
        token: String,
        body: JSON?
    ) async throws -> (
        UInt, JSON
    ) {
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        do {
            var request = HTTPClientRequest(url: url)
            request.method = method == .get ? .GET : .POST
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(string: body.text))
            }
            let response = try await client.execute(request, timeout: .seconds(30))
            let bytes = try await response.body.collect(upTo: 16 << 20)
            let text = String(buffer: bytes)
            let json = (try? JSON.parse(Array(bytes.readableBytesView))) ?? .string(text)
            try await client.shutdown()
            return (response.status.code, json)
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    /// The answer: as JSON with `--json`, else the lines `human` makes of it.
    func print(_ answer: JSON, human: (JSON) -> [String]) {
        if json {
            Swift.print(answer.text)
        } else {
            for line in human(answer) { Swift.print(line) }
        }
    }
}

/// A time the REST API gives in ms since 1970, for people: ISO 8601 in UTC to
/// the second (`2026-11-29T10:31:08Z`); `--json` keeps the number.
func readableTime(_ millis: Int) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.formatOptions = [.withInternetDateTime]
    let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000  // floored, never rounded up
    return formatter.string(from: Date(timeIntervalSince1970: Double(seconds)))
}

/// A time an operator types: ISO 8601 (`2026-11-29T10:00:00Z`, a fraction and
/// an offset allowed) or digits in `unit`s since 1970 (what the REST field
/// takes); in ms. `option` names the flag in the error.
func typedTime(_ text: String, option: String, unitMillis: Int64) throws -> Int64 {
    if !text.isEmpty, text.count <= 16, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber),
        let value = Int64(text), value <= Int64.max / unitMillis
    {
        return value * unitMillis
    }
    let formatter = ISO8601DateFormatter()
    for options: ISO8601DateFormatter.Options in [
        [.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds],
    ] {
        formatter.formatOptions = options
        if text.count <= 64, let date = formatter.date(from: text) {
            return Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        }
    }
    let unit = unitMillis == 1 ? "ms" : "seconds"
    throw ValidationError(
        "\(option): expected an ISO 8601 time (2026-11-29T10:00:00Z) or \(unit) since 1970, got \"\(text.prefix(80))\""
    )
}
