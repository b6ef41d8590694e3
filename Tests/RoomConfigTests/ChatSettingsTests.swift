import Testing

@testable import RoomConfig

/// `settings.chat` and the `moderateChat` permission (1.2, PROTOCOL.md section 19).
@Suite struct ChatSettingsTests {
    private func decode(_ json: String, strict: Bool = false) throws(TemplateError) -> RoleTemplate {
        try RoleTemplate.decode(Array(json.utf8), strict: strict).template
    }

    @Test func historySizeDefaultsTo200AndIsBounded() throws {
        #expect(try decode(#"{"roles":{"host":{}}}"#).settings.chat.historySize == 200)
        for size in [0, 1, 10000] {
            let template = try decode(#"{"roles":{"host":{}},"settings":{"chat":{"history_size":\#(size)}}}"#)
            #expect(template.settings.chat.historySize == size)
        }
        for bad in ["-1", "10001", "1.5", "\"200\""] {
            let error = try #require(throws: TemplateError.self) {
                try decode(#"{"roles":{"host":{}},"settings":{"chat":{"history_size":\#(bad)}}}"#)
            }
            #expect(error.description.contains("settings.chat.history_size"), "\(bad): \(error)")
        }
    }

    @Test func moderateChatIsAPermissionWithADidYouMeanUnderStrict() throws {
        let template = try decode(#"{"roles":{"host":{"permissions":{"moderateChat":true}},"guest":{}}}"#)
        #expect(template.role("host")?.permissions.moderateChat == true)
        #expect(template.role("guest")?.permissions.moderateChat == false, "absent is false")
        #expect(Permissions.names.contains("moderateChat"))
        let error = try #require(throws: TemplateError.self) {
            try decode(#"{"roles":{"host":{"permissions":{"moderatechat":true}}}}"#, strict: true)
        }
        #expect(error.description.contains("did you mean moderateChat?"), "\(error)")
        let unknownKey = try #require(throws: TemplateError.self) {
            try decode(#"{"roles":{"host":{}},"settings":{"chat":{"histroy_size":5}}}"#, strict: true)
        }
        #expect(unknownKey.description.contains("did you mean history_size?"), "\(unknownKey)")
    }

    @Test func qaSettingsHaveTheirDefaultsAndRanges() throws {
        let defaults = try decode(#"{"roles":{"host":{}}}"#).settings.qa
        #expect(defaults.maxQuestions == 500 && defaults.intervalMs == 1000)
        let set = try decode(#"{"roles":{"host":{}},"settings":{"qa":{"max_questions":1,"interval_ms":100}}}"#)
        #expect(set.settings.qa == QASettings(maxQuestions: 1, intervalMs: 100))
        for (key, bad) in [
            ("max_questions", "0"), ("max_questions", "10001"), ("interval_ms", "99"), ("interval_ms", "60001"),
        ] {
            let error = try #require(throws: TemplateError.self) {
                try decode(#"{"roles":{"host":{}},"settings":{"qa":{"\#(key)":\#(bad)}}}"#)
            }
            #expect(error.description.contains("settings.qa.\(key)"), "\(key) \(bad): \(error)")
        }
    }
}
