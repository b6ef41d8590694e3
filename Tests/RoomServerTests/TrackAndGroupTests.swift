import Foundation
import RoomClient
import RoomWire
import Testing

@Suite struct TrackTests {
    @Test func trackAddUpdateRemoveReachSubscribersOnly() async throws {
        let stage = try await Stage()
        let added = try await stage.guest.call("track-add", ["track_id": "g-mic", "type": "audio"])
        #expect(
            added["track"] == [
                "track_id": "g-mic", "type": "audio", "source": "regular", "mute": false, "description": "",
            ]
        )
        for client in [stage.host, stage.viewer, stage.moderator] {
            let push = try await client.next("on-track-add")
            #expect(push["peer_id"] == stage.id("guest"))
            #expect(push["track"]?["track_id"] == "g-mic")
        }
        #expect(await Stage.methods(stage.guest).isEmpty, "a publisher never gets its own track pushes")

        let updated = try await stage.guest.call(
            "track-update",
            ["track_id": "g-mic", "mute": true, "description": "lav"]
        )
        #expect(updated["track"]?["mute"] == true)
        #expect(try await stage.viewer.next("on-track-update")["track"]?["description"] == "lav")
        _ = try await stage.guest.call("track-remove", ["track_id": "g-mic"])
        #expect(try await stage.host.next("on-track-remove")["track"]?["track_id"] == "g-mic")

        // Screen share by the host: the guest sees it; server-made id.
        let screen = try await stage.host.call("track-add", ["type": "video", "source": "screen"])
        let serverID = try #require(screen["track"]?["track_id"]?.stringValue)
        #expect(!serverID.isEmpty)
        #expect(try await stage.guest.next("on-track-add")["track"]?["track_id"]?.stringValue == serverID)
    }

    @Test func trackErrors() async throws {
        let daemon = try await Daemon.start()
        let stage = try await Stage(daemon: daemon)
        #expect(try await stage.viewer.errorCode("track-add", ["type": "audio"]) == 40300)
        #expect(try await stage.guest.errorCode("track-add", ["type": "video", "source": "screen"]) == 40300)
        #expect(try await stage.guest.errorCode("track-add", ["type": "smell"]) == -32602)
        #expect(try await stage.guest.errorCode("track-add", ["type": "audio", "source": "radio"]) == -32602)
        #expect(try await stage.guest.errorCode("track-add", ["type": "audio", "track_id": "bad id!"]) == -32602)
        #expect(try await stage.guest.errorCode("track-add", ["track_id": "x"]) == -32602)
        _ = try await stage.guest.call("track-add", ["type": "audio", "track_id": "dup"])
        #expect(try await stage.host.errorCode("track-add", ["type": "audio", "track_id": "dup"]) == 40903)
        for index in 0..<7 {
            _ = try await stage.guest.call("track-add", ["type": "video", "track_id": .string("v\(index)")])
        }
        #expect(try await stage.guest.errorCode("track-add", ["type": "video"]) == 40903, "a 9th track")
        #expect(try await stage.host.errorCode("track-update", ["track_id": "dup", "mute": true]) == 40401)
        #expect(try await stage.host.errorCode("track-remove", ["track_id": "nope"]) == 40401)
        #expect(try await stage.host.errorCode("track-update", [:]) == -32602)
        let (restricted, _) = try await daemon.join("r", as: "host", restrictions: "view_and_polls_only")
        #expect(try await restricted.errorCode("track-add", ["type": "audio"]) == 40300)
    }

    @Test func joinSnapshotShowsOnlySubscribedTracks() async throws {
        let stage = try await Stage()
        _ = try await stage.guest.call("track-add", ["track_id": "g-cam", "type": "video"])
        let (_, asViewer) = try await stage.daemon.join("v2", as: "viewer")
        let guestEntry = asViewer["peers"]?.arrayValue?.first { $0["role"] == "guest" }
        #expect(guestEntry?["tracks"]?["g-cam"]?["type"] == "video")
    }

    @Test func peersWhoDoNotSubscribeSeeNoTracks() async throws {
        // "backstage" publishes audio but nobody subscribes to it; it sees nobody either.
        let daemon = try await Daemon.start(
            template: """
                {"roles":{"host":{"publishParams":{"allowed":["audio"]},"subscribeParams":{"subscribeToRoles":["host"]}},
                          "backstage":{"publishParams":{"allowed":["audio"]}}}}
                """
        )
        let (host, _) = try await daemon.join("h", as: "host")
        let (backstage, _) = try await daemon.join("b", as: "backstage")
        _ = try await host.call("track-add", ["track_id": "h-mic", "type": "audio"])
        _ = try await backstage.call("track-add", ["track_id": "b-mic", "type": "audio"])
        #expect(await Stage.methods(host).filter { $0 == "on-track-add" }.isEmpty)
        #expect(await Stage.methods(backstage, within: .milliseconds(10)).filter { $0 == "on-track-add" }.isEmpty)
        let (_, late) = try await daemon.join("h2", as: "host")
        let entries = late["peers"]?.arrayValue ?? []
        #expect(entries.first { $0["role"] == "host" }?["tracks"]?["h-mic"] != nil)
        #expect(entries.first { $0["role"] == "backstage" }?["tracks"] == .object([]))
        _ = try await backstage.call("peer-update", ["name": "B"])
        #expect(
            try await host.next("on-peer-update")["peer"]?["tracks"] == .object([]),
            "no tracks in peer objects either"
        )
    }
}

