import Foundation
import RoomWire

/// One answer of the audience feed (PROTOCOL.md section 24), read raw: the
/// status, the headers (names lower-cased) and the body as sent.
struct FeedAnswer {
    var status: Int
    var headers: [String: String]
    var body: String
    var json: JSON { (try? JSON.parse(Array(body.utf8))) ?? .null }
}

/// `GET path` on a fresh connection (the answer's own headers are what the
/// tests read: no client cache in between). `token` goes in `Authorization: Bearer`.
/// A GET keeps its connection (as a viewer's does), so roomd answers a feed
/// request itself (RequestHeads.swift); `close`: `Connection: close`, which
/// libwebsockets serves (FeedDirectTests compares the two).
func feedRequest(
    _ daemon: Daemon,
    _ path: String,
    token: String? = nil,
    headers: [String: String] = [:],
    method: String = "GET",
    close: Bool = false
) throws -> FeedAnswer {
    var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    if close || method != "GET" { head += "Connection: close\r\n" }
    if let token { head += "Authorization: Bearer \(token)\r\n" }
    for (name, value) in headers { head += "\(name): \(value)\r\n" }
    if method == "POST" { head += "Content-Length: 0\r\n" }
    let response: String
    if close || method != "GET" {
        response = try rawExchange(port: daemon.port, Array((head + "\r\n").utf8), timeout: 10).response
    } else {
        let connection = try RawHTTPConnection(port: daemon.port)
        connection.send(head + "\r\n")
        guard let answer = connection.exactAnswer(timeout: 10) else {
            throw DaemonError(description: "no HTTP answer to \(path) within 10 s")
        }
        response = answer.head + "\r\n\r\n" + String(decoding: answer.body, as: UTF8.self)
    }
    guard let split = response.range(of: "\r\n\r\n") else {
        throw DaemonError(description: "no HTTP answer to \(path): \(response.prefix(200))")
    }
    let lines = response[..<split.lowerBound].split(separator: "\r\n")
    let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
    var fields: [String: String] = [:]
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    return FeedAnswer(status: status, headers: fields, body: String(response[split.upperBound...]))
}

/// The feed of `room` over [from, to).
func feed(
    _ daemon: Daemon,
    room: String = "room-1",
    from: Int64,
    to: Int64,
    token: String?,
    ifNoneMatch: String? = nil
) throws -> FeedAnswer {
    try feedRequest(
        daemon,
        "/v2/rooms/\(room)/feed?from=\(from)&to=\(to)",
        token: token,
        headers: ifNoneMatch.map { ["If-None-Match": $0] } ?? [:]
    )
}
