import Testing

@testable import RoomConfig

/// `settings.limits.max_unjoined_per_address` (PROTOCOL.md section 1): validated like every setting (PATH: PROBLEM).
@Suite struct TransportLimitSettingsTests {
    func decode(_ limits: String) throws(TemplateError) -> LimitSettings {
        try RoleTemplate.decode(Array(#"{"roles":{"host":{}},"settings":{"limits":\#(limits)}}"#.utf8)).template
            .settings.limits
    }

    @Test func maxUnjoinedPerAddressDefaultsTo64AndIsRead() throws {
        #expect(LimitSettings().maxUnjoinedPerAddress == 64)
        #expect(try decode("{}").maxUnjoinedPerAddress == 64)
        #expect(try decode(#"{"max_unjoined_per_address":1000}"#).maxUnjoinedPerAddress == 1000)
    }

    @Test(arguments: [
        (#"{"max_unjoined_per_address":0}"#, "settings.limits.max_unjoined_per_address: must be at least 1, got 0"),
        (
            #"{"max_unjoined_per_address":"64"}"#,
            "settings.limits.max_unjoined_per_address: expected integer, got string"
        ),
    ])
    func maxUnjoinedPerAddressIsAtLeastOne(_ limits: String, _ expected: String) {
        do {
            _ = try decode(limits)
            Issue.record("accepted \(limits)")
        } catch {
            #expect(error.description == expected)
        }
    }
}