@Suite struct GroupTests {
    @Test func handRaiseGroupsAndTheirPushes() async throws {
        let stage = try await Stage()
        let joined = try await stage.viewer.call("group-join", ["name": "_handraise"])
        #expect(joined["groups"] == ["_handraise"])
        for client in stage.all {
            let push = try await client.next("on-peer-update")
            #expect(push["changed"] == ["groups"])
            #expect(push["peer"]?["groups"] == ["_handraise"])
        }
        #expect(try await stage.viewer.call("group-join", ["name": "_handraise"])["groups"] == ["_handraise"])
        #expect(await Stage.methods(stage.host).isEmpty, "already in: nothing sent")

        #expect(
            try await stage.viewer.errorCode("group-add", ["name": "stage", "peer_id": stage.id("guest")]) == 40300
        )
        #expect(
            try await stage.viewer.errorCode("group-add", ["name": "stage", "peer_id": "nobody"]) == 40300,
            "permission before the peer lookup"
        )
        let removed = try await stage.moderator.call(
            "group-remove",
            ["name": "_handraise", "peer_id": stage.id("viewer")]
        )
        #expect(removed["groups"] == [])
        #expect(try await stage.viewer.next("on-peer-update")["peer"]?["groups"] == [])
        let added = try await stage.host.call("group-add", ["name": "panel", "peer_id": stage.id("guest")])
        #expect(added["groups"] == ["panel"])
        #expect(try await stage.guest.call("group-leave", ["name": "panel"])["groups"] == [])
        #expect(try await stage.host.errorCode("group-add", ["name": "panel", "peer_id": "nobody"]) == 40400)
        #expect(try await stage.host.errorCode("group-join", ["name": "bad name"]) == -32602)
        #expect(try await stage.host.errorCode("group-join", [:]) == -32602)
        for index in 0..<16 { _ = try await stage.host.call("group-join", ["name": .string("g\(index)")]) }
        #expect(try await stage.host.errorCode("group-join", ["name": "g16"]) == 40903)
    }
}

@Suite struct FindPeerTests {
    @Test func findPeerAndPeerIterNextPageThroughTheRoom() async throws {
        let stage = try await Stage()
        _ = try await stage.viewer.call("group-join", ["name": "_handraise"])
        let first = try await stage.host.call("find-peer", ["limit": 3])
        #expect(first["total"] == 4)
        #expect(first["eof"] == false)
        #expect(first["peers"]?.arrayValue?.count == 3)
        let iterator = try #require(first["iterator"])
        let rest = try await stage.host.call("peer-iter-next", ["iterator": iterator, "limit": 3])
        #expect(rest["eof"] == true)
        #expect(rest["iterator"] == .null)
        #expect(rest["peers"]?.arrayValue?.map { $0["role"] } == ["moderator"])
        let hands = try await stage.host.call("find-peer", ["group": "_handraise", "role": "viewer"])
        #expect(hands["peers"]?[0]?["peer_id"] == stage.id("viewer"))
        #expect(hands["total"] == 1)
        #expect(try await stage.host.errorCode("peer-iter-next", ["iterator": "nope"]) == -32602)
        #expect(try await stage.host.errorCode("find-peer", ["limit": 101]) == -32602)
        #expect(try await stage.host.errorCode("find-peer", ["limit": 0]) == -32602)
    }
}

