import Testing

@testable import RoomConfig

/// `settings.chat.blocked_domains` and `settings.chat.hold` (1.3, PROTOCOL.md section 31).
@Suite struct ModerationIISettingsTests {
    private func decode(_ chat: String) throws(TemplateError) -> ChatSettings {
        let json = #"{"roles":{"host":{}},"settings":{"chat":\#(chat)}}"#
        return try RoleTemplate.decode(Array(json.utf8)).template.settings.chat
    }

    private func problem(_ chat: String) throws -> String {
        try #require(throws: TemplateError.self) { try decode(chat) }.description
    }

    @Test func domainsAreLowerCasedHostNamesAndHoldDefaultsToOff() throws {
        let defaults = try decode("{}")
        #expect(defaults.blockedDomains.isEmpty && defaults.hold == ChatSettings.HoldSettings() && !defaults.hold.isOn)
        let chat = try decode(
            #"{"blocked_domains":["Spam.Example","x-y.co.uk"],"hold":{"first_message":true,"links":true,"words":["Crypto"]}}"#
        )
        #expect(chat.blockedDomains == ["spam.example", "x-y.co.uk"])
        #expect(chat.hold == .init(firstMessage: true, links: true, words: ["crypto"]) && chat.hold.isOn)
    }

    @Test func badValuesNameThePath() throws {
        #expect(
            try problem(#"{"blocked_domains":["http://x.com"]}"#).contains(
                "settings.chat.blocked_domains[0]: must be a host name"
            )
        )
        #expect(try problem(#"{"blocked_domains":["-x.com"]}"#).contains("settings.chat.blocked_domains[0]"))
        #expect(try problem(#"{"blocked_domains":["a..b"]}"#).contains("settings.chat.blocked_domains[0]"))
        #expect(try problem(#"{"blocked_domains":["a.b","A.B"]}"#).contains("duplicate host \"a.b\""))
        #expect(try problem(#"{"hold":{"links":"yes"}}"#).contains("settings.chat.hold.links: expected boolean"))
        #expect(
            try problem(#"{"hold":{"words":["two words"]}}"#).contains("settings.chat.hold.words[0]: must be one word")
        )
        #expect(try problem(#"{"hold":[]}"#).contains("settings.chat.hold: expected object"))
    }
}
