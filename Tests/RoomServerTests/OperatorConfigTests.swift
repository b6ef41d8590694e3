import Foundation
import Testing

/// `settings.hls` and `settings.webhooks` as an operator meets them: a bad
/// value stops roomd before it listens, exit 2, one `PATH: PROBLEM` line.
@Suite struct OperatorConfigTests {
    static func run(_ settings: String, checkOnly: Bool) throws -> (status: Int32, out: String, err: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "roomd-config-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("roles.json")
        let text = try Daemon.mergeSettings(String(contentsOfFile: Daemon.shippedConfig, encoding: .utf8), settings)
        try text.write(to: config, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "ROOMD_SECRET")
        let arguments = checkOnly ? ["check-config", config.path] : ["--config", config.path, "--port", "0"]
        return try runCommand(Daemon.binary, arguments, environment: environment)
    }

    @Test func aWebhookURLThatDoesNotParseStopsTheDaemon() throws {
        let serve = try Self.run(#"{"webhooks":{"url":"htp:/backend"}}"#, checkOnly: false)
        #expect(serve.status == 2)
        #expect(
            serve.err.split(separator: "\n").contains(
                #"settings.webhooks.url: expected an http(s) URL of at most 2048 bytes, got "htp:/backend""#
            )
        )
        #expect(serve.out.isEmpty, "it never listened")
        let check = try Self.run(#"{"webhooks":{"url":"http://backend/","events":["peer.join"]}}"#, checkOnly: true)
        #expect(check.status == 2)
        #expect(check.err.contains(#"settings.webhooks.events[0]: unknown event "peer.join""#))
        let hls = try Self.run(#"{"hls":{"playlist_url":"no slash"}}"#, checkOnly: true)
        #expect(hls.status == 2)
        #expect(hls.err.contains("settings.hls.playlist_url: "))
        #expect(
            try Self.run(#"{"webhooks":{"url":"http://127.0.0.1:9/hooks"},"hls":{"max_live_cues":5}}"#, checkOnly: true)
                .status == 0
        )
    }
}
