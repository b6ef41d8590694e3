import Testing

@testable import RoomConfig

/// `settings.stage` (1.3, PROTOCOL.md section 26).
@Suite struct StageSettingsTests {
    private func decode(
        roles: String = #"{"host":{},"guest":{}}"#,
        _ stage: String? = nil
    ) throws(TemplateError)
        -> RoleTemplate
    {
        let settings = stage.map { #","settings":{"stage":\#($0)}"# } ?? ""
        return try RoleTemplate.decode(Array(#"{"roles":\#(roles)\#(settings)}"#.utf8)).template
    }

    private func problems(roles: String = #"{"host":{},"guest":{}}"#, _ stage: String) -> [String] {
        do {
            _ = try decode(roles: roles, stage)
            return []
        } catch {
            return error.all.map(\.description)
        }
    }

    @Test func defaultsAndGivenValues() throws {
        #expect(try decode().settings.stage == StageSettings())
        let given = try decode(
            roles: #"{"host":{},"caller":{}}"#,
            #"{"enabled":true,"guest_role":"caller","max_waiting":10000,"note_bytes":0,"interval_ms":100}"#
        )
        #expect(
            given.settings.stage
                == StageSettings(enabled: true, guestRole: "caller", maxWaiting: 10000, noteBytes: 0, intervalMs: 100)
        )
    }

    @Test func rangesAreCheckedNamingThePath() {
        #expect(problems(#"{"max_waiting":0}"#) == ["settings.stage.max_waiting: must be between 1 and 10000, got 0"])
        #expect(
            problems(#"{"max_waiting":10001}"#) == [
                "settings.stage.max_waiting: must be between 1 and 10000, got 10001"
            ]
        )
        #expect(
            problems(#"{"note_bytes":4097}"#) == ["settings.stage.note_bytes: must be between 0 and 4096, got 4097"]
        )
        #expect(
            problems(#"{"interval_ms":99}"#) == ["settings.stage.interval_ms: must be between 100 and 60000, got 99"]
        )
        #expect(problems(#"{"enabled":1}"#) == ["settings.stage.enabled: expected boolean, got number 1"])
    }

    /// A `guest_role` that names no role is a startup error; a template that
    /// names none and has no `guest` role starts (the model keeps its queue
    /// off: StageQueueTests.aTemplateWithoutItsGuestRoleHasTheQueueOff).
    @Test func guestRoleMustBeARoleOfTheTemplate() throws {
        #expect(
            problems(#"{"guest_role":"nobody"}"#) == [#"settings.stage.guest_role: no role named "nobody" in roles"#]
        )
        #expect(problems(roles: #"{"host":{}}"#, #"{"guest_role":"guest"}"#).count == 1, "given: checked")
        #expect(try decode(roles: #"{"host":{}}"#).settings == Settings(), "a 1.2 template starts as it did")
        #expect(problems(#"{"enabled":false,"guest_role":"nobody"}"#).isEmpty, "off: not checked")
    }
}
