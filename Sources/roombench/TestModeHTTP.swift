import Foundation
import RoomWire
import RoomdTesting

/// roomd's HTTP side as roombench needs it: test mode's routes (`/v2/test/*`,
/// a management token, PROTOCOL.md section 25) and one series of `/metrics`.
/// Through curl and RoomdTesting's `runTool` (Foundation's `Process` can fault
/// while this process holds thousands of sockets: ChildProcess.swift). The
/// token goes to curl on its stdin (`-H @-`), never on its command line.
struct TestModeHTTP {
    /// `http://HOST:PORT` of the roomd at `--url`.
    let base: String
    let token: String

    /// At most this many bytes of a route's answer are kept.
    static let maxAnswerBytes = 1 << 20

    init(endpoint: Endpoint, token: String) {
        base = "http://\(endpoint.host):\(endpoint.port)"
        self.token = token
    }

    /// `POST /v2/test/ROUTE` with a JSON body: the answer's JSON, or an error
    /// naming the route, the status and roomd's message.
    func post(_ route: String, body: String, timeout: Double) throws -> JSON {
        let run = try runTool(
            "/usr/bin/curl",
            [
                "-sS", "--max-time", String(Int(timeout.rounded(.up))), "-H", "@-",
                "-H", "Content-Type: application/json", "--data-binary", body,
                "-w", "\n%{http_code}", base + "/v2/test/" + route,
            ],
            input: Data("Authorization: Bearer \(token)\n".utf8),
            timeout: timeout + 5
        )
        var text = String(decoding: run.stdout.prefix(Self.maxAnswerBytes), as: UTF8.self)
        guard run.status == 0, let newline = text.lastIndex(of: "\n") else {
            let why = String(decoding: run.stderr.prefix(300), as: UTF8.self)
            throw BenchError("POST /v2/test/\(route): curl exited \(run.status) \(why)")
        }
        let status = text[text.index(after: newline)...]
        text = String(text[..<newline])
        guard status == "200", let json = try? JSON.parse(Array(text.utf8)) else {
            throw BenchError("POST /v2/test/\(route): \(status) \(text.prefix(300))")
        }
        return json
    }

    /// The value of the unlabelled series `name` in `GET /metrics` (no auth),
    /// or nil when roomd does not answer or has no such series.
    func metric(_ name: String) -> Double? {
        guard let run = try? runTool("/usr/bin/curl", ["-fsS", "--max-time", "5", base + "/metrics"], timeout: 10),
            run.status == 0
        else { return nil }
        let prefix = name + " "
        for line in String(decoding: run.stdout.prefix(4 << 20), as: UTF8.self).split(separator: "\n")
        where line.hasPrefix(prefix) {
            return Double(line.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
