import Testing

@testable import RoomConfig

/// `settings.reactions` (1.2, PROTOCOL.md section 20).
@Suite struct ReactionSettingsTests {
    private func decode(_ reactions: String, strict: Bool = false) throws(TemplateError) -> RoleTemplate {
        try RoleTemplate.decode(
            Array(#"{"roles":{"host":{}},"settings":{"reactions":\#(reactions)}}"#.utf8),
            strict: strict
        ).template
    }

    private func problems(_ reactions: String) -> [String] {
        do {
            _ = try decode(reactions)
            return []
        } catch {
            return error.all.map(\.description)
        }
    }

    @Test func defaultsAreSixTypesEverySecond() throws {
        let settings = try RoleTemplate.decode(Array(#"{"roles":{"host":{}}}"#.utf8)).template.settings
        #expect(settings.reactions.types == ["like", "love", "laugh", "wow", "fire", "clap"])
        #expect(settings.reactions.intervalMs == 1000)
        let given = try decode(#"{"types":["up","down","A_b-9"],"interval_ms":100}"#).settings.reactions
        #expect(given == ReactionSettings(types: ["up", "down", "A_b-9"], intervalMs: 100))
        let most = (0..<32).map { "t\($0)" + String(repeating: "x", count: 30 - "\($0)".count) }
        #expect(most.allSatisfy { $0.count == 31 })
        let list = most.map { "\"\($0)x\"" }.joined(separator: ",")
        #expect(try decode(#"{"types":[\#(list)],"interval_ms":60000}"#).settings.reactions.types.count == 32)
    }

    @Test func typesAndIntervalAreCheckedNamingThePath() {
        #expect(
            problems(#"{"interval_ms":99}"#) == [
                "settings.reactions.interval_ms: must be between 100 and 60000, got 99"
            ]
        )
        #expect(
            problems(#"{"interval_ms":60001}"#) == [
                "settings.reactions.interval_ms: must be between 100 and 60000, got 60001"
            ]
        )
        #expect(problems(#"{"types":[]}"#) == ["settings.reactions.types: expected 1 to 32 reaction ids, got 0"])
        let many = (0..<33).map { "\"t\($0)\"" }.joined(separator: ",")
        #expect(
            problems(#"{"types":[\#(many)]}"#) == ["settings.reactions.types: expected 1 to 32 reaction ids, got 33"]
        )
        #expect(problems(#"{"types":"like"}"#) == ["settings.reactions.types: expected array, got string"])
        #expect(problems(#"{"types":["like",1]}"#) == ["settings.reactions.types[1]: expected string, got number 1"])
        let rule = "expected 1 to 32 characters from A-Z, a-z, 0-9, _ and -"
        #expect(
            problems(#"{"types":["like","thumbs up","","\#(String(repeating: "x", count: 33))"]}"#) == [
                #"settings.reactions.types[1]: invalid reaction id "thumbs up", \#(rule)"#,
                #"settings.reactions.types[2]: invalid reaction id "", \#(rule)"#,
                #"settings.reactions.types[3]: invalid reaction id "\#(String(repeating: "x", count: 33))", \#(rule)"#,
            ]
        )
        #expect(
            problems(#"{"types":["like","fire","like"]}"#) == [
                #"settings.reactions.types[2]: duplicate reaction id "like""#
            ]
        )
    }

    @Test func unknownKeysGetADidYouMeanUnderStrict() throws {
        let error = try #require(throws: TemplateError.self) { try decode(#"{"interval":500}"#, strict: true) }
        #expect(error.description.contains("settings.reactions.interval: unknown key"), "\(error)")
        let typo = try #require(throws: TemplateError.self) { try decode(#"{"tpyes":["a"]}"#, strict: true) }
        #expect(typo.description.contains("did you mean types?"), "\(typo)")
    }
}
