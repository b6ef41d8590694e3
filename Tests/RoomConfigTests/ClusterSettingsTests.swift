import Testing

@testable import RoomConfig

/// `settings.cluster.nats_url` (section 18): what the template accepts.
@Suite struct ClusterSettingsTests {
    private func cluster(_ settings: String) throws(TemplateError) -> ClusterSettings {
        try RoleTemplate.decode(Array(#"{"roles":{"host":{}},"settings":\#(settings)}"#.utf8)).template.settings.cluster
    }

    @Test func absentOrEmptyIsNoCluster() throws {
        #expect(try cluster("{}").natsURL == nil)
        #expect(try cluster(#"{"cluster":{}}"#).natsURL == nil)
        #expect(try cluster(#"{"cluster":{"nats_url":""}}"#).natsURL == nil)
    }

    @Test(arguments: ["nats://127.0.0.1:4222", "nats://nats.internal:1", "nats://[::1]:65535", "nats://a-b.c:4222"])
    func acceptedURLs(url: String) throws {
        #expect(ClusterSettings.natsURLProblem(url) == nil)
        #expect(try cluster(#"{"cluster":{"nats_url":"\#(url)"}}"#).natsURL == url)
    }

    @Test(arguments: [
        "127.0.0.1:4222", "nats://", "nats://host", "nats://:4222", "nats://host:", "nats://host:0",
        "nats://host:65536", "nats://host:42a2", "nats://host:4222/path", "nats://u:p@host:4222",
        "nats://::1:4222", "nats://[]:4222", "tls://host:4222", "nats://host:+4222", "nats://hö st:4222",
    ])
    func refusedURLsNameThePath(url: String) {
        #expect(ClusterSettings.natsURLProblem(url) != nil, "\(url)")
        #expect(throws: TemplateError.self) { _ = try cluster(#"{"cluster":{"nats_url":"\#(url)"}}"#) }
        do {
            _ = try cluster(#"{"cluster":{"nats_url":"\#(url)"}}"#)
        } catch {
            #expect(error.description.hasPrefix("settings.cluster.nats_url: "), "\(error.description)")
        }
    }

    @Test func aNonStringOrNonObjectIsATypeError() {
        #expect(throws: TemplateError.self) { _ = try cluster(#"{"cluster":{"nats_url":4222}}"#) }
        #expect(throws: TemplateError.self) { _ = try cluster(#"{"cluster":"nats://h:1"}"#) }
    }
}
