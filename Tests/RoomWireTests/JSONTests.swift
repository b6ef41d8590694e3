import Testing

@testable import RoomWire

@Suite struct JSONParserTests {
    @Test func valuesEscapesAndNumbersAsWritten() throws {
        let value = try JSON.parse(
            #"["tab\t \"q\" \ud83d\ude00 \/ é", -0.5e1, 12345678901234567890, 1.50, false, null, {"a":1,"a":2}]"#
        )
        #expect(
            value
                == .array([
                    .string("tab\t \"q\" 😀 / é"), .number("-0.5e1"), .number("12345678901234567890"),
                    .number("1.50"), .bool(false), .null, .object([.init("a", 1), .init("a", 2)]),
                ])
        )
        #expect(value[2]?.text == "12345678901234567890", "the text survives, not a rounded double")
        #expect(value[3]?.text == "1.50")
        #expect(value[6]?["a"] == 2, "the last of duplicated keys counts")
    }

    @Test func errorsSayWhatAndWhere() {
        func problem(_ text: String, duplicates: Bool = false, depth: Int = 64) -> String? {
            do {
                _ = try JSON.parse(Array(text.utf8), maxDepth: depth, rejectDuplicateKeys: duplicates)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(problem("") == "line 1, column 1: expected a value, found the end of the input")
        #expect(problem("{\n  \"a\": 1,\n}") == "line 3, column 1: expected a string key, found '}'")
        #expect(problem(#"[1,]"#) == "line 1, column 4: expected a value, found ']'")
        #expect(problem(#"{"a":01}"#) == "line 1, column 7: expected ',' or '}', found '1'")
        #expect(problem(#"{"a":1} x"#) == "line 1, column 9: expected the end of the input, found 'x'")
        #expect(problem(#"{"é\#u{01}":1}"#) == "line 1, column 4: control character in string (escape it)")
        #expect(problem(#"["a\q"]"#) == "line 1, column 4: invalid escape in string")
        #expect(problem(#"["\ud800"]"#) == #"line 1, column 3: invalid \u escape (unpaired surrogate)"#)
        #expect(problem(#"[1.]"#) == "line 1, column 4: expected a digit, found ']'")
        #expect(problem(#"[tru]"#) == "line 1, column 2: expected a value, found 't'")
        #expect(problem(#"{"a":1,"a":2}"#, duplicates: true) == #"line 1, column 8: duplicate key "a""#)
        #expect(problem(String(repeating: "[", count: 65)) == "line 1, column 65: nested deeper than 64 levels")
        #expect(problem(String(repeating: "[", count: 64) + String(repeating: "]", count: 64)) == nil)
    }

    @Test func invalidUTF8IsAnError() {
        #expect(throws: JSONParseError.self) { try JSON.parse([0x22, 0xC3, 0x28, 0x22]) }
    }

    /// ASCII strings skip validation; a byte >= 0x80 anywhere in a string,
    /// with or without escapes around it, still gets it.
    @Test(
        arguments: [
            ("ab", [0xFF], "cd"), ("", [0xC3], ""), ("abc", [0xC3, 0x28], ""), (#"\n"#, [0x80], "x"),
            ("x", [0xE2, 0x82], #"\t"#), (#"\u00e9"#, [0xA9], ""), ("", [0xC3], #"\u00a9"#),
        ] as [(String, [UInt8], String)]
    )
    func aByteAbove0x7FInAnOtherwiseASCIIStringIsStillValidated(_ before: String, _ raw: [UInt8], _ after: String) {
        let bytes = Array(#"[1, ""#.utf8) + Array(before.utf8) + raw + Array(after.utf8) + Array(#""]"#.utf8)
        let error = #expect(throws: JSONParseError.self) { try JSON.parse(bytes) }
        #expect(error?.description == "line 1, column 5: string is not valid UTF-8")
    }

    @Test func asciiAndMultibyteStringsParseWithAndWithoutEscapes() throws {
        let value = try JSON.parse(#"["plain", "é😀", "a\"b", "é\u00e9😀", "", "\u0041"]"#)
        #expect(
            value
                == .array([.string("plain"), .string("é😀"), .string("a\"b"), .string("éé😀"), .string(""), .string("A")])
        )
    }
}

@Suite struct JSONWriterTests {
    @Test func escapesAndRoundTrips() throws {
        let value: JSON = [
            "s": "quote \" backslash \\ newline \n tab \t nul \u{0} é 😀", "n": .number("1.50"),
            "a": [true, nil, 3], "o": [:],
        ]
        #expect(
            value.text
                == #"{"s":"quote \" backslash \\ newline \n tab \t nul \u0000 é 😀","n":1.50,"a":[true,null,3],"o":{}}"#
        )
        #expect(try JSON.parse(value.bytes) == value)
    }

    @Test func objectEqualityIgnoresMemberOrder() {
        #expect(JSON.obj(["a": 1, "b": 2]) == JSON.obj(["b": 2, "a": 1]))
        #expect(JSON.obj(["a": 1]) != JSON.obj(["a": 1, "b": 2]))
        #expect(JSON.number("1.0") == JSON.number("1"))
    }

    /// A page holds the leading items that fit in its byte budget (each
    /// with its comma, the brackets counted), never fewer than one, and
    /// says when it left some out: `stage-list`'s and `question-list`'s
    /// `more`.
    @Test func aPageHoldsTheLeadingItemsThatFitAndAtLeastOne() throws {
        func page(_ items: [String], _ budget: Int) throws -> (JSON, Bool) {
            let size: (String) -> Int = { $0.utf8.count + 2 }
            var w = JSONWriter()
            let cut = w.leadingArray(items, within: budget, size: size) { $0.string($1) }
            return (try JSON.parse(w.bytes), cut)
        }
        let items = ["aaaa", "bbbb", "cccc"]  // 6 bytes each, 7 with a comma
        #expect(try page(items, 23) == (["aaaa", "bbbb", "cccc"], false))  // 2 + 3 × 7
        #expect(try page(items, 22) == (["aaaa", "bbbb"], true))
        #expect(try page(items, 1) == (["aaaa"], true))
        #expect(try page([], 1) == ([], false))
    }
}
