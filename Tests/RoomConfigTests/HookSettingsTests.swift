import RoomConfig
import Testing

/// `settings.hooks` (1.3, PROTOCOL.md section 30): defaults, ranges, the URL, the events, `on_error`.
@Suite struct HookSettingsTests {
    private func decode(_ settings: String) throws(TemplateError) -> Settings {
        try RoleTemplate.decode(Array(#"{"roles":{"host":{}},"settings":\#(settings)}"#.utf8)).template.settings
    }

    private func failure(_ settings: String) -> String? {
        do {
            _ = try decode(settings)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func absentMeansNoHooksAndDefaultsFillTheRest() throws {
        #expect(try decode("{}").hooks == nil)
        let hooks = try #require(try decode(#"{"hooks":{"url":"https://backend.example.com/hook"}}"#).hooks)
        #expect(hooks.events == [.join, .message, .question, .stageRequest], "all four")
        #expect(hooks.timeoutMs == 1000 && hooks.onError == .allow)
    }

    @Test func everyValueIsRead() throws {
        let hooks = try decode(
            #"{"hooks":{"url":"http://127.0.0.1:9000/h","events":["stage-request","join","join"],"timeout_ms":50,"on_error":"deny"}}"#
        ).hooks
        #expect(
            hooks
                == HookSettings(
                    url: "http://127.0.0.1:9000/h",
                    events: [.stageRequest, .join],
                    timeoutMs: 50,
                    onError: .deny
                )
        )
        #expect(try decode(#"{"hooks":{"url":"http://h/","timeout_ms":5000}}"#).hooks?.timeoutMs == 5000)
    }

    @Test(arguments: [
        (#"{"hooks":{}}"#, "settings.hooks.url: required: the hook's http(s) URL"),
        (#"{"hooks":{"url":"ftp://x/"}}"#, #"settings.hooks.url: expected an http(s) URL of at most 2048 bytes"#),
        (#"{"hooks":{"url":"http://h/","timeout_ms":49}}"#, "settings.hooks.timeout_ms"),
        (#"{"hooks":{"url":"http://h/","timeout_ms":5001}}"#, "settings.hooks.timeout_ms"),
        (
            #"{"hooks":{"url":"http://h/","on_error":"ignore"}}"#,
            #"settings.hooks.on_error: expected "allow" or "deny", got "ignore""#
        ),
        (
            #"{"hooks":{"url":"http://h/","events":["join","leave"]}}"#,
            #"settings.hooks.events[1]: unknown event "leave", expected one of join, message, question, stage-request"#
        ),
    ])
    func badValuesNameTheField(settings: String, message: String) {
        let error = failure(settings)
        #expect(error?.contains(message) == true, "\(error ?? "accepted")")
    }
}
