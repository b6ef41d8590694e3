import Foundation
import RoomClient
import RoomWire
import Testing

/// The call-in queue over real sockets (PROTOCOL.md section 26), on test
/// mode's manual clock wherever a timer decides (the queue push's interval,
/// an invitation's expiry, a block's end, a reconnect grace). Shipped roles:
/// host and moderator moderate, `guest` is `guest_role`, viewers ask.
@Suite struct StageQueueServerTests {
    static func manualStage(settings: String? = nil) async throws -> Stage {
        try await Stage(daemon: await TestModeTests.manualEverywhere(settings: settings))
    }

    static func ask(_ client: RoomClient, _ note: String? = nil) async throws -> JSON {
        let params: JSON = note.map { ["note": .string($0)] } ?? [:]
        return try #require(try await client.call("stage-request", params)["request"])
    }

    /// The error of a call that must fail, with its `data`.
    static func rpcError(_ client: RoomClient, _ method: String, _ params: JSON) async throws -> (Int, String, JSON?) {
        do {
            let result = try await client.call(method, params)
            throw DaemonError(description: "\(method) succeeded unexpectedly: \(result)")
        } catch RoomClientError.rpc(let code, let message, let data) {
            return (code, message, data)
        }
    }

    /// The Swift kit's typed calls (RoomClient's StageMethods.swift), as a
    /// harness scripts a call-in: ask with a note, the queue, invite,
    /// accept, live; a declined troll, blocked, cannot ask again.
    @Test func theSwiftKitScriptsACallIn() async throws {
        let stage = try await Self.manualStage()
        let asked = try await stage.viewer.askToJoinStage(note: "a question about the tour")
        #expect(asked.status == .waiting && asked.position == 1 && asked.note == "a question about the tour")
        #expect(asked.peer.peerID == stage.ids["viewer"] && asked.userID == "v" && asked.invitedBy == nil)
        let (queue, total) = try await stage.host.stageQueue()
        #expect(total == 1 && queue == [asked])
        let (invited, token) = try await stage.host.invite(queue[0])
        #expect(invited.status == .invited && invited.role == "guest" && invited.position == nil)
        #expect(invited.invitedBy?.peerID == stage.ids["host"])
        _ = try await stage.viewer.acceptRoleChange(token: token)
        let (live, _) = try await stage.moderator.stageQueue(status: .live)
        #expect(live.map(\.requestID) == [asked.requestID] && live[0].status == .live)

        let troll = try await stage.daemon.join("t", as: "viewer").client
        let trolling = try await troll.askToJoinStage()
        #expect(trolling.note == "" && trolling.position == 1)
        try await stage.host.declineStageRequest(trolling.requestID, reason: "not today")
        try await stage.host.blockFromStage("t")
        #expect(try await troll.errorCode("stage-request", [:]) == 40303)
        try await stage.host.unblockFromStage("t")
        _ = try await troll.askToJoinStage(note: "sorry")
        try await troll.withdrawStageRequest()
        let (withdrawn, _) = try await stage.host.stageQueue(status: .withdrawn)
        #expect(withdrawn.map(\.userID) == ["t"])
    }

