import Testing

@testable import RoomConfig

/// `settings.polls` and the session-store limits are validated like every setting (PATH: PROBLEM).
@Suite struct AudienceSettingsTests {
    func failure(_ settings: String) -> String? {
        do {
            _ = try RoleTemplate.decode(Array(#"{"roles":{"host":{}},"settings":\#(settings)}"#.utf8))
            return nil
        } catch {
            return error.description
        }
    }

    @Test func defaultsAndValues() throws {
        #expect(Settings().polls == PollSettings(maxPolls: 100, statsIntervalMs: 1000))
        #expect(Settings().limits.maxSessionValueBytes == 4096)
        #expect(Settings().limits.maxSessionKeys == 256)
        let json =
            #"{"roles":{"host":{}},"settings":{"polls":{"max_polls":5,"stats_interval_ms":250},"limits":{"max_session_value_bytes":10,"max_session_keys":3}}}"#
        let (template, warnings) = try RoleTemplate.decode(Array(json.utf8))
        #expect(warnings.isEmpty)
        #expect(template.settings.polls == PollSettings(maxPolls: 5, statsIntervalMs: 250))
        #expect(template.settings.limits.maxSessionValueBytes == 10)
        #expect(template.settings.limits.maxSessionKeys == 3)
    }

    @Test(arguments: [
        (#"{"polls":{"max_polls":0}}"#, "settings.polls.max_polls: must be between 1 and 10000, got 0"),
        (
            #"{"polls":{"stats_interval_ms":50}}"#,
            "settings.polls.stats_interval_ms: must be between 100 and 60000, got 50"
        ),
        (#"{"polls":{"stats_interval_ms":"1s"}}"#, "settings.polls.stats_interval_ms: expected integer, got string"),
        (#"{"polls":[]}"#, "settings.polls: expected object, got array"),
        (
            #"{"limits":{"max_session_value_bytes":0}}"#,
            "settings.limits.max_session_value_bytes: must be at least 1, got 0"
        ),
        (#"{"limits":{"max_session_keys":-1}}"#, "settings.limits.max_session_keys: must be at least 1, got -1"),
    ])
    func rejects(_ settings: String, _ expected: String) {
        #expect(failure(settings) == expected)
    }

    @Test func unknownPollKeysAreWarnings() throws {
        let json = #"{"roles":{"host":{}},"settings":{"polls":{"max_poll":5}}}"#
        #expect(
            try RoleTemplate.decode(Array(json.utf8)).warnings
                == ["settings.polls.max_poll: unknown key ignored, did you mean max_polls?"]
        )
    }
}
