import Foundation
import RoomClient
import RoomWire
import Testing

/// The session store (section 14): set / get / listen, pushes to listeners only, limits, REST.
@Suite struct SessionStoreTests {
    @Test func setPushesToListenersOnlyTheSetterIncluded() async throws {
        let stage = try await Stage()
        #expect(try await stage.host.call("listen-metadata-change", ["keys": ["pinned"]]) == ["keys": ["pinned"]])
        #expect(try await stage.viewer.call("listen-metadata-change", ["keys": ["*"]]) == ["keys": ["*"]])
        _ = try await stage.guest.call("listen-metadata-change", ["keys": ["spotlight"]])
        // The moderator listens to nothing.
        #expect(await Stage.methods(stage.host, within: .milliseconds(100)).isEmpty, "listening pushes nothing")

        let entry = try await stage.host.call("set-metadata", ["key": "pinned", "value": ["text": "hi", "n": 1]])
        #expect(entry["key"] == "pinned")
        #expect(entry["value"] == ["text": "hi", "n": 1])
        #expect(entry["version"] == 1)
        #expect(entry["updated_by"]?["peer_id"] == stage.id("host"))
        #expect(entry["updated_by"]?["role"] == "host")
        #expect(entry["updated_at"]?.intValue != nil)
        for client in [stage.host, stage.viewer] {
            let pushed = try await client.next("on-metadata-change")
            #expect(pushed["entries"] == .array([entry]))
        }
        for client in [stage.guest, stage.moderator] {
            #expect(await Stage.methods(client).isEmpty, "not listening to pinned")
        }
        // The same value again still counts and still pushes.
        let again = try await stage.guest.call("set-metadata", ["key": "pinned", "value": ["text": "hi", "n": 1]])
        #expect(again["version"] == 2)
        #expect(again["updated_by"]?["peer_id"] == stage.id("guest"))
        #expect(try await stage.host.next("on-metadata-change")["entries"]?[0]?["version"] == 2)
        _ = try await stage.viewer.next("on-metadata-change")
        #expect(await Stage.methods(stage.guest).isEmpty, "the setter hears only keys it listens to")

        // Replacing the listened keys: [] stops the pushes.
        _ = try await stage.viewer.call("listen-metadata-change", ["keys": []])
        _ = try await stage.host.call("set-metadata", ["key": "pinned", "value": "x"])
        _ = try await stage.host.next("on-metadata-change")
        #expect(await Stage.methods(stage.viewer).isEmpty)
    }

    @Test func nullDeletesButVersionsKeepGrowing() async throws {
        let stage = try await Stage()
        let unset = try await stage.viewer.call("get-metadata", ["key": "spotlight"])
        #expect(unset == ["key": "spotlight", "value": nil, "version": 0, "updated_by": nil, "updated_at": nil])
        _ = try await stage.viewer.call("listen-metadata-change", ["keys": ["spotlight"]])
        _ = try await stage.host.call("set-metadata", ["key": "spotlight", "value": "peer-x"])
        _ = try await stage.host.call("set-metadata", ["key": "a.b-c_d", "value": [1, 2]])
        _ = try await stage.viewer.next("on-metadata-change")
        let deleted = try await stage.host.call("set-metadata", ["key": "spotlight", "value": nil])
        #expect(deleted["version"] == 2)
        #expect(deleted["value"] == .null)
        let pushed = try await stage.viewer.next("on-metadata-change")
        #expect(pushed["entries"]?[0]?["value"] == .null, "a null set is heard")
        #expect(pushed["entries"]?[0]?["version"] == 2)
        let read = try await stage.guest.call("get-metadata", ["key": "spotlight"])
        #expect(read == ["key": "spotlight", "value": nil, "version": 2, "updated_by": nil, "updated_at": nil])
        let all = try await stage.guest.call("get-metadata")
        #expect(all["entries"]?.arrayValue?.map { $0["key"] } == ["a.b-c_d"], "deleted keys are not listed")
        let back = try await stage.host.call("set-metadata", ["key": "spotlight", "value": "peer-y"])
        #expect(back["version"] == 3)
        let sorted = try await stage.guest.call("get-metadata")
        #expect(sorted["entries"]?.arrayValue?.map { $0["key"] } == ["a.b-c_d", "spotlight"], "sorted by key")
    }

    @Test func badKeysAndMissingValuesAreInvalidParams() async throws {
        let stage = try await Stage()
        for key: JSON in ["", "has space", "slash/no", .string(String(repeating: "k", count: 65)), 7] {
            #expect(try await stage.host.errorCode("set-metadata", ["key": key, "value": 1]) == -32602, "\(key)")
        }
        #expect(try await stage.host.errorCode("set-metadata", ["key": "k"]) == -32602, "value is required")
        #expect(try await stage.host.errorCode("get-metadata", ["key": "bad key"]) == -32602)
        #expect(try await stage.host.errorCode("listen-metadata-change", [:]) == -32602)
        #expect(try await stage.host.errorCode("listen-metadata-change", ["keys": ["ok", "not ok"]]) == -32602)
        let tooMany = JSON.array((0...256).map { .string("k\($0)") })
        #expect(try await stage.host.errorCode("listen-metadata-change", ["keys": tooMany]) == -32602)
    }