@Suite struct LargeRoomTests {
    @Test func nonPublisherJoinsAndLeavesAreBatchedIntoRoomState() async throws {
        let daemon = try await Daemon.start(
            settings: #"{"room":{"large_room_threshold":3,"room_state_interval_ms":200}}"#
        )
        let (host, _) = try await daemon.join("h", as: "host")
        var viewers: [RoomClient] = []
        for index in 0..<2 { viewers.append(try await daemon.join("v\(index)", as: "viewer").client) }
        #expect(try await host.next("on-peer-join")["peer"]?["role"] == "viewer")
        _ = try await host.next("on-peer-join")
        // The 4th peer makes the room large: no on-peer-join, a room-state instead.
        let (quiet, quietJoin) = try await daemon.join("v2", as: "viewer")
        let state = try await host.next("room-state")
        #expect(state["peer_count"] == 4)
        #expect(state["joined"]?[0]?["peer_id"] == quietJoin["peer"]?["peer_id"])
        #expect(state["left"] == [])
        #expect(!host.drain().contains { $0["method"] == "on-peer-join" })
        #expect(
            try await viewers[0].next("room-state") == ["peer_count": 4],
            "every peer gets the count; only moderating roles get the lists"
        )
        _ = try await quiet.call("leave")
        let after = try await host.next("room-state")
        #expect(after["left"] == [quietJoin["peer"]!["peer_id"]!])
        #expect(try await viewers[0].next("room-state") == ["peer_count": 3])
        // A publisher still joins loudly.
        let (guest, _) = try await daemon.join("g", as: "guest")
        #expect(try await host.next("on-peer-join")["peer"]?["role"] == "guest")
        withExtendedLifetime(guest) {}
    }

    /// Section 28 (issue 32): measured before, 40 renames by one viewer in a
    /// large room reached every other viewer (440 pushes to 11 viewers). Now
    /// a viewer's rename, data, hand raise and a role change between two
    /// roles that may not publish reach only that viewer and the moderating
    /// peers (the host, a moderator); a change that makes it a publisher
    /// still reaches everyone.
    @Test func aViewerUpdatingItselfInALargeRoomReachesOnlyItselfAndTheModerators() async throws {
        let daemon = try await Daemon.start(settings: #"{"room":{"large_room_threshold":3}}"#)
        let (host, _) = try await daemon.join("h", as: "host")
        let (moderator, _) = try await daemon.join("m", as: "moderator")
        let (mover, moverJoin) = try await daemon.join("v0", as: "viewer")
        let (bystander, _) = try await daemon.join("v1", as: "viewer")
        let (other, _) = try await daemon.join("v2", as: "viewer")
        let moverID = moverJoin["peer"]!["peer_id"]!
        let aboutMover: @Sendable (JSON) -> Bool = { $0["peer"]?["peer_id"] == moverID }

        _ = try await mover.call("peer-update", ["name": "Ada", "data": "{\"seat\":3}"])
        _ = try await mover.call("group-join", ["name": "_handraise"])
        for watcher in [host, moderator, mover] {
            #expect(try await watcher.next("on-peer-update", where: aboutMover)["peer"]?["info"]?["name"] == "Ada")
            #expect(try await watcher.next("on-peer-update", where: aboutMover)["changed"] == ["groups"])
        }
        _ = try await host.call(
            "role-change-request",
            ["requested_for": moverID, "role": "moderator", "force": true]
        )
        for watcher in [host, moderator] {
            #expect(try await watcher.next("on-peer-update", where: aboutMover)["changed"] == ["role"])
        }
        // The viewers hear none of it: the marker is the first thing after their joins' room-state.
        _ = try await host.call("broadcast", ["info": ["message": "marker"]])
        for viewer in [bystander, other] {
            _ = try await viewer.next("on-broadcast")
            let heard = viewer.drain().filter { $0["method"] == "on-peer-update" }
            #expect(heard.isEmpty, "a viewer's own updates stay quiet: \(heard)")
        }
        // Becoming a publisher is loud.
        _ = try await host.call(
            "role-change-request",
            ["requested_for": moverID, "role": "guest", "force": true]
        )
        for watcher in [bystander, other] {
            #expect(try await watcher.next("on-peer-update", where: aboutMover)["peer"]?["role"] == "guest")
        }
    }
}
