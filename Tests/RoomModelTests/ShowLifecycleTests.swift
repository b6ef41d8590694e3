import RoomConfig
import RoomWire
import Testing

@testable import RoomModel

/// Section 23 in the model: rooms that wait, rooms created ahead, the
/// stream's lifecycle, RTMP and recording state, token expiry warnings.
@Suite struct ShowLifecycleTests {
    private func settings(emptyTimeoutS: Int = 0, tokenRefreshS: Int = 300) -> Settings {
        var settings = Settings()
        settings.room.emptyTimeoutS = emptyTimeoutS
        settings.room.tokenRefreshS = tokenRefreshS
        return settings
    }

    // MARK: rooms that wait

    @Test func anEmptyRoomKeepsItsSessionUntilItsTimeoutThenEnds() throws {
        let (registry, clock) = Fixtures.registry(settings: settings(emptyTimeoutS: 30))
        registry.recordsOperatorEvents = true
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let room = host.room
        _ = try registry.setMetadata(by: .peer(host), in: room, key: "topic", value: .string("Pilots"))
        _ = registry.leave(host, reason: .websocketClosed)
        #expect(registry.room("r1") === room, "the session waits")
        #expect(registry.nextDeadline == clock.now + 30_000)

        // The host comes back within the timeout: the same session, its poll.
        clock.advance(byMillis: 29_999)
        #expect(registry.expireDue().isEmpty)
        let back = try registry.join(Fixtures.request("h", role: "host")).peer
        #expect(back.room === room && room.sessionStore.entry("topic").version == 1)
        #expect(registry.nextDeadline == nil, "a joined room does not wait")

        // Empty again: the timeout starts over and ends the session.
        _ = registry.leave(back, reason: .clientRequest)
        clock.advance(byMillis: 30_000)
        _ = registry.takeOperatorEvents()
        #expect(registry.expireDue().compactMap { $0.log?.metadata["room"] } == [room.id.rawValue])
        #expect(registry.room("r1") == nil)
        #expect(registry.takeOperatorEvents().map(\.event) == [.sessionClosed(room: RoomRef(room))])
        let next = try registry.join(Fixtures.request("h", role: "host")).peer
        #expect(next.room.sessionID != room.sessionID && next.room.sessionStore.entry("topic").version == 0)
    }

    @Test func withoutATimeoutTheSessionEndsWithItsLastPeer() throws {
        let (registry, _) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        _ = registry.leave(host, reason: .clientRequest)
        #expect(registry.room("r1") == nil)
        #expect(registry.nextDeadline == nil)
    }

    @Test func endRoomEndsAWaitingRoomAtOnce() throws {
        let (registry, _) = Fixtures.registry(settings: settings(emptyTimeoutS: 600))
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let room = host.room
        _ = registry.leave(host, reason: .clientRequest)
        _ = try registry.endRoom(by: .server, room, reason: "cancelled", lock: false)
        #expect(registry.room("r1") == nil)
        #expect(registry.nextDeadline == nil, "its wait is over too")
    }

    @Test func aRoomCreatedAheadHasItsEntriesAndDraftPollsAndWaitsAnHour() throws {
        let (registry, clock) = Fixtures.registry(settings: settings(emptyTimeoutS: 60))
        let room = try registry.createRoom(
            "r1",
            metadata: [("topic", .string("Pilots")), ("n", .int(3))],
            polls: [
                PreparedPoll(
                    info: PollInfoInput(title: "Who wins?", type: .poll),
                    questions: [QuestionInput(text: "Pick", type: .singleChoice, options: ["A", "B"])]
                )
            ]
        )
        #expect(room.sessionStore.entry("topic").value == Array(#""Pilots""#.utf8))
        let poll = try #require(room.polls.ordered.first)
        #expect(poll.createdBy == nil && poll.state == .created && poll.questions.count == 1)
        #expect(registry.nextDeadline == clock.now + 3_600_000, "at least an hour for the first join")
        #expect(code { _ = try registry.createRoom("r1", metadata: [], polls: []) } == .wrongState)
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        #expect(host.room === room)
        #expect(registry.nextDeadline == nil)
    }

