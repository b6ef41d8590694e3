import RoomConfig
import Testing

@testable import RoomModel

/// Section 27 in the model: names trimmed, reserved for moderating peers,
/// and attributes merged within their bounds.
@Suite struct IdentityModelTests {
    @Test func namesAreTrimmedOfUnicodeWhiteSpace() throws {
        #expect(" \t\u{00A0}Ada Lovelace\u{2003}\n".trimmedOfWhiteSpace == "Ada Lovelace")
        #expect(" \n ".trimmedOfWhiteSpace == "" && "".trimmedOfWhiteSpace == "")
        #expect(try RoomRegistry.trimmedName("  x ") == "x")
        #expect(code { _ = try RoomRegistry.trimmedName("\u{3000}") } == .invalidParams)
    }

    @Test func aModeratingPeersNameIsReservedForOthersOnly() throws {
        let (registry, _) = Fixtures.registry()
        _ = try registry.join(Fixtures.request("h", role: "host", name: "Ärger"))
        var reserved = Fixtures.request("v", role: "viewer", name: "äRGER")
        reserved.nameIsParam = true
        #expect(code { _ = try registry.join(reserved) } == .nameReserved)
        reserved.nameIsParam = false  // the app's word (a claim)
        let viewer = try registry.join(reserved).peer
        #expect(
            code { _ = try registry.updatePeer(viewer, name: "äRGER ", data: nil) } == nil,
            "its own name: unchanged"
        )
        let other = try registry.join(Fixtures.request("w", role: "viewer", name: "w")).peer
        #expect(code { _ = try registry.updatePeer(other, name: " ärger", data: nil) } == .nameReserved)
        #expect(
            code { _ = try registry.updatePeer(other, name: "ärger", data: nil, by: .server) } == nil,
            "REST is not checked"
        )
        var host = Fixtures.request("h2", role: "host", name: "ärger")
        host.nameIsParam = true
        #expect(code { _ = try registry.join(host) } == nil, "a moderating role may share it")
    }

    @Test func attributesMergeAndNoChangeIsNoPush() throws {
        let (registry, _) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let first = try registry.setAttributes(of: guest, set: [("a", "1"), ("b", "2")], delete: [], by: .peer(guest))
        #expect(guest.attributes == ["a": "1", "b": "2"] && first.sent.count == 1)
        let second = try registry.setAttributes(of: guest, set: [("a", nil)], delete: ["b"], by: .peer(host))
        #expect(guest.attributes == [:] && !second.isEmpty)
        #expect(try registry.setAttributes(of: guest, set: [], delete: ["zz"], by: .peer(guest)).isEmpty)
        #expect(
            code { _ = try registry.setAttributes(of: host, set: [("k", "v")], delete: [], by: .peer(guest)) }
                == .permissionDenied
        )
        #expect(
            code { _ = try registry.setAttributes(of: guest, set: [("k", "v")], delete: ["k"], by: .server) }
                == .invalidParams
        )
        let seventeen = (0..<17).map { (key: "k\($0)", value: Optional("v")) }
        #expect(
            code { _ = try registry.setAttributes(of: guest, set: seventeen, delete: [], by: .server) }
                == .invalidParams
        )
        #expect(guest.attributes == [:], "nothing changes on an error")
    }
}
