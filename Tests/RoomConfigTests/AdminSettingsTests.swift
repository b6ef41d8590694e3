import Testing

@testable import RoomConfig

/// `settings.admin` (1.3, PROTOCOL.md section 32): the console at /admin/.
@Suite struct AdminSettingsTests {
    private func decode(_ admin: String) throws(TemplateError) -> Settings {
        try RoleTemplate.decode(
            Array(#"{"roles":{"host":{}},"settings":{"admin":\#(admin)}}"#.utf8),
            strict: true
        ).template.settings
    }

    @Test func theConsoleIsOnUnlessTurnedOff() throws {
        let settings = try RoleTemplate.decode(Array(#"{"roles":{"host":{}}}"#.utf8)).template.settings
        #expect(settings.admin.enabled)
        #expect(try decode(#"{"enabled":false}"#).admin == AdminSettings(enabled: false))
        #expect(try decode(#"{}"#).admin.enabled)
    }

    @Test func aBadValueNamesThePath() {
        do {
            _ = try decode(#"{"enabled":"no"}"#)
            Issue.record("a string was taken for enabled")
        } catch {
            #expect(error.all.first?.description.hasPrefix("settings.admin.enabled:") == true)
        }
        do {
            _ = try decode(#"{"enable":false}"#)
            Issue.record("an unknown key passed strict mode")
        } catch {
            #expect(error.all.first?.description.hasPrefix("settings.admin.enable") == true)
        }
    }
}