    @Test func aRoomCreatedWithABadPollOrEntryIsNotCreated() throws {
        let (registry, _) = Fixtures.registry()
        let bad = PreparedPoll(
            info: PollInfoInput(title: "T", type: .poll),
            questions: [QuestionInput(text: "", type: .singleChoice, options: ["A"])]
        )
        #expect(code { _ = try registry.createRoom("r1", metadata: [], polls: [bad]) } == .invalidParams)
        #expect(
            code { _ = try registry.createRoom("r1", metadata: [("bad key!", .null)], polls: []) } == .invalidParams
        )
        #expect(registry.room("r1") == nil)
        #expect(registry.nextDeadline == nil)
    }

    // MARK: the stream's life

    @Test func theStreamGoesScheduledLiveEndedVOD() throws {
        let (registry, _) = Fixtures.registry()
        registry.recordsOperatorEvents = true
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let room = host.room
        _ = registry.takeOperatorEvents()
        #expect(code { _ = try registry.stopLiveStream(by: .server, in: room) } == .wrongState, "nothing to end")
        #expect(code { _ = try registry.publishVOD(by: .server, in: room, url: "https://v") } == .wrongState)
        #expect(
            code { _ = try registry.scheduleLiveStream(by: .peer(guest), in: room, startsAt: 5) } == .permissionDenied
        )

        let scheduled = try registry.scheduleLiveStream(by: .server, in: room, startsAt: 1_800_000_000_000)
        #expect(scheduled.map(\.push.name) == ["on-hls-update:false"])
        #expect(room.liveStream?.state == .scheduled && room.liveStream?.startsAt == 1_800_000_000_000)
        _ = try registry.scheduleLiveStream(by: .server, in: room, startsAt: 1_800_000_060_000)  // moved
        #expect(room.liveStream?.startsAt == 1_800_000_060_000)

        _ = try registry.startLiveStream(by: .peer(host), in: room, variants: nil)
        #expect(room.liveStream?.state == .live && room.liveStream?.running == true)
        #expect(room.liveStream?.startsAt == 1_800_000_060_000, "kept once live")
        #expect(code { _ = try registry.scheduleLiveStream(by: .server, in: room, startsAt: 1) } == .wrongState)
        #expect(code { _ = try registry.publishVOD(by: .server, in: room, url: "https://v") } == .wrongState)

        _ = try registry.stopLiveStream(by: .peer(host), in: room)
        #expect(room.liveStream?.state == .ended)
        #expect(code { _ = try registry.publishVOD(by: .server, in: room, url: "") } == .invalidParams)
        _ = try registry.publishVOD(by: .server, in: room, url: "https://cdn/vod.m3u8")
        #expect(room.liveStream?.state == .vod && room.liveStream?.vodURL == "https://cdn/vod.m3u8")
        #expect(code { _ = try registry.startLiveStream(by: .peer(host), in: room, variants: nil) } == .wrongState)
        #expect(code { _ = try registry.stopLiveStream(by: .server, in: room) } == .wrongState)

        let ref = RoomRef(room)
        let kinds = registry.takeOperatorEvents().map(\.event.kind.rawValue)
        #expect(
            kinds == [
                "stream.scheduled", "stream.scheduled", "hls.started.success", "stream.live", "hls.stopped.success",
                "stream.ended", "stream.vod",
            ]
        )
        _ = ref
    }

    @Test func aScheduledShowIsCancelledAndAnEndedOneRestarts() throws {
        let (registry, _) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let room = host.room
        _ = try registry.scheduleLiveStream(by: .server, in: room, startsAt: 1_800_000_000_000)
        _ = try registry.stopLiveStream(by: .peer(host), in: room)
        #expect(room.liveStream?.state == .ended && room.liveStream?.stoppedBy == ActorRef(host))
        // 1.1's restart: ended → live again.
        _ = try registry.startLiveStream(by: .peer(host), in: room, variants: nil)
        #expect(room.liveStream?.state == .live)
    }

    // MARK: RTMP and recording

    @Test func rtmpAndRecordingNeedTheirPermissionsAndTellEveryone() throws {
        let (registry, _) = Fixtures.registry()
        registry.recordsOperatorEvents = true
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let room = host.room
        _ = registry.takeOperatorEvents()
        #expect(
            code {
                _ = try registry.startRTMP(
                    by: .peer(guest),
                    in: room,
                    meetingURL: nil,
                    urls: ["rtmp://a"],
                    record: false
                )
            } == .permissionDenied
        )
        #expect(code { _ = try registry.startRecording(by: .peer(guest), in: room) } == .permissionDenied)
        #expect(
            code { _ = try registry.startRTMP(by: .peer(host), in: room, meetingURL: nil, urls: [], record: false) }
                == .invalidParams
        )
        #expect(
            code {
                _ = try registry.startRTMP(
                    by: .peer(host),
                    in: room,
                    meetingURL: nil,
                    urls: ["a", "b", "c", "d"],
                    record: false
                )
            } == .invalidParams
        )
        #expect(code { _ = try registry.stopRTMP(by: .peer(host), in: room) } == .wrongState)
        #expect(code { _ = try registry.stopRecording(by: .peer(host), in: room) } == .wrongState)

        let started = try registry.startRTMP(
            by: .peer(host),
            in: room,
            meetingURL: "https://app/meet",
            urls: ["rtmp://a/key1", "rtmp://b/key2"],
            record: true
        )
        #expect(started.map(\.push.name) == ["on-rtmp-update:true", "on-record-update:true"])
        #expect(started.allSatisfy { $0.to == [host.id, guest.id] })
        #expect(room.rtmp?.urls.count == 2 && room.recording?.running == true)
        #expect(
            code { _ = try registry.startRTMP(by: .peer(host), in: room, meetingURL: nil, urls: ["x"], record: false) }
                == .wrongState
        )
        #expect(code { _ = try registry.startRecording(by: .peer(host), in: room) } == .wrongState)

        // rtmp-stop stops the recording record:true started (100ms's stopRTMPAndRecording).
        let stopped = try registry.stopRTMP(by: .peer(host), in: room)
        #expect(stopped.map(\.push.name) == ["on-rtmp-update:false", "on-record-update:false"])
        #expect(room.rtmp?.urls == [], "the stream keys are not kept")

        // A recording of its own survives an RTMP stop; the room's end stops both.
        _ = try registry.startRecording(by: .peer(host), in: room)
        _ = try registry.startRTMP(by: .server, in: room, meetingURL: nil, urls: ["rtmp://a"], record: false)
        #expect(try registry.stopRTMP(by: .server, in: room).map(\.push.name) == ["on-rtmp-update:false"])
        _ = try registry.startRTMP(by: .server, in: room, meetingURL: nil, urls: ["rtmp://a"], record: false)
        _ = try registry.endRoom(by: .server, room, reason: "bye", lock: false)
        let kinds = registry.takeOperatorEvents().map(\.event.kind.rawValue).filter {
            $0.hasPrefix("rtmp") || $0.hasPrefix("recording")
        }
        #expect(
            kinds == [
                "rtmp.started.success", "recording.started.success", "rtmp.stopped.success",
                "recording.stopped.success", "recording.started.success", "rtmp.started.success",
                "rtmp.stopped.success", "rtmp.started.success", "rtmp.stopped.success", "recording.stopped.success",
            ]
        )
    }

    // MARK: token expiry

    @Test func aPeerIsWarnedOnceBeforeItsTokenExpiresAndAgainAfterARefresh() throws {
        let (registry, clock) = Fixtures.registry(settings: settings(tokenRefreshS: 300))
        var request = Fixtures.request("h", role: "host")
        request.tokenExpiresAt = clock.now + 600_000
        let host = try registry.join(request).peer
        #expect(registry.nextDeadline == clock.now + 300_000)
        clock.advance(byMillis: 299_999)
        #expect(registry.expireDueDeliveries().isEmpty)
        clock.advance(byMillis: 1)
        let warned = registry.expireDueDeliveries()
        #expect(warned.map(\.push.name) == ["on-token-expiring:\(clock.now + 300_000)"])
        #expect(warned.first?.to == [host.id])
        clock.advance(byMillis: 10_000)
        #expect(registry.expireDueDeliveries().isEmpty, "once")
        #expect(registry.nextDeadline == nil)

        // A refresh with a token that expires in 10 minutes: warned again 5 minutes on.
        let newExpiry = clock.now + 600_000
        _ = try registry.refreshToken(
            of: host,
            with: RefreshedToken(roomID: "r1", userID: "h", roleName: "host", expiresAt: newExpiry)
        )
        #expect(host.tokenExpiresAt == newExpiry)
        #expect(registry.nextDeadline == newExpiry - 300_000)
    }

    @Test func aTokenThatExpiresSoonIsWarnedAtOnceAndLeftPeersAreNot() throws {
        let (registry, clock) = Fixtures.registry(settings: settings(tokenRefreshS: 300))
        var request = Fixtures.request("h", role: "host")
        request.tokenExpiresAt = clock.now + 60_000
        let host = try registry.join(request).peer
        #expect(registry.nextDeadline == clock.now)
        var other = Fixtures.request("g", role: "guest")
        other.tokenExpiresAt = clock.now + 60_000
        let guest = try registry.join(other).peer
        _ = registry.leave(guest, reason: .clientRequest)
        #expect(registry.expireDueDeliveries().flatMap(\.to) == [host.id])
    }

    @Test func aRefreshKeepsUserAndRoomAndFollowsTheNewRole() throws {
        let (registry, _) = Fixtures.registry()
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let refresh = { (room: RoomID, user: UserID, role: String) throws -> Effects in
            try registry.refreshToken(
                of: guest,
                with: RefreshedToken(roomID: room, userID: user, roleName: role, expiresAt: 1)
            )
        }
        #expect(code { _ = try refresh("r1", "someone", "guest") } == .peerIDOfOtherUser)
        #expect(code { _ = try refresh("r2", "g", "guest") } == .roomIDMismatch)
        #expect(code { _ = try refresh("r1", "g", "nobody") } == .roleClaimInvalid)
        let effects = try refresh("r1", "g", "viewer")
        #expect(guest.role.name == "viewer", "the new token's role, as a forced change")
        #expect(effects.deliveries.contains { $0.push.name == "on-policy-change:viewer" })
    }

    @Test func anExpiredTokenResumesOnlyAPeerStillThere() throws {
        let (registry, _) = Fixtures.registry(settings: settings())
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        var fresh = Fixtures.request("x", role: "host")
        fresh.tokenExpired = true
        #expect(code { _ = try registry.join(fresh) } == .badJWT, "a new peer needs a valid token")
        var resume = Fixtures.request("h", role: "host")
        resume.resumePeerID = host.id
        resume.tokenExpired = true
        #expect(try registry.join(resume).resumed)
        resume.resumePeerID = "gone"
        #expect(code { _ = try registry.join(resume) } == .badJWT)
    }
}