    /// The kit decodes the queue's pushes: moderating peers get
    /// `.stageQueue(changed:removed:waiting:)`, the caller `.stageStatus`
    /// at each status change, both as typed ``CallInRequest``s.
    @Test func theSwiftKitDecodesTheQueuePushes() async throws {
        let stage = try await Self.manualStage()
        let asked = try await stage.viewer.askToJoinStage(note: "about the tour")
        let mine = try await stage.viewer.next { if case .stageStatus(let request) = $0 { request } else { nil } }
        #expect(mine == asked && mine.status == .waiting)
        try await TestModeTests.advanceAll(stage.daemon, by: 1000)
        for moderating in [stage.host, stage.moderator] {
            let queue = try await moderating.next { event in
                if case .stageQueue(let changed, let removed, let waiting) = event {
                    (changed, removed, waiting)
                } else {
                    nil
                }
            }
            #expect(queue.0 == [asked] && queue.1 == [] && queue.2 == 1)
        }

        let (_, token) = try await stage.host.invite(asked)
        let invited = try await stage.viewer.next { if case .stageStatus(let request) = $0 { request } else { nil } }
        #expect(invited.status == .invited && invited.invitedBy?.peerID == stage.ids["host"] && invited.role == "guest")
        _ = try await stage.viewer.acceptRoleChange(token: token)
        let live = try await stage.viewer.next { if case .stageStatus(let request) = $0 { request } else { nil } }
        #expect(live.status == .live && live.peer.role == "guest")
        try await TestModeTests.advanceAll(stage.daemon, by: 1000)
        let onStage = try await stage.moderator.next { event in
            if case .stageQueue(let changed, _, let waiting) = event { (changed, waiting) } else { nil }
        }
        #expect(onStage.0.map(\.status) == [.live] && onStage.1 == 0)
        #expect(RoomEvent.stageStatus(live).method == "on-stage-status")

        _ = try await stage.host.requestRoleChange(for: try #require(asked.peer.peerID), to: "viewer", force: true)
        let done = try await stage.viewer.next { if case .stageStatus(let request) = $0 { request } else { nil } }
        #expect(done.status == .done && done.requestID == asked.requestID)
        try await TestModeTests.advanceAll(stage.daemon, by: 1000)
        let removed = try await stage.host.next { event in
            if case .stageQueue(let changed, let removed, _) = event, changed.isEmpty { removed } else { nil }
        }
        #expect(removed == [asked.requestID])
    }

    /// A viewer asks, the moderating peers see it on the next interval (not
    /// a millisecond before), a host invites (a polite role change), the
    /// viewer accepts and is live; every status change reaches the viewer.
    @Test func aCallerAsksIsInvitedAcceptsAndIsLive() async throws {
        let stage = try await Self.manualStage()
        let asked = try await Self.ask(stage.viewer, "about the budget")
        #expect(asked["status"] == "waiting" && asked["position"] == 1 && asked["note"] == "about the budget")
        #expect(asked["peer"]?["peer_id"] == stage.id("viewer") && asked["user_id"] == "v")
        #expect(asked["invited_by"] == .null && asked["role"] == .null)
        let id = try #require(asked["request_id"])
        let status = try await stage.viewer.next("on-stage-status")
        #expect(status["request"]?["status"] == "waiting")

        try await TestModeTests.advanceAll(stage.daemon, by: 999)
        #expect(await Stage.methods(stage.host).isEmpty, "not a millisecond before interval_ms")
        try await TestModeTests.advanceAll(stage.daemon, by: 1)
        for moderating in [stage.host, stage.moderator] {
            let queue = try await moderating.next("on-stage-queue")
            #expect(queue["waiting"] == 1 && queue["removed"] == [])
            #expect(queue["changed"]?.arrayValue?.map { $0["request_id"] } == [id])
        }
        #expect(await Stage.methods(stage.guest).isEmpty, "nobody else learns of the queue")

        let listed = try await stage.moderator.call("stage-list", [:])
        #expect(listed["total"] == 1 && listed["requests"]?[0]?["request_id"] == id)

        let invited = try await stage.host.call("stage-invite", ["request_id": id])
        #expect(invited["request"]?["status"] == "invited" && invited["request"]?["role"] == "guest")
        #expect(invited["request"]?["invited_by"]?["peer_id"] == stage.id("host"))
        let token = try #require(invited["token"])
        let request = try await stage.viewer.next("on-role-change-request")
        #expect(request["token"] == token && request["role"] == "guest")
        #expect(try await stage.viewer.next("on-stage-status")["request"]?["status"] == "invited")

        _ = try await stage.viewer.call("role-change", ["token": token])
        let live = try await stage.viewer.next("on-stage-status")
        #expect(live["request"]?["status"] == "live" && live["request"]?["peer"]?["role"] == "guest")
        let lives = try await stage.host.call("stage-list", ["status": "live"])
        #expect(lives["total"] == 1 && lives["requests"]?[0]?["position"] == .null)

        let (_, joined) = try await stage.daemon.join("h2", as: "host")
        #expect(joined["stage"] == ["waiting": 0], "a moderating peer's join carries the count")
        let (_, other) = try await stage.daemon.join("v2", as: "viewer")
        #expect(other["stage"] == nil, "left out for a peer without a request")
    }

    /// The invitation's expiry (`request_ttl_s`, 60 s) puts the request back
    /// at its old place; a rejection declines it.
    @Test func anExpiredInvitationWaitsAgainAtItsPlaceAndARejectionDeclines() async throws {
        let stage = try await Self.manualStage()
        let (second, _) = try await stage.daemon.join("v2", as: "viewer")
        let first = try #require(try await Self.ask(stage.viewer)["request_id"])
        _ = try await stage.viewer.next("on-stage-status")
        try await TestModeTests.advanceAll(stage.daemon, by: 1)
        let later = try #require(try await Self.ask(second)["request_id"])
        _ = try await second.next("on-stage-status")
        let invited = try await stage.host.call("stage-invite", ["request_id": first])
        _ = try await stage.viewer.next("on-role-change-request")
        _ = try await stage.viewer.next("on-stage-status")
        let waiting = try await stage.host.call("stage-list", [:])
        #expect(waiting["requests"]?.arrayValue?.map { $0["request_id"] } == [later])
        #expect(waiting["requests"]?[0]?["position"] == 1)

        _ = stage.viewer.drain()  // v2's join
        try await TestModeTests.advanceAll(stage.daemon, by: 59_999)
        #expect(await Stage.methods(stage.viewer).isEmpty, "not a millisecond early")
        try await TestModeTests.advanceAll(stage.daemon, by: 1)
        let back = try await stage.viewer.next("on-stage-status")
        #expect(back["request"]?["status"] == "waiting" && back["request"]?["position"] == 1)
        #expect(try await stage.viewer.errorCode("role-change", ["token": invited["token"]!]) == 40403)
        let order = try await stage.host.call("stage-list", [:])
        #expect(order["requests"]?.arrayValue?.map { $0["request_id"] } == [first, later], "at its old place")

        let again = try await stage.host.call("stage-invite", ["request_id": first])
        _ = try await stage.viewer.next("on-role-change-request")
        _ = try await stage.viewer.next("on-stage-status")
        _ = try await stage.viewer.call("role-change-reject", ["token": again["token"]!])
        #expect(try await stage.viewer.next("on-stage-status")["request"]?["status"] == "declined")
        let declined = try await stage.host.call("stage-list", ["status": "declined"])
        #expect(declined["total"] == 1)
    }

    @Test func badCallsGetTheDocumentedCodeWithTheFieldNamed() async throws {
        let stage = try await Stage(
            daemon: await Daemon.start(settings: #"{"stage":{"note_bytes":10,"max_waiting":1}}"#)
        )
        let (restricted, _) = try await stage.daemon.join("r", as: "viewer", restrictions: "view_and_polls_only")
        let (other, _) = try await stage.daemon.join("o", as: "viewer")
        let cases: [(RoomClient, String, JSON, Int, String)] = [
            (stage.host, "stage-request", [:], 40300, "moderating"),
            (stage.guest, "stage-request", [:], 40300, "guest_role"),
            (stage.viewer, "stage-request", ["note": "01234567890"], 41300, "note"),
            (stage.viewer, "stage-request", ["note": 5], -32602, "note"),
            (stage.viewer, "stage-withdraw", [:], 40407, "stage request"),
            (stage.viewer, "stage-list", [:], 40300, "stage-list"),
            (stage.host, "stage-list", ["status": "gone"], -32602, "status"),
            (stage.host, "stage-list", ["limit": 101], -32602, "limit"),
            (stage.host, "stage-invite", [:], -32602, "request_id"),
            (stage.host, "stage-invite", ["request_id": "nope"], 40407, "request_id"),
            (stage.host, "stage-decline", ["request_id": "nope"], 40407, "request_id"),
            (stage.host, "stage-block", [:], -32602, "user_id"),
            (stage.host, "stage-block", ["user_id": "v", "duration_s": 0], -32602, "duration_s"),
            (stage.host, "stage-unblock", [:], -32602, "user_id"),
            (stage.viewer, "stage-block", ["user_id": "o"], 40300, "stage-block"),
        ]
        for (client, method, params, code, field) in cases {
            let failure = try await client.failure(method, params)
            #expect(failure.code == code && failure.message.contains(field), "\(method) \(params): \(failure)")
        }
        let asked = try await Self.ask(restricted)
        #expect(asked["status"] == "waiting", "a view_and_polls_only peer may ask")
        #expect(try await restricted.errorCode("stage-list", [:]) == 40300)
        let full = try await other.failure("stage-request", [:])
        #expect(full.code == 40907 && full.message.contains("max_waiting"), "\(full)")
        #expect(try await restricted.call("stage-withdraw", [:]) == [:])

        let id = try #require(try await Self.ask(stage.viewer)["request_id"])
        let same = try await stage.host.failure("stage-invite", ["request_id": id, "role": "viewer"])
        #expect(same.code == -32602 && same.message.contains("role"), "\(same)")
        #expect(try await stage.host.errorCode("stage-invite", ["request_id": id, "role": "nope"]) == 40402)
        #expect(try await stage.host.call("stage-decline", ["request_id": id, "reason": "later"]) == [:])
        let (code, message, data) = try await Self.rpcError(stage.host, "stage-invite", ["request_id": id])
        #expect(code == 40407 && message.contains("request_id") && data == ["status": "declined"])

        #expect(try await stage.host.call("stage-block", ["user_id": "v"]) == [:])
        let blocked = try await stage.viewer.failure("stage-request", [:])
        #expect(blocked.code == 40303 && blocked.message.contains("user_id"), "\(blocked)")
        #expect(try await stage.moderator.call("stage-unblock", ["user_id": "v"]) == [:])
        #expect(try await stage.viewer.errorCode("stage-request", [:]) == nil)
    }

    @Test func aTimedBlockDeclinesAndEndsOnTheClock() async throws {
        let stage = try await Self.manualStage()
        let id = try #require(try await Self.ask(stage.viewer)["request_id"])
        _ = try await stage.viewer.next("on-stage-status")
        _ = try await stage.host.call("stage-block", ["user_id": "v", "duration_s": 60])
        let declined = try await stage.viewer.next("on-stage-status")
        #expect(declined["request"]?["request_id"] == id && declined["request"]?["status"] == "declined")
        try await TestModeTests.advanceAll(stage.daemon, by: 59_999)
        #expect(try await stage.viewer.errorCode("stage-request", [:]) == 40303, "1 ms before its end")
        try await TestModeTests.advanceAll(stage.daemon, by: 1)
        let again = try await Self.ask(stage.viewer)
        #expect(again["status"] == "waiting" && again["request_id"] != id)
    }

    /// The request's peer leaving withdraws it, whatever other peers the
    /// user has; a peer that resumes keeps its request and its join says so.
    @Test func aLeaveWithdrawsAndAResumeKeepsTheRequest() async throws {
        let stage = try await Self.manualStage()
        let (twin, _) = try await stage.daemon.join("v", as: "viewer")
        let first = try #require(try await Self.ask(stage.viewer)["request_id"])
        _ = try await twin.next("on-stage-status")
        _ = try await stage.viewer.call("leave", [:])
        let withdrawn = try await twin.next("on-stage-status")
        #expect(withdrawn["request"]?["request_id"] == first && withdrawn["request"]?["status"] == "withdrawn")

        let (caller, joined) = try await stage.daemon.join("c", as: "viewer")
        let id = try #require(try await Self.ask(caller, "hi")["request_id"])
        await caller.abort()
        try await stage.daemon.waitForGraces()
        let again = try await stage.daemon.client()
        let resumed = try await again.call(
            "join",
            [
                "token": .string(try stage.daemon.token(user: "c", role: "viewer")),
                "peer_id": joined["peer"]!["peer_id"]!,
            ]
        )
        #expect(resumed["stage"]?["request"]?["request_id"] == .string(id.stringValue ?? ""))
        #expect(resumed["stage"]?["request"]?["status"] == "waiting")
        await again.abort()
        try await stage.daemon.waitForGraces(2)
        try await TestModeTests.advanceAll(stage.daemon, by: 20_000)  // the grace ends
        let ended = try await stage.host.call("stage-list", ["status": "withdrawn"])
        #expect(ended["requests"]?.arrayValue?.map { $0["request_id"] } == [id, first])
    }

    /// REST (management token): list with the blocks, invite as the server
    /// (no token in the answer, `invited_by` null; the peer gets it with the
    /// server PeerRef), decline, block, unblock; 40407 is 404 for an unknown
    /// id and 409 for a request in another state.
    @Test func theOperatorListsInvitesDeclinesAndBlocksOverREST() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        let base = "/v2/active-rooms/room-1/stage"
        let (other, _) = try await stage.daemon.join("o", as: "viewer")
        let id = try #require(try await Self.ask(stage.viewer, "rest")["request_id"]?.stringValue)
        let otherID = try #require(try await Self.ask(other)["request_id"]?.stringValue)
        let blocked = try await http(
            "POST",
            stage.daemon,
            base + "/block",
            token: admin,
            body: #"{"user_id":"x","duration_s":60}"#
        )
        #expect(blocked.status == 200 && blocked.body == [:])
        let listed = try await http("GET", stage.daemon, base, token: admin)
        #expect(listed.status == 200 && listed.body["total"] == 2)
        #expect(listed.body["requests"]?.arrayValue?.map { $0["request_id"]?.stringValue } == [id, otherID])
        #expect(listed.body["blocked"]?[0]?["user_id"] == "x" && listed.body["blocked"]?[0]?["until"]?.intValue != nil)

        let invited = try await http("POST", stage.daemon, base + "/\(id)/invite", token: admin, body: "{}")
        #expect(invited.status == 200 && invited.body["token"] == nil)
        #expect(invited.body["request"]?["status"] == "invited" && invited.body["request"]?["invited_by"] == .null)
        let asked = try await stage.viewer.next("on-role-change-request")
        #expect(asked["requested_by"]?["info"]?["name"] == "server" && asked["role"] == "guest")
        _ = try await stage.viewer.call("role-change", ["token": asked["token"]!])
        let live = try await http("GET", stage.daemon, base + "?status=live", token: admin)
        #expect(live.body["requests"]?[0]?["request_id"]?.stringValue == id)

        let again = try await http("POST", stage.daemon, base + "/\(id)/invite", token: admin, body: "{}")
        #expect(again.status == 409 && again.body["code"] == 40407, "\(again)")
        let unknown = try await http("POST", stage.daemon, base + "/nope/decline", token: admin, body: "{}")
        #expect(unknown.status == 404 && unknown.body["code"] == 40407, "\(unknown)")
        let declined = try await http(
            "POST",
            stage.daemon,
            base + "/\(otherID)/decline",
            token: admin,
            body: #"{"reason":"no"}"#
        )
        #expect(declined.status == 200)
        _ = try await other.next("on-stage-status", where: { $0["request"]?["status"] == "declined" })
        let unblocked = try await http("POST", stage.daemon, base + "/unblock", token: admin, body: #"{"user_id":"x"}"#)
        #expect(unblocked.status == 200)
        #expect(try await http("GET", stage.daemon, base, token: admin).body["blocked"] == [])
        let bad = try await http("GET", stage.daemon, base + "?status=gone", token: admin)
        #expect(bad.status == 400 && bad.body["code"] == -32602, "\(bad)")
        #expect(try await http("GET", stage.daemon, base).status == 401, "the management token is required")
    }

    /// REST lists the blocks a page at a time, by user id: 150 blocks give
    /// 100, then 50 from `blocked_offset=100`, each page with
    /// `blocked_total`; a limit over 1,000 is -32602 naming it.
    @Test func theBlocksComeAPageAtATimeOverREST() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        let base = "/v2/active-rooms/room-1/stage"
        let users = (0..<150).map { String(format: "user-%03d", 149 - $0) }
        for user in users { _ = try await stage.host.call("stage-block", ["user_id": .string(user)]) }
        let first = try await http("GET", stage.daemon, base, token: admin)
        #expect(first.status == 200 && first.body["blocked_total"] == 150)
        let sorted = users.sorted()
        #expect(first.body["blocked"]?.arrayValue?.compactMap { $0["user_id"]?.stringValue } == Array(sorted[..<100]))
        let second = try await http("GET", stage.daemon, base + "?blocked_offset=100&blocked_limit=1000", token: admin)
        #expect(second.body["blocked"]?.arrayValue?.compactMap { $0["user_id"]?.stringValue } == Array(sorted[100...]))
        #expect(second.body["blocked_total"] == 150)
        _ = try await stage.host.call("stage-unblock", ["user_id": "user-000"])
        let after = try await http("GET", stage.daemon, base + "?blocked_limit=1", token: admin)
        #expect(after.body["blocked"]?[0]?["user_id"] == "user-001" && after.body["blocked_total"] == 149)
        let over = try await http("GET", stage.daemon, base + "?blocked_limit=1001", token: admin)
        #expect(over.status == 400 && over.body["code"] == -32602, "\(over)")
        #expect(over.body["message"]?.stringValue?.contains("blocked_limit") == true, "\(over)")
    }

    /// `stage.*` webhooks, in order with the room's other events; an
    /// invitation's role change sends its `role.change.success` too.
    @Test func stageWebhooksTellEachStatusChange() async throws {
        let receiver = try WebhookReceiver()
        let daemon = try await Daemon.start(webhooksTo: receiver.url)
        let (host, _) = try await daemon.join("h", as: "host", room: "show")
        let (viewer, viewerJoin) = try await daemon.join("v", as: "viewer", room: "show")
        defer { _ = host }
        let id = try #require(try await Self.ask(viewer, "hello")["request_id"])
        let token = try await host.call("stage-invite", ["request_id": id])["token"]!
        _ = try await viewer.call("role-change", ["token": token])
        _ = try await viewer.call("leave", [:])
        let expected = [
            "session.open.success", "peer.join.success", "peer.join.success", "stage.requested", "stage.invited",
            "role.change.success", "stage.live", "stage.done", "peer.leave.success",
        ]
        #expect(try await receiver.deliveredTypes(count: expected.count) == expected)
        let events = receiver.delivered.map { $0["data"] ?? .null }
        let viewerID = try #require(viewerJoin["peer"]?["peer_id"])
        #expect(events[3]["request_id"] == id && events[3]["note"] == "hello" && events[3]["status"] == "waiting")
        #expect(events[3]["peer_id"] == viewerID && events[3]["role"] == "viewer" && events[3]["invited_role"] == .null)
        #expect(events[3]["room_id"] == "show" && events[3]["session_id"]?.stringValue != nil)
        #expect(events[4]["status"] == "invited" && events[4]["invited_role"] == "guest")
        #expect(events[6]["status"] == "live" && events[6]["role"] == "guest", "the peer's role now")
        #expect(events[7]["status"] == "done")
    }

    /// A `stage-list` page holds at most a quarter of `max_outbound_bytes`
    /// of encoded requests (at least one), then `more: true`.
    @Test func stageListIsCutAtItsBudget() async throws {
        let stage = try await Stage(
            daemon: await Daemon.start(
                settings: #"{"stage":{"note_bytes":4096},"limits":{"max_outbound_bytes":65536}}"#
            )
        )
        let note = String(repeating: "n", count: 4000)
        for n in 0..<10 {
            let (client, _) = try await stage.daemon.join("w\(n)", as: "viewer")
            _ = try await Self.ask(client, note)
        }
        let page = try await stage.host.call("stage-list", ["limit": 100])
        let count = page["requests"]?.arrayValue?.count ?? 0
        #expect(count >= 1 && count <= 4 && page["more"] == true && page["total"] == 10, "\(count) of 10")
        let rest = try await stage.host.call("stage-list", ["offset": .number("\(count)"), "limit": 100])
        #expect(rest["requests"]?[0]?["position"] == .number("\(count + 1)"))
    }

    /// Ten 4,000-byte notes at once: each `on-stage-queue` carries at most
    /// 16 KiB of requests, the rest follows on the next intervals, none lost.
    @Test func aQueuePushCarriesAtMostSixteenKiB() async throws {
        let stage = try await Self.manualStage(settings: #"{"stage":{"note_bytes":4096}}"#)
        let note = String(repeating: "n", count: 4000)
        var asked: Set<String> = []
        for n in 0..<10 {
            let (client, _) = try await stage.daemon.join("w\(n)", as: "viewer")
            asked.insert(try #require(try await Self.ask(client, note)["request_id"]?.stringValue))
        }
        var seen: Set<String> = []
        var pushes = 0
        while seen != asked, pushes < 10 {
            try await TestModeTests.advanceAll(stage.daemon, by: 1000)
            let push = try await stage.moderator.next("on-stage-queue")
            let changed = push["changed"]?.arrayValue ?? []
            #expect(changed.count <= 4, "\(changed.count) requests of 4,000 bytes in one push")
            #expect(push.text.utf8.count <= 16 * 1024 + 1024)
            #expect(push["waiting"] == 10)
            seen.formUnion(changed.compactMap { $0["request_id"]?.stringValue })
            pushes += 1
        }
        #expect(seen == asked && pushes >= 3, "\(pushes) pushes")
    }
}

/// 1.3: the call-in queue and its blocks are room state — they survive a
/// SIGKILL of the room's home (n1) whole. Three nodes on a real nats-server.
@Suite(.serialized) struct StageClusterTests {
    @Test func theQueueAndItsBlocksSurviveAKillOfTheHome() async throws {
        let cluster = try await ClusterRoutingTests.Cluster()
        defer { cluster.nats.remove() }
        let (host, _) = try await cluster.join("h", as: "host", on: 0)  // n1: the room's home
        let (moderator, _) = try await cluster.join("m", as: "moderator", on: 1)
        let (first, _) = try await cluster.join("v1", as: "viewer", on: 2)
        let (second, _) = try await cluster.join("v2", as: "viewer", on: 1)
        let (third, _) = try await cluster.join("v3", as: "viewer", on: 2)
        defer { _ = host }
        let invited = try #require(try await StageQueueServerTests.ask(first, "first")["request_id"])
        let waiting = try #require(try await StageQueueServerTests.ask(second, "second")["request_id"])
        let gone = try #require(try await StageQueueServerTests.ask(third, "third")["request_id"])
        _ = try await host.call("stage-invite", ["request_id": invited])
        _ = try await host.call("stage-block", ["user_id": "blocked"])
        _ = try await third.call("stage-withdraw", [:])
        try await cluster.waitUntilSaved(containing: #""status":"withdrawn""#)
        _ = await cluster.nodes[0].stop(signal: SIGKILL)

        let queue = try await ClusterRoutingTests.eventually(moderator, "stage-list", [:], within: 15)
        #expect(queue["requests"]?.arrayValue?.map { $0["request_id"] } == [waiting])
        #expect(queue["requests"]?[0]?["note"] == "second" && queue["requests"]?[0]?["position"] == 1)
        let open = try await moderator.call("stage-list", ["status": "invited"])
        #expect(open["requests"]?.arrayValue?.map { $0["request_id"] } == [invited])
        let ended = try await moderator.call("stage-list", ["status": "withdrawn"])
        #expect(ended["requests"]?.arrayValue?.map { $0["request_id"] } == [gone])
        let again = try await second.call("stage-request", [:])
        #expect(again["request"]?["request_id"] == waiting, "one request per user, still")
        let (blocked, _) = try await cluster.join("blocked", as: "viewer", on: 1)
        #expect(try await blocked.errorCode("stage-request", [:]) == 40303, "the block is kept")
    }
}
