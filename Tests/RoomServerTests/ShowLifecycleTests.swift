import Foundation
import RoomClient
import RoomTokens
import RoomWire
import Synchronization
import Testing

/// Section 23 over real sockets: rooms that wait, rooms created by REST,
/// the stream's lifecycle, RTMP and recording state, token refresh. Timing
/// runs on test mode's manual clock (over 3 nodes too: `advanceAll`).
@Suite struct ShowLifecycleTests {
    typealias Manual = TestModeTests

    // MARK: rooms that wait

    @Test func aRoomWaitsItsEmptyTimeoutForTheHostToComeBack() async throws {
        let daemon = try await Manual.manualEverywhere(settings: #"{"room":{"empty_timeout_s":30}}"#)
        let admin = try daemon.managementToken()
        let (host, hostJoin) = try await daemon.join("h", as: "host", room: "show")
        let session = try #require(hostJoin["room"]?["session_id"]?.stringValue)
        _ = try await host.call("set-metadata", ["key": "topic", "value": "Pilots"])
        _ = try await host.call("hls-start")
        _ = try await host.call("leave")

        // 29 s later the session is still there, with its store and stream.
        try await Manual.advanceAll(daemon, by: 29_000)
        let room = try await http("GET", daemon, "/v2/active-rooms/show", token: admin)
        #expect(room.status == 200 && room.body["room"]?["peer_count"] == 0)
        let (back, backJoin) = try await daemon.join("h", as: "host", room: "show")
        #expect(backJoin["room"]?["session_id"]?.stringValue == session, "the same session")
        #expect(backJoin["room"]?["hls"]?["state"] == "live")
        #expect(try await back.call("get-metadata", ["key": "topic"])["value"] == "Pilots")

        // Empty again: 30 s later the session ends, and a join opens a new one.
        _ = try await back.call("leave")
        try await Manual.advanceAll(daemon, by: 30_000)
        #expect(try await http("GET", daemon, "/v2/active-rooms/show", token: admin).status == 404)
        let (_, fresh) = try await daemon.join("h", as: "host", room: "show")
        #expect(fresh["room"]?["session_id"]?.stringValue != session)
        #expect(fresh["room"]?["hls"] == .null)
    }

    /// The end of an empty room's wait sends its webhooks at once: nothing
    /// else happens after it that would carry them out.
    @Test func anEmptyRoomsEndSendsItsWebhooksAtOnce() async throws {
        let receiver = try WebhookReceiver()
        let daemon = try await Daemon.start(
            webhooksTo: receiver.url,
            extra: #""events":["session.close.success"]"#,
            settings: #"{"room":{"empty_timeout_s":30}}"#,
            arguments: Manual.manualClock
        )
        let (host, _) = try await daemon.join("h", as: "host", room: "show")
        _ = try await host.call("leave")
        try await Manual.advanceAll(daemon, by: 29_999)
        #expect(receiver.requests.isEmpty, "the session still waits")
        try await Manual.advanceAll(daemon, by: 1)
        let types = try await receiver.deliveredTypes(count: 1)
        #expect(types == ["session.close.success"])
    }

    @Test func restCreatesARoomWithEntriesAndDraftPollsBeforeAnyoneJoins() async throws {
        let daemon = try await Daemon.start()
        let admin = try daemon.managementToken()
        let body = """
            {"room_id":"show","metadata":{"topic":"Pilots","lineup":["A","B"]},
             "polls":[{"title":"Who wins?","type":"poll","questions":[
               {"question":{"text":"Pick one","type":"single-choice"},"options":[{"text":"A"},{"text":"B"}]}]}]}
            """
        let created = try await http("POST", daemon, "/v2/rooms", token: admin, body: body)
        #expect(created.status == 200, "\(created.body)")
        let session = try #require(created.body["room"]?["session_id"]?.stringValue)
        #expect(created.body["room"]?["peer_count"] == 0)
        let again = try await http("POST", daemon, "/v2/rooms", token: admin, body: #"{"room_id":"show"}"#)
        #expect(again.status == 409 && again.body["code"] == 40904, "the room has a session")

        // The first join (on any node of a cluster) lands in that session.
        let (host, hostJoin) = try await daemon.join("h", as: "host", room: "show")
        #expect(hostJoin["room"]?["session_id"]?.stringValue == session)
        let entries = try await host.call("get-metadata")["entries"]
        #expect(entries?.arrayValue?.map { $0["key"] } == ["lineup", "topic"])
        #expect(entries?[0]?["value"] == ["A", "B"] && entries?[1]?["value"] == "Pilots")
        #expect(entries?[1]?["updated_by"]?["info"]?["name"] == "server")
        let polls = try await host.call("poll-list")["polls"]
        #expect(polls?.arrayValue?.count == 1)
        #expect(polls?[0]?["state"] == "created" && polls?[0]?["created_by"] == .null)
        let pollID = try #require(polls?[0]?["poll_id"]?.stringValue)
        _ = try await host.call("poll-start", ["poll_id": .string(pollID)])
    }

    @Test(arguments: [
        (#"{}"#, 400, -32602, "room_id"),
        (#"{"room_id":"a b"}"#, 400, -32602, "room_id"),
        (#"{"room_id":"r","metadata":[1]}"#, 400, -32602, "metadata"),
        (#"{"room_id":"r","metadata":{"bad key":1}}"#, 400, -32602, "metadata.bad key"),
        (#"{"room_id":"r","polls":[{"title":"T"}]}"#, 400, -32602, "type"),
        (
            #"{"room_id":"r","polls":[{"title":"T","type":"poll","questions":[{"question":{"text":"","type":"single-choice"},"options":[{"text":"A"}]}]}]}"#,
            400, -32602, "polls[0].questions[0].question.text"
        ),
        (#"{"room_id":"r","polls":[{"title":"T","type":"poll","duration":-1}]}"#, 400, -32602, "duration"),
    ])
    func badRoomCreationIsRefusedWithTheFieldNamed(body: String, status: Int, code: Int, field: String) async throws {
        let daemon = try await Daemon.start(singleProcess: true)
        let admin = try daemon.managementToken()
        let answer = try await http("POST", daemon, "/v2/rooms", token: admin, body: body)
        #expect(answer.status == status && answer.body["code"]?.intValue == code, "\(answer.body)")
        #expect(answer.body["message"]?.stringValue?.contains(field) == true, "\(answer.body)")
        #expect(try await http("GET", daemon, "/v2/active-rooms/r", token: admin).status == 404, "nothing created")
        let big = String(repeating: "x", count: 5000)
        let large = try await http(
            "POST",
            daemon,
            "/v2/rooms",
            token: admin,
            body: #"{"room_id":"r","metadata":{"k":"\#(big)"}}"#
        )
        #expect(large.status == 413 && large.body["code"] == 41300, "over max_session_value_bytes")
        let app = try daemon.token(room: "r", user: "u", role: "host")
        #expect(try await http("POST", daemon, "/v2/rooms", token: app, body: #"{"room_id":"r"}"#).status == 403)
    }

    // MARK: the stream's life

    @Test func theStreamIsScheduledGoesLiveEndsAndBecomesAVOD() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        let path = "/v2/active-rooms/room-1/stream"
        let scheduled = try await http(
            "POST",
            stage.daemon,
            path,
            token: admin,
            body: #"{"state":"scheduled","starts_at":1900000000000}"#
        )
        #expect(scheduled.status == 200 && scheduled.body["state"] == "scheduled", "\(scheduled.body)")
        #expect(scheduled.body["starts_at"] == 1_900_000_000_000 && scheduled.body["running"] == false)
        for client in stage.all {
            let update = try await client.next("on-hls-update")
            #expect(update["state"] == "scheduled" && update["starts_at"] == 1_900_000_000_000)
        }
        let late = try await stage.daemon.join("late", as: "viewer")
        #expect(late.result["room"]?["hls"]?["state"] == "scheduled", "the Room object carries it")

        _ = try await stage.host.call("hls-start")
        #expect(try await stage.viewer.next("on-hls-update")["state"] == "live")
        let vodTooEarly = try await http(
            "POST",
            stage.daemon,
            path,
            token: admin,
            body: #"{"state":"vod","vod_url":"https://cdn/v.m3u8"}"#
        )
        #expect(vodTooEarly.status == 409 && vodTooEarly.body["code"] == 40904)
        _ = try await stage.host.call("hls-stop")
        #expect(try await stage.viewer.next("on-hls-update")["state"] == "ended")

        let vod = try await http(
            "POST",
            stage.daemon,
            path,
            token: admin,
            body: #"{"state":"vod","vod_url":"https://cdn/v.m3u8"}"#
        )
        #expect(vod.status == 200 && vod.body["state"] == "vod" && vod.body["vod_url"] == "https://cdn/v.m3u8")
        let update = try await stage.viewer.next("on-hls-update")
        #expect(update["state"] == "vod" && update["vod_url"] == "https://cdn/v.m3u8")
        #expect(try await stage.host.failure("hls-start").code == 40904, "a VOD does not go live again")
        #expect(try await http("GET", stage.daemon, path, token: admin).body["state"] == "vod")

        for (body, code) in [
            (#"{}"#, -32602), (#"{"state":"paused"}"#, -32602), (#"{"state":"scheduled"}"#, -32602),
            (#"{"state":"scheduled","starts_at":1.5}"#, -32602), (#"{"state":"vod"}"#, -32602),
            (#"{"state":"scheduled","starts_at":99999999999999999}"#, -32602), (#"{"state":"ended"}"#, 40904),
        ] {
            let answer = try await http("POST", stage.daemon, path, token: admin, body: body)
            #expect(answer.body["code"]?.intValue == code, "\(body): \(answer.body)")
        }
        #expect(
            try await http(
                "POST",
                stage.daemon,
                "/v2/active-rooms/nope/stream",
                token: admin,
                body: #"{"state":"ended"}"#
            ).status == 404
        )
    }

    // MARK: RTMP and recording

    @Test func rtmpAndRecordingStateReachEveryPeerAndREST() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        #expect(try await stage.guest.failure("rtmp-start", ["rtmp_urls": ["rtmp://a/k"]]).code == 40300)
        #expect(try await stage.host.failure("rtmp-start", ["rtmp_urls": []]).code == -32602)
        #expect(try await stage.host.failure("rtmp-start").code == -32602)
        #expect(try await stage.host.failure("rtmp-stop").code == 40904)

        let started = try await stage.host.call(
            "rtmp-start",
            ["rtmp_urls": ["rtmp://a/key1", "rtmp://b/key2"], "meeting_url": "https://app/m", "record": true]
        )
        #expect(started == [:])
        for client in stage.all {
            let rtmp = try await client.next("on-rtmp-update")
            #expect(rtmp["running"] == true && rtmp["rtmp_urls_count"] == 2)
            #expect(rtmp["started_by"]?["peer_id"] == stage.id("host"))
            #expect(try await client.next("on-record-update")["running"] == true)
        }
        let late = try await stage.daemon.join("late", as: "viewer")
        #expect(late.result["room"]?["rtmp"]?["running"] == true)
        #expect(late.result["room"]?["recording"]?["running"] == true)
        let rest = try await http("GET", stage.daemon, "/v2/active-rooms/room-1/rtmp", token: admin)
        #expect(rest.body["rtmp_urls_count"] == 2 && rest.body["urls"] == nil, "stream keys stay secret")
        #expect(try await stage.host.failure("recording-start").code == 40904)

        // REST stops RTMP (and the recording it started) as the server.
        let stop = try await http("POST", stage.daemon, "/v2/active-rooms/room-1/rtmp/stop", token: admin)
        #expect(stop.status == 200)
        #expect(try await stage.viewer.next("on-rtmp-update")["running"] == false)
        let recording = try await stage.viewer.next("on-record-update")
        #expect(recording["running"] == false)
        let again = try await http("POST", stage.daemon, "/v2/active-rooms/room-1/recording/start", token: admin)
        #expect(again.status == 200)
        #expect(try await stage.viewer.next("on-record-update")["started_by"]?["peer_id"] == .null)
        let twice = try await http("POST", stage.daemon, "/v2/active-rooms/room-1/recording/start", token: admin)
        #expect(twice.status == 409 && twice.body["code"] == 40904)
        #expect(try await stage.host.call("recording-stop") == [:])
        let state = try await http("GET", stage.daemon, "/v2/active-rooms/room-1/recording", token: admin)
        #expect(state.body["running"] == false)
    }

    // MARK: token refresh

    /// A token minted for the manual clock's time, `ttl` seconds long.
    private func token(
        _ daemon: Daemon,
        user: String,
        role: String,
        room: String = "room-1",
        ttl: Double
    ) throws
        -> String
    {
        try TokenMinter(secret: daemon.secret).appToken(
            room: room,
            user: user,
            role: role,
            ttl: ttl,
            now: Date(timeIntervalSince1970: Double(Manual.start) / 1000)
        )
    }

    @Test func aPeerIsWarnedBeforeItsTokenExpiresAndRefreshesIt() async throws {
        let daemon = try await Manual.manualEverywhere()
        let client = try await daemon.client()
        let joined = try await client.call(
            "join",
            ["token": .string(try token(daemon, user: "v", role: "viewer", ttl: 400))]
        )
        #expect(joined["peer"] != nil)
        #expect(await client.expectSilence(for: .milliseconds(100)).isEmpty, "400 s left: no warning yet")
        try await Manual.advanceAll(daemon, by: 100_000)  // 300 s (token_refresh_s) left
        let warning = try await client.next("on-token-expiring")
        #expect(warning["expires_at"]?.intValue == Int(Manual.start) + 400_000)

        #expect(
            try await client.failure(
                "token-refresh",
                ["token": .string(try token(daemon, user: "x", role: "viewer", ttl: 3600))]
            ).code == 40004
        )
        #expect(
            try await client.failure(
                "token-refresh",
                ["token": .string(try token(daemon, user: "v", role: "viewer", room: "other", ttl: 3600))]
            ).code == 40002
        )
        #expect(try await client.failure("token-refresh", ["token": "not.a.jwt"]).code == 2004)
        #expect(try await client.failure("token-refresh").code == -32602)
        let refreshed = try await client.call(
            "token-refresh",
            ["token": .string(try token(daemon, user: "v", role: "guest", ttl: 3600))]
        )
        #expect(refreshed["expires_at"]?.intValue == Int(Manual.start) + 3_600_000)
        let policy = try await client.next("on-policy-change")
        #expect(policy["name"] == "guest", "the new token's role, as a forced change")

        // The new token is warned about again, 300 s before it expires.
        try await Manual.advanceAll(daemon, by: 3_600_000 - 100_000 - 300_000 - 1000)
        #expect(await client.expectSilence(for: .milliseconds(100)).allSatisfy { $0["method"] != "on-token-expiring" })
        try await Manual.advanceAll(daemon, by: 1000)
        #expect(try await client.next("on-token-expiring")["expires_at"]?.intValue == Int(Manual.start) + 3_600_000)
    }

    @Test func aTokenThatExpiredInsideTheGraceStillResumesItsPeer() async throws {
        let daemon = try await Manual.manual()  // one node: the client's drop is seen where its peer lives
        let old = try token(daemon, user: "g", role: "guest", ttl: 60)
        let client = try await daemon.client()
        let joined = try await client.call("join", ["token": .string(old)])
        let peerID = try #require(joined["peer"]?["peer_id"])
        try await Manual.advance(daemon, by: 50_000)
        await client.abort()
        try await daemon.waitForGraces()  // the daemon saw the drop: the 20-s grace starts
        try await Manual.advance(daemon, by: 15_000)  // the token expired 5 s ago, the grace has 5 s left

        let fresh = try await daemon.client()
        #expect(try await fresh.failure("join", ["token": .string(old)]).code == 40109, "a new peer needs a live token")
        let again = try await daemon.client()
        let resumed = try await again.call("join", ["token": .string(old), "peer_id": peerID])
        #expect(resumed["resumed"] == true && resumed["peer"]?["peer_id"] == peerID)

        // Past the grace the old token resumes nothing.
        await again.abort()
        try await daemon.waitForGraces(2)
        try await Manual.advance(daemon, by: 21_000)
        let late = try await daemon.client()
        #expect(try await late.failure("join", ["token": .string(old), "peer_id": peerID]).code == 40109)
    }

    // MARK: the Swift kit

    @Test func theSwiftKitRefreshesItsTokenByItselfAndDecodesTheNewState() async throws {
        let daemon = try await Manual.manualEverywhere()
        let host = try await RoomClient.connect(to: daemon.url, defaultTimeout: Daemon.waitTimeout)
        let joined = try await host.join(token: try token(daemon, user: "h", role: "host", ttl: 400))
        #expect(joined.room.rtmp == nil && joined.room.recording == nil && joined.room.hls == nil)
        let provided = Atomic<Int>(0)
        let minted = try token(daemon, user: "h", role: "host", ttl: 7200)
        let refresher = host.refreshTokens {
            provided.add(1, ordering: .relaxed)
            return minted
        }
        defer { refresher.cancel() }
        try await Manual.advanceAll(daemon, by: 100_000)  // the warning comes; the kit answers it
        for _ in 0..<100 where provided.load(ordering: .relaxed) == 0 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(provided.load(ordering: .relaxed) == 1, "asked the app for a token once")
        // The old token would have expired at +400 s; the refreshed one is warned about at +6900 s.
        try await Manual.advanceAll(daemon, by: 6_800_000 - 1000)
        try await Task.sleep(for: .milliseconds(100))
        #expect(provided.load(ordering: .relaxed) == 1)
        try await Manual.advanceAll(daemon, by: 1000)
        for _ in 0..<100 where provided.load(ordering: .relaxed) == 1 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(provided.load(ordering: .relaxed) == 2, "the new token is warned about in its turn")

        try await host.startRTMP(urls: ["rtmp://a/key"], record: true)
        let rtmp = try await host.next { event -> RTMPState? in
            if case .rtmpUpdate(let state) = event { state } else { nil }
        }
        #expect(rtmp.running && rtmp.urlsCount == 1 && rtmp.startedBy?.peerID == joined.peer.peerID)
        try await host.stopRTMP()
        try await host.startRecording()
        try await host.stopRecording()
        let late = try await RoomClient.connect(to: daemon.url, defaultTimeout: Daemon.waitTimeout)
        let lateJoin = try await late.join(token: try token(daemon, user: "v", role: "viewer", ttl: 7200))
        #expect(lateJoin.room.rtmp?.running == false && lateJoin.room.recording?.running == false)
        try await host.startHLSStreaming()
        let stream = try await late.next { event -> HLSState? in
            if case .hlsUpdate(let state) = event { state } else { nil }
        }
        #expect(stream.state == .live && stream.running)
    }
}