    @Test func valueSizeAndKeyCountLimits() async throws {
        let daemon = try await Daemon.start(
            settings: #"{"limits":{"max_session_value_bytes":16,"max_session_keys":2}}"#
        )
        let (host, _) = try await daemon.join("h", as: "host")
        // "0123456789abcd" encodes as 16 bytes with its quotes: allowed; one more is 41300.
        _ = try await host.call("set-metadata", ["key": "a", "value": "0123456789abcd"])
        #expect(try await host.errorCode("set-metadata", ["key": "a", "value": "0123456789abcde"]) == 41300)
        #expect(try await host.call("get-metadata", ["key": "a"])["version"] == 1, "a refused set changes nothing")
        _ = try await host.call("set-metadata", ["key": "b", "value": 1])
        #expect(try await host.errorCode("set-metadata", ["key": "c", "value": 1]) == 40907)
        _ = try await host.call("set-metadata", ["key": "a", "value": 2])  // existing keys still change
        _ = try await host.call("set-metadata", ["key": "b", "value": nil])  // a delete frees a slot
        _ = try await host.call("set-metadata", ["key": "c", "value": 1])
        #expect(try await host.errorCode("set-metadata", ["key": "d", "value": 1]) == 40907)
    }

    /// Too many keys over REST is the contract's "too many" code with the
    /// status of its other limits (section 9: role limit → 409/40900): 409/40907.
    @Test func restTooManyKeysIs409With40907() async throws {
        let daemon = try await Daemon.start(settings: #"{"limits":{"max_session_keys":1}}"#)
        let (host, _) = try await daemon.join("h", as: "host")
        let token = try daemon.managementToken()
        func set(_ key: String) async throws -> (status: Int, body: JSON) {
            try await http(
                "POST",
                daemon,
                "/v2/active-rooms/room-1/metadata",
                token: token,
                body: #"{"key":"\#(key)","value":1}"#
            )
        }
        #expect(try await set("a").status == 200)
        let tooMany = try await set("b")
        #expect(tooMany.status == 409)
        #expect(tooMany.body["code"] == 40907)
        #expect(try await host.call("get-metadata", ["key": "b"])["version"] == 0, "nothing stored")
        #expect(try await set("a").status == 200, "a key that has a value can always be set")
    }

    @Test func restrictedPeersMayReadAndListenButNotSet() async throws {
        let daemon = try await Daemon.start()
        let (host, _) = try await daemon.join("h", as: "host")
        let (viewer, _) = try await daemon.join("v", as: "host", restrictions: "view_and_polls_only")
        _ = try await host.next("on-peer-join")
        #expect(try await viewer.errorCode("set-metadata", ["key": "k", "value": 1]) == 40300)
        #expect(
            try await viewer.errorCode("set-metadata", ["key": "bad key", "value": 1]) == -32602,
            "params before permissions"
        )
        #expect(
            try await viewer.errorCode(
                "set-metadata",
                ["key": "k", "value": .string(String(repeating: "x", count: 5000))]
            ) == 40300,
            "permissions before limits"
        )
        _ = try await viewer.call("listen-metadata-change", ["keys": ["k"]])
        _ = try await host.call("set-metadata", ["key": "k", "value": 1])
        #expect(try await viewer.next("on-metadata-change")["entries"]?[0]?["value"] == 1)
        #expect(try await viewer.call("get-metadata", ["key": "k"])["value"] == 1)
    }

    @Test func aNewSessionStartsEmpty() async throws {
        let daemon = try await Daemon.start(settings: #"{"room":{"reconnect_grace_s":0}}"#)
        let (host, _) = try await daemon.join("h", as: "host")
        _ = try await host.call("set-metadata", ["key": "k", "value": 1])
        try await host.leave()
        let (again, _) = try await daemon.join("h2", as: "host")
        #expect(try await again.call("get-metadata", ["key": "k"])["version"] == 0)
        #expect(try await again.call("get-metadata") == ["entries": []])
    }

    @Test func restReadsAndSetsWithTheServerPeerRef() async throws {
        let stage = try await Stage()
        let token = try stage.daemon.managementToken()
        _ = try await stage.viewer.call("listen-metadata-change", ["keys": ["*"]])
        let set = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/metadata",
            token: token,
            body: #"{"key":"pinned","value":{"text":"from ops"}}"#
        )
        #expect(set.status == 200)
        #expect(set.body["version"] == 1)
        #expect(set.body["updated_by"] == ["peer_id": nil, "role": nil, "info": ["name": "server"]])
        let pushed = try await stage.viewer.next("on-metadata-change")
        #expect(pushed["entries"]?[0]?["updated_by"]?["info"]?["name"] == "server")
        let get = try await http("GET", stage.daemon, "/v2/active-rooms/room-1/metadata", token: token)
        #expect(get.status == 200)
        #expect(get.body["entries"]?.arrayValue?.count == 1)
        #expect(get.body["entries"]?[0]?["value"] == ["text": "from ops"])
        let unknown = try await http("GET", stage.daemon, "/v2/active-rooms/nowhere/metadata", token: token)
        #expect(unknown.status == 404)
        #expect(unknown.body["code"] == 40001)
        let bad = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/metadata",
            token: token,
            body: #"{"value":1}"#
        )
        #expect(bad.status == 400)
        #expect(bad.body["code"] == -32602)
        let big = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/metadata",
            token: token,
            body: #"{"key":"k","value":"\#(String(repeating: "x", count: 5000))"}"#
        )
        #expect(big.status == 413)
        #expect(big.body["code"] == 41300)
        let anonymous = try await http("GET", stage.daemon, "/v2/active-rooms/room-1/metadata")
        #expect(anonymous.status == 401)
    }
}
