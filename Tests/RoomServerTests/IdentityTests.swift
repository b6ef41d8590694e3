import Foundation
import RoomClient
import RoomTokens
import RoomWire
import Testing

/// Who a peer is (PROTOCOL.md section 27) over real sockets: names the
/// server owns (trimmed, at most 64 bytes, filtered, a moderating peer's
/// name reserved), the token's `name`, `avatar` and `attributes` claims,
/// `peer-attributes-set` and REST's `attributes`, and `updateOwnMetadata`.
/// Shipped roles: host and moderator moderate, guest and viewer do not.
@Suite struct IdentityTests {
    static func token(
        _ daemon: Daemon,
        user: String,
        role: String,
        name: String? = nil,
        avatar: String? = nil,
        attributes: [String: String]? = nil
    ) throws -> JSON {
        .string(
            try TokenMinter(secret: daemon.secret).appToken(
                room: "room-1",
                user: user,
                role: role,
                name: name,
                avatar: avatar,
                attributes: attributes
            )
        )
    }

    /// A token with hand-made claims (what the minter would refuse to make).
    static func rawToken(_ daemon: Daemon, _ overrides: [String: Any?]) -> JSON {
        .string(Tokens.make(claims: Tokens.appClaims(overrides), secret: daemon.secret))
    }

    static func join(
        _ daemon: Daemon,
        _ user: String,
        as role: String,
        name: String? = nil
    ) async throws -> (RoomClient, JSON) {
        let client = try await daemon.client()
        var params: JSON = ["token": try token(daemon, user: user, role: role)]
        if let name { params = ["token": params["token"]!, "name": .string(name)] }
        return (client, try await client.call("join", params))
    }

