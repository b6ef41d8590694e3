import Testing

@testable import RoomConfig

/// `settings.chat.blocked_words` (1.2, PROTOCOL.md section 22): strings,
/// lower-cased, one word each, at most 1000 of 1 to 64 bytes.
@Suite struct BlockedWordsSettingsTests {
    private func decode(_ words: String, strict: Bool = false) throws(TemplateError) -> RoleTemplate {
        let json = #"{"roles":{"host":{}},"settings":{"chat":{"blocked_words":\#(words)}}}"#
        return try RoleTemplate.decode(Array(json.utf8), strict: strict).template
    }

    private func problem(_ words: String) throws -> String {
        try #require(throws: TemplateError.self) { try decode(words) }.description
    }

    @Test func wordsAreLowerCasedAndDefaultToNone() throws {
        #expect(
            try RoleTemplate.decode(Array(#"{"roles":{"host":{}}}"#.utf8)).template.settings.chat.blockedWords == []
        )
        #expect(
            try decode(#"["Darn","ФИГНЯ","Straße","x2"]"#).settings.chat.blockedWords == [
                "darn", "фигня", "straße", "x2",
            ]
        )
    }

    @Test func badListsNameThePathAndTheProblem() throws {
        #expect(try problem(#""darn""#).contains("settings.chat.blocked_words: expected array"))
        #expect(try problem(#"["ok",5]"#).contains("settings.chat.blocked_words[1]: expected string"))
        #expect(try problem(#"[""]"#).contains("settings.chat.blocked_words[0]: must be 1 to 64 bytes, got 0"))
        let long = String(repeating: "a", count: 65)
        #expect(try problem("[\"\(long)\"]").contains("blocked_words[0]: must be 1 to 64 bytes, got 65"))
        #expect(try problem(#"["two words"]"#).contains("blocked_words[0]: must be one word"))
        #expect(try problem(#"["d.*n"]"#).contains("blocked_words[0]: must be one word"), "no patterns")
        #expect(try problem(#"["Darn","darn"]"#).contains("blocked_words[1]: duplicate word \"darn\""))
        let many = "[" + (0...1000).map { "\"w\($0)\"" }.joined(separator: ",") + "]"
        #expect(try problem(many).contains("blocked_words: expected at most 1000 words, got 1001"))
        let most = "[" + (0..<1000).map { "\"w\($0)\"" }.joined(separator: ",") + "]"
        #expect(try decode(most).settings.chat.blockedWords.count == 1000)
    }

    @Test func aTypoOfTheKeyGetsADidYouMeanUnderStrict() throws {
        let error = try #require(throws: TemplateError.self) {
            try RoleTemplate.decode(
                Array(#"{"roles":{"host":{}},"settings":{"chat":{"blocked_word":["x"]}}}"#.utf8),
                strict: true
            )
        }
        #expect(error.description.contains("did you mean blocked_words?"), "\(error)")
    }
}
