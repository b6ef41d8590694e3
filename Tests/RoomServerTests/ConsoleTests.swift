import Foundation
import RoomWire
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Section 32: the console at /admin/ — files every node serves with the
/// same security headers and no token, the data behind them only with a
/// management token, and `settings.admin.enabled: false`. (The console
/// itself runs in Chromium in clients/browser/test_console.py.)
@Suite struct ConsoleTests {
    private static let files = [
        "/admin/": "text/html; charset=utf-8",
        "/admin/admin.css": "text/css; charset=utf-8",
        "/admin/admin.js": "text/javascript; charset=utf-8",
        "/admin/api.js": "text/javascript; charset=utf-8",
    ]

    /// GET without a token: the status, the headers asked for, the body.
    private func get(
        _ daemon: Daemon,
        _ path: String
    ) async throws -> (status: Int, headers: [String: String], body: Data) {
        let request = URLRequest(url: URL(string: "http://127.0.0.1:\(daemon.port)\(path)")!)
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for name in [
            "Content-Type", "Content-Security-Policy", "X-Frame-Options", "Referrer-Policy", "X-Content-Type-Options",
            "Cache-Control",
        ] {
            headers[name] = http.value(forHTTPHeaderField: name)
        }
        return (http.statusCode, headers, data)
    }

    @Test func everyNodeServesTheSameConsoleWithItsHeadersAndNoToken() async throws {
        let daemon = try await Daemon.start()
        let (peer, _) = try await daemon.join("host-1", as: "host")
        let nodes = daemon.nodes.isEmpty ? [daemon] : daemon.nodes
        let admin = try daemon.managementToken()
        var first: [String: Data] = [:]
        for node in nodes {
            for (path, type) in Self.files {
                let answer = try await get(node, path)
                #expect(answer.status == 200, "\(path) on :\(node.port)")
                #expect(answer.headers["Content-Type"] == type)
                #expect(answer.headers["Content-Security-Policy"] == "default-src 'self'")
                #expect(answer.headers["X-Frame-Options"] == "DENY")
                #expect(answer.headers["Referrer-Policy"] == "no-referrer")
                #expect(answer.headers["X-Content-Type-Options"] == "nosniff")
                #expect(answer.headers["Cache-Control"] == "no-cache")
                #expect(!answer.body.isEmpty)
                if let seen = first[path] { #expect(seen == answer.body, "\(path) differs between nodes") }
                first[path] = answer.body
            }
            // What the console reads: 401 without a token, the room with one, from whichever node.
            let none = try await http("GET", node, "/v2/active-rooms/room-1/peers")
            #expect(none.status == 401)
            #expect(none.body["code"] == 40100)
            let room = try await http("GET", node, "/v2/active-rooms/room-1", token: admin)
            #expect(room.status == 200)
            #expect(room.body["room"]?["peer_count"] == 1)
        }
        let missing = try await get(daemon, "/admin/secrets.js")
        #expect(missing.status == 404)
        withExtendedLifetime(peer) {}
    }

    @Test func settingsAdminEnabledFalseAnswers404() async throws {
        let daemon = try await Daemon.start(settings: #"{"admin":{"enabled":false}}"#)
        for path in Self.files.keys {
            let answer = try await get(daemon, path)
            #expect(answer.status == 404, "\(path)")
            #expect(String(decoding: answer.body, as: UTF8.self).contains("settings.admin.enabled"))
        }
        let admin = try daemon.managementToken()
        #expect(try await http("GET", daemon, "/v2/active-rooms", token: admin).status == 200)
    }
}