/// Section 23's state in a cluster's snapshot (Snapshot/): it survives a
/// takeover, and a snapshot saved before it reads as before.
@Suite struct ShowLifecycleSnapshotTests {
    @Test func streamStateRTMPAndRecordingRoundTripAndSurviveATakeover() throws {
        let (registry, _) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let room = host.room
        _ = try registry.scheduleLiveStream(by: .server, in: room, startsAt: 1_800_000_000_000)
        _ = try registry.startRTMP(
            by: .peer(host),
            in: room,
            meetingURL: "https://m",
            urls: ["rtmp://a/k"],
            record: true
        )
        let snapshot = registry.snapshot(of: room)
        #expect(snapshot.liveStream?.state == .scheduled && snapshot.rtmp?.urls == ["rtmp://a/k"])
        let decoded = try RoomSnapshot(json: snapshot.encodeJSON())
        #expect(decoded == snapshot)
        let (other, _) = Fixtures.registry()
        let restored = try #require(other.restore(decoded, graceMillis: 5000))
        #expect(restored.liveStream?.startsAt == 1_800_000_000_000 && restored.rtmp?.running == true)
        #expect(restored.recording?.withRTMP == true)
        // rtmp-stop on the new home still stops the recording record:true started.
        let peer = try #require(restored.peer(host.id))
        #expect(try other.stopRTMP(by: .peer(peer), in: restored).map(\.push.name).count == 2)
    }

