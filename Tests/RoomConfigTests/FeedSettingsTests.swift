import Testing

@testable import RoomConfig

/// `settings.feed` (1.2, PROTOCOL.md section 24).
@Suite struct FeedSettingsTests {
    private func decode(_ feed: String, strict: Bool = false) throws(TemplateError) -> RoleTemplate {
        try RoleTemplate.decode(
            Array(#"{"roles":{"host":{}},"settings":{"feed":\#(feed)}}"#.utf8),
            strict: strict
        ).template
    }

    private func problems(_ feed: String) -> [String] {
        do {
            _ = try decode(feed)
            return []
        } catch {
            return error.all.map(\.description)
        }
    }

    @Test func defaultsAreFiveMinutesWithAToken() throws {
        let settings = try RoleTemplate.decode(Array(#"{"roles":{"host":{}}}"#.utf8)).template.settings
        #expect(settings.feed == FeedSettings(windowSeconds: 300, isPublic: false))
        #expect(
            try decode(#"{"window_s":10,"public":true}"#).settings.feed
                == FeedSettings(windowSeconds: 10, isPublic: true)
        )
        #expect(try decode(#"{"window_s":3600}"#).settings.feed.windowSeconds == 3600)
    }

    @Test func windowAndPublicAreCheckedNamingThePath() {
        #expect(problems(#"{"window_s":9}"#) == ["settings.feed.window_s: must be between 10 and 3600, got 9"])
        #expect(problems(#"{"window_s":3601}"#) == ["settings.feed.window_s: must be between 10 and 3600, got 3601"])
        #expect(problems(#"{"window_s":"300"}"#).first?.hasPrefix("settings.feed.window_s:") == true)
        #expect(problems(#"{"public":"yes"}"#).first?.hasPrefix("settings.feed.public:") == true)
        #expect(problems(#""feed""#).first?.hasPrefix("settings.feed:") == true)
    }

    /// Issue 34: the caps on bodies built, per room and per caller.
    @Test func buildCapsDefaultAndAreCheckedNamingThePath() throws {
        let feed = try decode("{}").settings.feed
        #expect(feed.buildsPerSecond == 20 && feed.callerBuildsPerSecond == 4)
        let set = try decode(#"{"builds_per_second":1,"caller_builds_per_second":10000}"#).settings.feed
        #expect(set.buildsPerSecond == 1 && set.callerBuildsPerSecond == 10000)
        #expect(
            problems(#"{"builds_per_second":0}"#) == [
                "settings.feed.builds_per_second: must be between 1 and 10000, got 0"
            ]
        )
        #expect(
            problems(#"{"caller_builds_per_second":10001}"#) == [
                "settings.feed.caller_builds_per_second: must be between 1 and 10000, got 10001"
            ]
        )
    }

    @Test func unknownKeysGetADidYouMeanUnderStrict() throws {
        let error = try #require(throws: TemplateError.self) { try decode(#"{"window":60}"#, strict: true) }
        #expect(error.description.contains("settings.feed.window: unknown key"), "\(error)")
        let typo = try #require(throws: TemplateError.self) { try decode(#"{"pubilc":true}"#, strict: true) }
        #expect(typo.description.contains("did you mean public?"), "\(typo)")
    }
}
