import RoomProtocol
import Testing

@testable import RoomModel

/// Section 16 in the model, with the clock in the test's hand; and the
/// operator events (webhooks) the rules record.
@Suite struct LiveStreamTests {
    @Test func cuesLiveUntilTheirEndAndNoLonger() throws {
        let (registry, clock) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let room = host.room
        _ = try registry.startLiveStream(by: .peer(host), in: room, variants: nil)
        let start = clock.now
        let (cues, deliveries) = try registry.addTimedMetadata(
            by: .peer(host),
            in: room,
            [
                HLSCueRequest(payload: "a", durationS: 1), HLSCueRequest(payload: "b", durationS: 10),
            ]
        )
        #expect(cues.map(\.startDate) == [start, start])
        #expect(cues.map(\.endDate) == [start + 1000, start + 10_000])
        #expect(deliveries.sent == [Sent(push: "on-hls-timed-metadata:2", to: [host.id])])
        #expect(registry.nextDeadline == start + 1000)
        clock.advance(byMillis: 999)
        #expect(registry.liveStream(of: room)?.cues.count == 2, "live until end_date")
        clock.advance(byMillis: 1)
        #expect(registry.liveStream(of: room)?.cues.map(\.payload) == ["b"], "gone once end_date is reached")
        _ = registry.expireDue()  // the room's one cue entry moves on to its next cue
        #expect(registry.nextDeadline == start + 10_000)
        clock.advance(byMillis: 9000)
        _ = registry.expireDue()
        #expect(room.liveStream?.cues.isEmpty == true)
        #expect(registry.nextDeadline == nil)
    }

    @Test func stateAcrossStartStopAndTheRoomsEnd() throws {
        let (registry, clock) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let room = host.room
        #expect(room.liveStream == nil)
        #expect(code { _ = try registry.stopLiveStream(by: .peer(host), in: room) } == .wrongState)
        #expect(
            code { _ = try registry.startLiveStream(by: .peer(guest), in: room, variants: nil) } == .permissionDenied
        )
        let started = try registry.startLiveStream(
            by: .peer(host),
            in: room,
            variants: [HLSVariantRequest(metadata: "m")]
        )
        #expect(started.sent == [Sent(push: "on-hls-update:true", to: [host.id, guest.id])])
        #expect(
            room.liveStream?.variants == [
                HLSVariant(
                    url: "/hls/r1/session-1/index.m3u8",
                    meetingURL: nil,
                    metadata: "m",
                    startedAt: clock.now
                )
            ]
        )
        #expect(room.liveStream?.startedBy == ActorRef(host))
        #expect(code { _ = try registry.startLiveStream(by: .server, in: room, variants: nil) } == .wrongState)
        clock.advance(byMillis: 5)
        _ = try registry.stopLiveStream(by: .server, in: room)
        #expect(room.liveStream?.running == false)
        #expect(room.liveStream?.stoppedBy == .server)
        #expect(room.liveStream?.stoppedAt == clock.now)
        #expect(room.liveStream?.startedBy == ActorRef(host), "who started the last run stays")
        _ = try registry.startLiveStream(by: .server, in: room, variants: nil)
        _ = try registry.endRoom(by: .peer(host), room, reason: "done", lock: false)
        #expect(room.liveStream?.running == false, "the room's end stops it")
    }

    @Test func restrictedPeersMayNotTouchTheStream() throws {
        let (registry, _) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let restricted = try registry.join(Fixtures.request("r", role: "host", viewOnly: true)).peer
        #expect(
            code { _ = try registry.startLiveStream(by: .peer(restricted), in: host.room, variants: nil) }
                == .permissionDenied
        )
        _ = try registry.startLiveStream(by: .peer(host), in: host.room, variants: nil)
        #expect(
            code {
                _ = try registry.addTimedMetadata(
                    by: .peer(restricted),
                    in: host.room,
                    [HLSCueRequest(payload: "p", durationS: 1)]
                )
            }
                == .permissionDenied
        )
        #expect(code { _ = try registry.stopLiveStream(by: .peer(restricted), in: host.room) } == .permissionDenied)
    }

    @Test func operatorEventsInTheOrderTheRulesApplied() throws {
        let (registry, _) = Fixtures.registry()
        registry.recordsOperatorEvents = true
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let room = host.room
        _ = try registry.requestRoleChange(by: .peer(host), in: room, targetID: guest.id, role: "viewer", force: true)
        _ = try registry.startLiveStream(by: .peer(host), in: room, variants: nil)
        _ = registry.leave(guest, reason: .clientRequest)
        _ = try registry.endRoom(by: .server, room, reason: "bye", lock: true)
        let ref = RoomRef(roomID: "r1", sessionID: "session-1")
        #expect(
            registry.takeOperatorEvents().map(\.event) == [
                .sessionOpened(room: ref),
                .peerJoined(room: ref, peer: ActorRef(peerID: host.id.rawValue, role: "host", name: "h", userID: "h")),
                .peerJoined(
                    room: ref,
                    peer: ActorRef(peerID: guest.id.rawValue, role: "guest", name: "g", userID: "g")
                ),
                .roleChanged(
                    room: ref,
                    peer: ActorRef(peerID: guest.id.rawValue, role: "viewer", name: "g", userID: "g"),
                    oldRole: "guest"
                ),
                .hlsStarted(room: ref, by: ActorRef(host), urls: ["/hls/r1/session-1/index.m3u8"]),
                .streamChanged(room: ref, state: .live, by: ActorRef(host), startsAt: nil, vodURL: nil),
                .peerLeft(
                    room: ref,
                    peer: ActorRef(peerID: guest.id.rawValue, role: "viewer", name: "g", userID: "g"),
                    reason: "client request"
                ),
                .hlsStopped(room: ref, by: nil, reason: "room ended"),
                .streamChanged(room: ref, state: .ended, by: nil, startsAt: nil, vodURL: nil),
                .peerLeft(room: ref, peer: ActorRef(host), reason: "room ended"),
                .sessionClosed(room: ref),
                .roomEnded(room: ref, by: .server, reason: "bye", lock: true),
            ]
        )
        #expect(registry.takeOperatorEvents().isEmpty, "taken once")
    }

    @Test func theLastLeaveStopsTheStream() throws {
        let (registry, _) = Fixtures.registry()
        registry.recordsOperatorEvents = true
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let room = host.room  // the registry lets go of it with its last peer
        _ = try registry.startLiveStream(by: .server, in: room, variants: nil)
        _ = registry.takeOperatorEvents()
        _ = registry.leave(host, reason: .websocketClosed)
        let ref = RoomRef(roomID: "r1", sessionID: "session-1")
        #expect(
            registry.takeOperatorEvents().map(\.event) == [
                .peerLeft(room: ref, peer: ActorRef(host), reason: "websocket closed"),
                .hlsStopped(room: ref, by: nil, reason: "room ended"),
                .streamChanged(room: ref, state: .ended, by: nil, startsAt: nil, vodURL: nil),
                .sessionClosed(room: ref),
            ]
        )
        #expect(room.liveStream?.running == false)
    }

    @Test func nothingIsRecordedWithoutAListener() throws {
        let (registry, _) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        _ = registry.leave(host, reason: .clientRequest)
        #expect(registry.takeOperatorEvents().isEmpty)
    }
}