    @Test func aSnapshotWithoutTheLifecycleFieldsReadsAsBefore() throws {
        let (registry, _) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        _ = try registry.startLiveStream(by: .peer(host), in: host.room, variants: nil)
        var text = String(decoding: registry.snapshot(of: host.room).encodeJSON(), as: UTF8.self)
        text = text.replacing(#""state":"live","starts_at":null,"vod_url":null,"#, with: "")
        text = text.replacing(#","rtmp":null,"recording":null}"#, with: "}")
        #expect(!text.contains("\"state\"") && !text.contains("\"rtmp\""))
        let decoded = try RoomSnapshot(json: Array(text.utf8))
        #expect(decoded.liveStream?.state == .live && decoded.rtmp == nil)
        let bad = text.replacing(#""running":true"#, with: #""running":true,"state":"vod""#)
        #expect(throws: RoomSnapshotError.self) { _ = try RoomSnapshot(json: Array(bad.utf8)) }
    }
}

/// Refreshes that could loop: the same token again, or a short one.
@Suite struct TokenRefreshLoopTests {
    @Test func aRefreshThatDoesNotExtendTheTokenIsNotWarnedAgainAndAShortOneAtItsHalfLife() throws {
        var settings = Settings()
        settings.room.tokenRefreshS = 300
        let (registry, clock) = Fixtures.registry(settings: settings)
        var request = Fixtures.request("h", role: "host")
        request.tokenExpiresAt = clock.now + 200_000
        let host = try registry.join(request).peer
        #expect(registry.expireDueDeliveries().count == 1, "inside the window at join: at once")
        let same = RefreshedToken(roomID: "r1", userID: "h", roleName: "host", expiresAt: clock.now + 200_000)
        _ = try registry.refreshToken(of: host, with: same)
        #expect(registry.nextDeadline == nil, "the same expiry: no second warning, no loop")

        // A 4-minute token (under token_refresh_s) is warned at its half-life, not at once.
        let short = RefreshedToken(roomID: "r1", userID: "h", roleName: "host", expiresAt: clock.now + 240_000)
        _ = try registry.refreshToken(of: host, with: short)
        #expect(registry.nextDeadline == clock.now + 120_000)
        #expect(registry.expireDueDeliveries().isEmpty)
        clock.advance(byMillis: 120_000)
        #expect(registry.expireDueDeliveries().count == 1)
    }
}