    @Test func namesAreTrimmedNotEmptyAndAtMost64Bytes() async throws {
        let daemon = try await Daemon.start()
        let (ada, joined) = try await Self.join(daemon, "ada", as: "guest", name: " \t Ada Lovelace\n ")
        #expect(joined["peer"]?["info"]?["name"] == "Ada Lovelace")
        let client = try await daemon.client()
        let blank = try await client.failure(
            "join",
            ["token": try Self.token(daemon, user: "b", role: "guest"), "name": "  \n "]
        )
        #expect(blank.code == -32602 && blank.message.hasPrefix("name:"), "\(blank)")
        let long = try await client.failure(
            "join",
            [
                "token": try Self.token(daemon, user: "b", role: "guest"),
                "name": .string(String(repeating: "é", count: 33)),
            ]
        )
        #expect(long.code == 41300 && long.message == "name: 66 bytes is over the limit of 64", "\(long)")
        let (_, atLimit) = try await Self.join(daemon, "c", as: "guest", name: String(repeating: "n", count: 64) + "  ")
        #expect(atLimit["peer"]?["info"]?["name"] == .string(String(repeating: "n", count: 64)))

        let renamed = try await ada.call("peer-update", ["name": "  Ada  "])
        #expect(renamed["peer"]?["info"]?["name"] == "Ada")
        #expect(try await ada.failure("peer-update", ["name": " "]).code == -32602)
        #expect(
            try await ada.failure("peer-update", ["name": .string(String(repeating: "n", count: 65))]).code == 41300
        )
        // The user_id default is trimmed too.
        let (_, byID) = try await Self.join(daemon, " zed ", as: "guest")
        #expect(byID["peer"]?["info"]?["name"] == "zed")
    }

    @Test func aModeratingPeersNameIsReservedForOthersAtJoinAndPeerUpdate() async throws {
        let daemon = try await Daemon.start()
        _ = try await Self.join(daemon, "h", as: "host", name: "Ada")
        let client = try await daemon.client()
        let reserved = try await client.failure(
            "join",
            ["token": try Self.token(daemon, user: "v", role: "viewer"), "name": "  aDA "]
        )
        #expect(reserved.code == 40908 && reserved.message.hasPrefix("name:"), "\(reserved)")
        let (viewer, _) = try await Self.join(daemon, "v", as: "viewer", name: "Bo")
        #expect(try await viewer.errorCode("peer-update", ["name": "ADA"]) == 40908)
        // Unicode lower-casing: a moderator named "Ärger" reserves "äRGER".
        _ = try await Self.join(daemon, "m", as: "moderator", name: "Ärger")
        #expect(try await viewer.errorCode("peer-update", ["name": "äRGER"]) == 40908)
        // A moderating role may share a name; the app's word (a claim, REST) is not checked.
        _ = try await Self.join(daemon, "h2", as: "host", name: "ada")
        let claimed = try await client.call(
            "join",
            ["token": try Self.token(daemon, user: "c", role: "viewer", name: "Ada"), "name": "Ada"]
        )
        #expect(claimed["peer"]?["info"]?["name"] == "Ada")
        let viewerID = try #require(
            try await viewer.call("peer-update", ["name": "Bo"])["peer"]?["peer_id"]?.stringValue
        )
        let rest = try await http(
            "POST",
            daemon,
            "/v2/active-rooms/room-1/peers/\(viewerID)",
            token: try daemon.managementToken(),
            body: #"{"name":"  Ada "}"#
        )
        #expect(rest.status == 200 && rest.body["info"]?["name"] == "Ada", "\(rest)")
    }

    @Test func aNameClaimWinsOverTheParamWhichIsThenNotChecked() async throws {
        let daemon = try await Daemon.start(settings: #"{"chat":{"blocked_words":["darn"]}}"#)
        _ = try await Self.join(daemon, "h", as: "host", name: "Host")
        let client = try await daemon.client()
        #expect(
            try await client.errorCode(
                "join",
                ["token": try Self.token(daemon, user: "x", role: "viewer"), "name": "darn it"]
            ) == 40302
        )
        for param in ["darn it", "host", "  "] {
            let token = try Self.token(daemon, user: "u-\(param.count)", role: "viewer", name: "  Claimed  ")
            let joined = try await (try await daemon.client()).call("join", ["token": token, "name": .string(param)])
            #expect(joined["peer"]?["info"]?["name"] == "Claimed", "param \"\(param)\"")
        }
    }

    @Test func avatarAndAttributesClaimsAreOnThePeerAndBadOnesAre40100() async throws {
        let daemon = try await Daemon.start()
        let client = try await daemon.client()
        let token = try Self.token(
            daemon,
            user: "ada",
            role: "guest",
            avatar: "https://example.com/ada.png",
            attributes: ["zone": "eu", "app.seat": "3", "a-b_c": ""]
        )
        let joined = try await client.call("join", ["token": token])
        let peer = try #require(joined["peer"])
        #expect(peer["info"]?["avatar"] == "https://example.com/ada.png")
        #expect(peer["attributes"]?.objectValue?.map(\.key) == ["a-b_c", "app.seat", "zone"], "sorted keys")
        #expect(peer["attributes"]?["zone"] == "eu")
        let (_, plain) = try await Self.join(daemon, "bo", as: "guest")
        #expect(plain["peer"]?["info"]?["avatar"] == .null && plain["peer"]?["attributes"] == [:])

        let seventeen = Dictionary(uniqueKeysWithValues: (0..<17).map { ("k\($0)", "v") })
        let bad: [(String, [String: Any?])] = [
            ("name over 64 bytes", ["name": String(repeating: "n", count: 65)]),
            ("name blank", ["name": "   "]),
            ("avatar over 512 bytes", ["avatar": String(repeating: "a", count: 513)]),
            ("avatar not a string", ["avatar": 7]),
            ("17 attributes", ["attributes": seventeen]),
            ("a bad key", ["attributes": ["no spaces": "v"]]),
            ("a 65-byte key", ["attributes": [String(repeating: "k", count: 65): "v"]]),
            ("a value over 256 bytes", ["attributes": ["k": String(repeating: "v", count: 257)]]),
            ("a number value", ["attributes": ["k": 1]]),
            ("attributes not an object", ["attributes": "k=v"]),
        ]
        let fresh = try await daemon.client()
        for (label, claims) in bad {
            let failure = try await fresh.failure("join", ["token": Self.rawToken(daemon, claims)])
            #expect(failure.code == 40100, "\(label): \(failure)")
        }
        let atLimits: [String: Any?] = [
            "avatar": String(repeating: "a", count: 512),
            "attributes": Dictionary(
                uniqueKeysWithValues: (0..<16).map { ("k\($0)", String(repeating: "v", count: 256)) }
            ),
        ]
        let full = try await fresh.call("join", ["token": Self.rawToken(daemon, atLimits)])
        #expect(full["peer"]?["attributes"]?.objectValue?.count == 16)
    }

    @Test func updateOwnMetadataGatesPeerUpdateAndAttributesButNotGroups() async throws {
        let template = try Daemon.shippedTemplate { roles in
            var permissions = roles["viewer"]!["permissions"] as? [String: Any] ?? [:]
            permissions["updateOwnMetadata"] = false
            roles["viewer"]!["permissions"] = permissions
        }
        let daemon = try await Daemon.start(template: template)
        let (viewer, joined) = try await Self.join(daemon, "v", as: "viewer")
        let known = joined["policy"]?["known_roles"]
        #expect(known?["viewer"]?["permissions"]?["updateOwnMetadata"] == false)
        #expect(known?["guest"]?["permissions"]?["updateOwnMetadata"] == true, "omitted: granted")
        #expect(try await viewer.errorCode("peer-update", ["name": "Vi"]) == 40300)
        #expect(try await viewer.errorCode("peer-attributes-set", ["set": ["k": "v"]]) == 40300)
        _ = try await viewer.call("group-join", ["name": "_handraise"])
        let (guest, _) = try await Self.join(daemon, "g", as: "guest")
        _ = try await guest.call("peer-update", ["name": "Gi"])
        _ = try await guest.call("peer-attributes-set", ["set": ["k": "v"]])
    }

    @Test func peerAttributesSetMergesChecksItsLimitsAndPushesOnlyChanges() async throws {
        let daemon = try await Daemon.start()
        let (host, hostJoin) = try await Self.join(daemon, "h", as: "host")
        let (guest, guestJoin) = try await Self.join(daemon, "g", as: "guest")
        let guestID = try #require(guestJoin["peer"]?["peer_id"])
        let hostID = try #require(hostJoin["peer"]?["peer_id"])
        let aboutGuest: @Sendable (JSON) -> Bool = { $0["peer"]?["peer_id"] == guestID }

        let first = try await guest.call("peer-attributes-set", ["set": ["seat": "3", "team": "red"]])
        #expect(first["peer"]?["attributes"] == ["seat": "3", "team": "red"])
        let pushed = try await host.next("on-peer-update", where: aboutGuest)
        #expect(pushed["changed"] == ["attributes"] && pushed["peer"]?["attributes"]?["team"] == "red")
        let merged = try await guest.call(
            "peer-attributes-set",
            ["set": ["seat": .null, "mood": "ok"], "delete": ["nothing-here"]]
        )
        #expect(merged["peer"]?["attributes"] == ["mood": "ok", "team": "red"])
        _ = try await host.next("on-peer-update", where: aboutGuest)

        // Limits: -32602 for the shape, 41300 for a long value; nothing changes.
        let cases: [(JSON, Int)] = [
            (["set": ["bad key": "v"]], -32602),
            (["set": ["k": 1]], -32602),
            (["set": ["k": "v"], "delete": ["k"]], -32602),
            (["delete": ["a/b"]], -32602),
            (["set": "k=v"], -32602),
            (["set": ["k": .string(String(repeating: "v", count: 257))]], 41300),
            (.object((0..<15).map { JSON.Member("x\($0)", "v") }).wrapped(in: "set"), -32602),
        ]
        for (params, code) in cases {
            #expect(try await guest.errorCode("peer-attributes-set", params) == code, "\(params)")
        }
        let fifteen = try await guest.call(
            "peer-attributes-set",
            .object((0..<14).map { JSON.Member("x\($0)", "v") }).wrapped(in: "set")
        )
        #expect(fifteen["peer"]?["attributes"]?.objectValue?.count == 16)
        _ = try await host.next("on-peer-update", where: aboutGuest)

        // A set that changes nothing answers the peer and pushes nothing.
        let same = try await guest.call("peer-attributes-set", ["set": ["mood": "ok"], "delete": ["gone"]])
        #expect(same["peer"]?["attributes"]?["mood"] == "ok")
        _ = try await guest.call("broadcast", ["info": ["message": "marker"]])
        _ = try await host.next("on-broadcast")
        #expect(host.drain().filter { $0["method"] == "on-peer-update" }.isEmpty, "a no-op set is not pushed")

        // Another peer's: a moderating role only.
        #expect(try await guest.errorCode("peer-attributes-set", ["peer_id": hostID, "set": ["k": "v"]]) == 40300)
        let byHost = try await host.call("peer-attributes-set", ["peer_id": guestID, "delete": ["mood"]])
        #expect(byHost["peer"]?["attributes"]?["mood"] == nil && byHost["peer"]?["peer_id"] == guestID)
        #expect(try await guest.next("on-peer-update", where: aboutGuest)["changed"] == ["attributes"])
        #expect(try await host.errorCode("peer-attributes-set", ["peer_id": "nobody", "set": ["k": "v"]]) == 40400)

        // view_and_polls_only: 40300, whatever the role.
        let restricted = try await daemon.join("r", as: "host", restrictions: "view_and_polls_only").client
        #expect(try await restricted.errorCode("peer-attributes-set", ["set": ["k": "v"]]) == 40300)
    }

    /// The Swift kit's typed call and its decoded Peer.
    @Test func theSwiftKitSetsAttributes() async throws {
        let daemon = try await Daemon.start()
        let (host, _) = try await daemon.join("h", as: "host")
        let (guest, guestJoin) = try await daemon.join("g", as: "guest")
        let guestID = try #require(guestJoin["peer"]?["peer_id"]?.stringValue)
        let mine = try await guest.setAttributes(["seat": "12", "team": "red"])
        #expect(mine.attributes == ["seat": "12", "team": "red"] && mine.info.avatar == nil)
        let theirs = try await host.setAttributes(["seat": nil], delete: ["team"], for: guestID)
        #expect(theirs.peerID == guestID && theirs.attributes == [:])
    }

    /// Section 28: a viewer's attributes in a large room reach itself and the moderating peers only.
    @Test func aViewersAttributesInALargeRoomReachOnlyItselfAndTheModerators() async throws {
        let daemon = try await Daemon.start(settings: #"{"room":{"large_room_threshold":3}}"#)
        let (host, _) = try await daemon.join("h", as: "host")
        let (moderator, _) = try await daemon.join("m", as: "moderator")
        let (mover, moverJoin) = try await daemon.join("v0", as: "viewer")
        let (bystander, _) = try await daemon.join("v1", as: "viewer")
        let (other, _) = try await daemon.join("v2", as: "viewer")
        let moverID = moverJoin["peer"]!["peer_id"]!
        let aboutMover: @Sendable (JSON) -> Bool = { $0["peer"]?["peer_id"] == moverID }
        _ = try await mover.call("peer-attributes-set", ["set": ["seat": "12"]])
        for watcher in [host, moderator, mover] {
            let update = try await watcher.next("on-peer-update", where: aboutMover)
            #expect(update["changed"] == ["attributes"] && update["peer"]?["attributes"]?["seat"] == "12")
        }
        _ = try await host.call("broadcast", ["info": ["message": "marker"]])
        for viewer in [bystander, other] {
            _ = try await viewer.next("on-broadcast")
            let heard = viewer.drain().filter { $0["method"] == "on-peer-update" }
            #expect(heard.isEmpty, "a viewer's attributes stay quiet: \(heard)")
        }
    }

    @Test func restMergesAttributesLikePeerAttributesSet() async throws {
        let daemon = try await Daemon.start()
        let (host, _) = try await daemon.join("h", as: "host")
        let (_, guestJoin) = try await daemon.join("g", as: "guest")
        let guestID = try #require(guestJoin["peer"]?["peer_id"]?.stringValue)
        let path = "/v2/active-rooms/room-1/peers/\(guestID)"
        let token = try daemon.managementToken()
        let first = try await http("POST", daemon, path, token: token, body: #"{"attributes":{"a":"1","b":"2"}}"#)
        #expect(first.status == 200 && first.body["attributes"] == ["a": "1", "b": "2"], "\(first)")
        let pushed = try await host.next("on-peer-update") { $0["peer"]?["peer_id"] == .string(guestID) }
        #expect(pushed["changed"] == ["attributes"])
        let second = try await http("POST", daemon, path, token: token, body: #"{"attributes":{"a":null,"c":"3"}}"#)
        #expect(second.status == 200 && second.body["attributes"] == ["b": "2", "c": "3"], "\(second)")
        let bad = try await http("POST", daemon, path, token: token, body: #"{"name":"Bo","attributes":{"k":7}}"#)
        #expect(bad.status == 400, "\(bad)")
        let long = try await http(
            "POST",
            daemon,
            path,
            token: token,
            body: #"{"attributes":{"k":"\#(String(repeating: "v", count: 257))"}}"#
        )
        #expect(long.status == 413, "\(long)")
        let blank = try await http("POST", daemon, path, token: token, body: #"{"name":"  "}"#)
        #expect(blank.status == 400, "\(blank)")
        let after = try await http("GET", daemon, path, token: token)
        #expect(
            after.body["attributes"] == ["b": "2", "c": "3"] && after.body["info"]?["name"] == "g",
            "all or nothing"
        )
    }
}

/// Section 27's avatar and attributes are part of the peer in the room's
/// saved state: they survive a SIGKILL of the room's home. Three nodes on a
/// real nats-server.
@Suite(.serialized) struct IdentityClusterTests {
    @Test func avatarAndAttributesSurviveAKillOfTheHome() async throws {
        let cluster = try await ClusterRoutingTests.Cluster()
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        defer { _ = host }
        let node = cluster.nodes[1]
        let client = try await RoomClient.connect(
            to: "ws://127.0.0.1:\(node.port)/ws",
            defaultTimeout: Daemon.waitTimeout
        )
        let token = try IdentityTests.token(
            node,
            user: "g",
            role: "guest",
            avatar: "https://example.com/g.png",
            attributes: ["seat": "3"]
        )
        let joined = try await client.call("join", ["token": token])
        let guestID = try #require(joined["peer"]?["peer_id"])
        _ = try await client.call("peer-attributes-set", ["set": ["team": "red-marker"]])
        try await cluster.waitUntilSaved(containing: "red-marker")
        _ = await cluster.nodes[0].stop(signal: SIGKILL)

        let page = try await ClusterRoutingTests.eventually(client, "find-peer", [:], within: 15)
        let peer = try #require(page["peers"]?.arrayValue?.first { $0["peer_id"] == guestID })
        #expect(peer["info"]?["avatar"] == "https://example.com/g.png")
        #expect(peer["attributes"] == ["seat": "3", "team": "red-marker"])
    }
}

extension JSON {
    /// `{key: self}`.
    fileprivate func wrapped(in key: String) -> JSON { .object([JSON.Member(key, self)]) }
}
