import Foundation
import RoomClient
import RoomWire
import Testing

/// Moderation that holds (PROTOCOL.md section 22), over real sockets: bans
/// by user id (RPC and REST), chat bans, paused chat and slow mode, reports,
/// the word filter, and who hears of each. Shipped roles: host and
/// moderator have `moderateChat` and `removeOthers`, guest and viewer neither.
@Suite struct ChatModerationTests {
    static func say(_ client: RoomClient, _ text: String, to peer: JSON? = nil) async throws -> JSON {
        var params: [String: JSON] = ["info": ["message": .string(text)]]
        if let peer { params["peer_id"] = peer }
        return try await client.call("broadcast", .object(params.map { JSON.Member($0.key, $0.value) }))
    }

    static func error(
        _ client: RoomClient,
        _ method: String,
        _ params: JSON? = nil
    ) async throws -> (
        code: Int, message: String, data: JSON?
    ) {
        do {
            let result = try await client.call(method, params)
            throw DaemonError(description: "\(method) succeeded unexpectedly: \(result)")
        } catch RoomClientError.rpc(let code, let message, let data) {
            return (code, message, data)
        }
    }

    /// The `on-chat-state` pushes a client got within a short window.
    static func chatStates(_ client: RoomClient) async -> [JSON] {
        await client.expectSilence(for: .milliseconds(200)).filter { $0["method"] == "on-chat-state" }
            .compactMap { $0["params"] }
    }

    // MARK: peer-ban

    @Test func aBanRemovesEveryPeerOfTheUserAndRefusesItsJoinsAndPreviews() async throws {
        let stage = try await Stage()
        let (second, _) = try await stage.daemon.join("g", as: "guest")  // the guest's user, twice
        try await stage.settle()
        _ = second.drain()
        #expect(try await stage.host.call("peer-ban", ["peer_id": stage.id("guest"), "reason": "spam"]) == [:])
        for banned in [stage.guest, second] {
            let request = try await banned.next("on-peer-leave-request")
            #expect(request["reason"] == "spam")
            #expect(request["room_end"] == false)
            #expect(request["requested_by"]?["peer_id"] == stage.id("host"))
            #expect(try await banned.closeCode() == 4001)
        }
        for other in [stage.host, stage.viewer, stage.moderator] {
            for _ in 0..<2 { #expect(try await other.next("on-peer-leave")["reason"] == "peer banned") }
            #expect(await other.expectSilence(for: .milliseconds(200)).isEmpty, "the removal's pushes only")
        }
        // A fresh token of the same user: 40301 with the reason, on join and on preview.
        let client = try await stage.daemon.client()
        let token = JSON.string(try stage.daemon.token(user: "g", role: "viewer"))
        let joinError = try await Self.error(client, "join", ["token": token])
        #expect(joinError.code == 40301)
        #expect(joinError.message.contains("spam"))
        #expect(try await Self.error(client, "preview", ["token": token]).code == 40301)
        // Another user is not banned.
        let (other, _) = try await stage.daemon.join("g2", as: "guest")
        #expect(!other.isClosed)
        // Unbanned: the user comes back.
        #expect(try await stage.moderator.call("peer-unban", ["user_id": "g"]) == [:])
        #expect(try await client.call("join", ["token": token])["peer"] != nil)
    }

    /// On the manual clock: the ban holds 1 ms before its end and not at it.
    @Test func aTimedBanEndsAndABanAheadHolds() async throws {
        let stage = try await Stage(daemon: await TestModeTests.manualEverywhere())
        _ = try await stage.host.call("peer-ban", ["user_id": "troll", "duration_s": 3])  // not in the room
        let admin = try stage.daemon.managementToken()
        let bans = try await http("GET", stage.daemon, "/v2/active-rooms/room-1/bans", token: admin)
        let until = try #require(bans.body["bans"]?[0]?["until"]?.intValue)
        #expect(Int64(until) == TestModeTests.start + 3000)
        let client = try await stage.daemon.client()
        let token = JSON.string(try stage.daemon.token(user: "troll", role: "viewer"))
        try await TestModeTests.advanceAll(stage.daemon, by: 2999)
        #expect(try await client.errorCode("join", ["token": token]) == 40301, "a ban ahead holds")
        try await TestModeTests.advanceAll(stage.daemon, by: 1)
        #expect(try await client.call("join", ["token": token])["peer"] != nil, "the ban ended at duration_s")
    }

    @Test func banPermissionsAndBadInput() async throws {
        let stage = try await Stage()
        let (restricted, _) = try await stage.daemon.join("rm", as: "moderator", restrictions: "view_and_polls_only")
        defer { _ = restricted }
        #expect(try await stage.guest.errorCode("peer-ban", ["user_id": "v"]) == 40300, "removeOthers")
        #expect(try await restricted.errorCode("peer-ban", ["user_id": "v"]) == 40300, "restricted")
        #expect(try await restricted.errorCode("peer-unban", ["user_id": "v"]) == 40300)
        #expect(try await stage.guest.errorCode("peer-unban", ["user_id": "v"]) == 40300)
        let both = try await stage.host.failure("peer-ban", ["user_id": "v", "peer_id": stage.id("viewer")])
        #expect(both.code == -32602 && both.message.contains("user_id"))
        #expect(try await stage.host.errorCode("peer-ban", [:]) == -32602)
        let zero = try await stage.host.failure("peer-ban", ["user_id": "v", "duration_s": 0])
        #expect(zero.code == -32602 && zero.message.contains("duration_s"))
        #expect(try await stage.host.errorCode("peer-ban", ["user_id": "v", "duration_s": "1"]) == -32602)
        let long = try await stage.host.failure(
            "peer-ban",
            ["user_id": "v", "reason": .string(String(repeating: "x", count: 257))]
        )
        #expect(long.code == 41300 && long.message.contains("reason"))
        #expect(try await stage.host.errorCode("peer-ban", ["peer_id": "nobody"]) == 40400)
        #expect(try await stage.host.errorCode("peer-ban", ["user_id": "h"]) == -32602, "not oneself")
        #expect(try await stage.host.errorCode("peer-unban", [:]) == -32602)
        #expect(try await stage.host.call("peer-unban", ["user_id": "never-banned"]) == [:])
        #expect(!stage.viewer.isClosed, "nothing was banned")
    }

    @Test func restBanUnbanAndTheListOfBans() async throws {
        let stage = try await Stage()
        let admin = try stage.daemon.managementToken()
        let ban = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/ban",
            token: admin,
            body: #"{"user_id":"v","reason":"abuse","duration_s":600}"#
        )
        #expect(ban.status == 200 && ban.body == [:], "\(ban.body)")
        let request = try await stage.viewer.next("on-peer-leave-request")
        #expect(request["reason"] == "abuse")
        #expect(request["requested_by"]?["info"]?["name"] == "server")
        #expect(try await stage.viewer.closeCode() == 4001)
        let ahead = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/ban",
            token: admin,
            body: #"{"user_id":"later"}"#
        )
        #expect(ahead.status == 200)
        let list = try await http("GET", stage.daemon, "/v2/active-rooms/room-1/bans", token: admin)
        #expect(list.status == 200)
        let bans = try #require(list.body["bans"]?.arrayValue)
        #expect(bans.map { $0["user_id"] } == ["v", "later"])
        #expect(bans[0]["reason"] == "abuse" && bans[0]["until"]?.intValue != nil)
        #expect(bans[1]["until"] == .null && bans[1]["reason"] == "")
        #expect(bans[0]["banned_by"] == ["peer_id": nil, "role": nil, "info": ["name": "server"]])
        let unban = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/unban",
            token: admin,
            body: #"{"user_id":"v"}"#
        )
        #expect(unban.status == 200)
        let after = try await http("GET", stage.daemon, "/v2/active-rooms/room-1/bans", token: admin)
        #expect(after.body["bans"]?.arrayValue?.map { $0["user_id"] } == ["later"])
        // Bad input.
        let missing = try await http("POST", stage.daemon, "/v2/active-rooms/room-1/ban", token: admin, body: "{}")
        #expect(missing.status == 400 && missing.body["code"] == -32602)
        let gone = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/nowhere/ban",
            token: admin,
            body: #"{"user_id":"v"}"#
        )
        #expect(gone.status == 404)
        let anonymous = try await http("GET", stage.daemon, "/v2/active-rooms/room-1/bans")
        #expect(anonymous.status == 401)
    }

    @Test func aRoomHoldsAtMost1000BansOverRESTToo() async throws {
        let daemon = try await Daemon.start(
            settings: #"{"limits":{"messages_per_second":100000,"message_burst":100000}}"#
        )
        let (host, _) = try await daemon.join("h", as: "host")
        defer { _ = host }
        let admin = try daemon.managementToken()
        for n in 0..<1000 {
            let ban = try await http(
                "POST",
                daemon,
                "/v2/active-rooms/room-1/ban",
                token: admin,
                body: #"{"user_id":"u\#(n)"}"#
            )
            if ban.status != 200 { Issue.record("ban \(n): \(ban.status) \(ban.body)") }
        }
        let full = try await http(
            "POST",
            daemon,
            "/v2/active-rooms/room-1/ban",
            token: admin,
            body: #"{"user_id":"x"}"#
        )
        #expect(full.status == 409 && full.body["code"] == 40907, "\(full.body)")
        #expect(try await host.errorCode("peer-ban", ["user_id": "y"]) == 40907)
        _ = try await http("POST", daemon, "/v2/active-rooms/room-1/unban", token: admin, body: #"{"user_id":"u0"}"#)
        #expect(try await host.errorCode("peer-ban", ["user_id": "y"]) == nil, "an unban frees a place")
        let list = try await http("GET", daemon, "/v2/active-rooms/room-1/bans", token: admin)
        #expect(list.body["bans"]?.arrayValue?.count == 1000)
    }

    /// On test mode's manual clock (section 25) every time of section 22 is exact.
    @Test func onTheManualClockBansChatBansAndSlowModeEndToTheMillisecond() async throws {
        let daemon = try await TestModeTests.manual()
        let stage = try await Stage(daemon: daemon)
        let start = TestModeTests.start
        _ = try await stage.host.call("peer-ban", ["user_id": "troll", "duration_s": 60])
        _ = try await stage.host.call("chat-ban", ["user_id": "v", "duration_s": 30])
        #expect(try await stage.viewer.next("on-chat-state")["until"]?.intValue == Int(start + 30_000))
        _ = try await stage.host.call("chat-state", ["slow_mode_s": 10])
        #expect(try await Self.say(stage.guest, "one")["message_id"] != nil)
        #expect(
            try await Self.error(stage.guest, "broadcast", ["info": ["message": "2"]]).data == [
                "retry_after_ms": 10_000
            ]
        )
        try await TestModeTests.advance(daemon, by: 9_999)
        #expect(
            try await Self.error(stage.guest, "broadcast", ["info": ["message": "2"]]).data == ["retry_after_ms": 1]
        )
        try await TestModeTests.advance(daemon, by: 1)
        #expect(try await Self.say(stage.guest, "two")["message_id"] != nil, "at exactly slow_mode_s")
        try await TestModeTests.advance(daemon, by: 19_999)
        #expect(try await stage.viewer.errorCode("broadcast", ["info": ["message": "hi"]]) == 40302)
        try await TestModeTests.advance(daemon, by: 1)  // the chat ban's end, pushed by its timer
        let ended = try await stage.viewer.next { event in
            if case .chatState(let state) = event, !state.chatBanned { state } else { nil }
        }
        #expect(ended == ChatState(paused: false, slowModeSeconds: 10, chatBanned: false, until: nil))
        #expect(try await stage.viewer.errorCode("broadcast", ["info": ["message": "hi"]]) == nil)
        let client = try await daemon.client()
        let token = JSON.string(try daemon.token(user: "troll", role: "viewer"))
        try await TestModeTests.advance(daemon, by: 29_999)
        #expect(try await client.errorCode("preview", ["token": token]) == 40301)
        try await TestModeTests.advance(daemon, by: 1)
        #expect(try await client.call("join", ["token": token])["peer"] != nil, "the ban ended at duration_s")
    }

    // MARK: chat bans

    @Test func aChatBanSilencesOnlyThatUserAndOnlyItsPeersAreTold() async throws {
        let stage = try await Stage()
        let message = try await Self.say(stage.host, "hello")["message_id"]!
        try await stage.settle()
        #expect(try await stage.moderator.call("chat-ban", ["user_id": "g"]) == [:])
        let told = try await stage.guest.next("on-chat-state")
        #expect(told == ["paused": false, "slow_mode_s": 0, "chat_banned": true, "until": nil])
        for other in [stage.host, stage.viewer, stage.moderator] {
            #expect(await Self.chatStates(other).isEmpty, "nobody else is told")
        }
        for (method, params) in [
            ("broadcast", ["info": ["message": "hi"]] as JSON),
            ("broadcast", ["info": ["message": "hi"], "peer_id": stage.id("host")]),
            ("question-add", ["text": "why?"]),
            ("report", ["message_id": message, "reason": "x"]),
        ] {
            let refused = try await Self.error(stage.guest, method, params)
            #expect(refused.code == 40302, "\(method)")
            #expect(refused.message.contains("ban"))
        }
        #expect(try await stage.guest.call("chat-history", [:])["messages"] != nil, "it still watches")
        let (again, joined) = try await stage.daemon.join("g", as: "guest")
        defer { _ = again }
        #expect(joined["chat"]?["state"] == ["paused": false, "slow_mode_s": 0, "chat_banned": true, "until": nil])
        _ = try await stage.moderator.call("chat-unban", ["user_id": "g"])
        #expect(try await stage.guest.next("on-chat-state")["chat_banned"] == false)
        #expect(try await Self.say(stage.guest, "back")["message_id"] != nil)
        // Bad input and permissions.
        #expect(try await stage.guest.errorCode("chat-ban", ["user_id": "v"]) == 40300)
        #expect(try await stage.guest.errorCode("chat-unban", ["user_id": "v"]) == 40300)
        #expect(try await stage.host.errorCode("chat-ban", ["peer_id": "nobody"]) == 40400)
        #expect(try await stage.host.errorCode("chat-ban", ["user_id": "v", "duration_s": -1]) == -32602)
        #expect(try await stage.host.errorCode("chat-ban", [:]) == -32602)
    }

    /// On the manual clock: the chat ban ends at its `until`, not a millisecond before.
    @Test func aTimedChatBanEndsWithAPushToItsUser() async throws {
        let stage = try await Stage(daemon: await TestModeTests.manualEverywhere())
        _ = try await stage.host.call("chat-ban", ["peer_id": stage.id("viewer"), "duration_s": 1])
        let banned = try await stage.viewer.next("on-chat-state")
        #expect(banned["until"]?.intValue.map(Int64.init) == TestModeTests.start + 1000)
        #expect(banned["chat_banned"] == true)
        try await TestModeTests.advanceAll(stage.daemon, by: 999)
        #expect(await Stage.methods(stage.viewer).isEmpty, "still banned")
        #expect(try await Self.error(stage.viewer, "broadcast", ["info": ["message": "early"]]).code == 40302)
        try await TestModeTests.advanceAll(stage.daemon, by: 1)
        let ended = try await stage.viewer.next("on-chat-state")
        #expect(ended == ["paused": false, "slow_mode_s": 0, "chat_banned": false, "until": nil])
        #expect(try await Self.say(stage.viewer, "free")["message_id"] != nil)
    }

    // MARK: chat state

    @Test func aPausedChatRefusesMessagesToEveryoneButModeratorsAndTheOperator() async throws {
        let stage = try await Stage()
        let result = try await stage.moderator.call("chat-state", ["paused": true])
        #expect(result == ["paused": true, "slow_mode_s": 0])
        for client in stage.all {
            #expect(
                try await client.next("on-chat-state") == [
                    "paused": true, "slow_mode_s": 0, "chat_banned": false, "until": nil,
                ]
            )
        }
        let refused = try await Self.error(stage.guest, "broadcast", ["info": ["message": "hey"]])
        #expect(refused.code == 40302 && refused.message.contains("paused"))
        #expect(try await Self.say(stage.guest, "psst", to: stage.id("host"))["message_id"] != nil, "direct: allowed")
        #expect(try await Self.say(stage.host, "we are back soon")["message_id"] != nil, "moderateChat: allowed")
        let admin = try stage.daemon.managementToken()
        let rest = try await http(
            "POST",
            stage.daemon,
            "/v2/active-rooms/room-1/send-message",
            token: admin,
            body: #"{"message":"notice"}"#
        )
        #expect(rest.status == 200, "the operator's REST message is exempt")
        let (late, joined) = try await stage.daemon.join("late", as: "viewer")
        defer { _ = late }
        #expect(joined["chat"]?["state"]?["paused"] == true)
        #expect(ChatHistoryTests.texts(joined["chat"]?["messages"]) == ["we are back soon", "notice"])
        // Permissions and bad input.
        #expect(try await stage.guest.errorCode("chat-state", ["paused": false]) == 40300)
        #expect(try await stage.host.errorCode("chat-state", [:]) == -32602)
        #expect(try await stage.host.errorCode("chat-state", ["slow_mode_s": 3601]) == -32602)
        #expect(try await stage.host.errorCode("chat-state", ["paused": "no"]) == -32602)
    }

    /// On the manual clock: `retry_after_ms` is exact, and waiting it out is one advance.
    @Test func slowModeLetsEachUserSendOneMessagePerIntervalWithRetryAfter() async throws {
        let stage = try await Stage(daemon: await TestModeTests.manualEverywhere())
        #expect(try await stage.host.call("chat-state", ["slow_mode_s": 60]) == ["paused": false, "slow_mode_s": 60])
        try await stage.settle()
        #expect(try await Self.say(stage.guest, "one")["message_id"] != nil)
        let wait = try await Self.error(stage.guest, "broadcast", ["info": ["message": "two"]])
        #expect(wait.code == 42901)
        #expect(wait.data?["retry_after_ms"] == 60_000)
        #expect(try await Self.say(stage.viewer, "mine")["message_id"] != nil, "per user")
        #expect(try await Self.say(stage.guest, "dm", to: stage.id("host"))["message_id"] != nil, "direct: no clock")
        #expect(try await Self.say(stage.host, "a")["message_id"] != nil)
        #expect(try await Self.say(stage.host, "b")["message_id"] != nil, "moderateChat: exempt")
        // As a notification: on-error carries the data too.
        try stage.guest.notify("broadcast", ["info": ["message": "quiet"]])
        let onError = try await stage.guest.next("on-error")
        #expect(onError["code"] == 42901 && (onError["data"]?["retry_after_ms"]?.intValue ?? 0) > 0)
        // 42901 does not count towards the 4029 streak.
        for _ in 0..<12 { _ = try await stage.guest.errorCode("broadcast", ["info": ["message": "again"]]) }
        #expect(!stage.guest.isClosed)
        // A shorter interval applies to the running clocks: wait out the new retry_after_ms.
        _ = try await stage.host.call("chat-state", ["slow_mode_s": 2])
        let soon = try await Self.error(stage.guest, "broadcast", ["info": ["message": "soon"]])
        #expect(soon.code == 42901 && soon.data?["retry_after_ms"] == 2000)
        try await TestModeTests.advanceAll(stage.daemon, by: 1999)
        #expect(try await Self.error(stage.guest, "broadcast", ["info": ["message": "not yet"]]).code == 42901)
        try await TestModeTests.advanceAll(stage.daemon, by: 1)
        #expect(try await Self.say(stage.guest, "three")["message_id"] != nil, "after retry_after_ms")
        _ = try await stage.host.call("chat-state", ["slow_mode_s": 0])
        #expect(try await Self.say(stage.guest, "four")["message_id"] != nil)
        #expect(try await Self.say(stage.guest, "five")["message_id"] != nil, "slow mode off")
    }

    @Test func chatStateGoesToEveryPeerWithItsOwnChatBan() async throws {
        let stage = try await Stage()
        _ = try await stage.host.call("chat-ban", ["user_id": "v"])
        try await stage.settle()
        _ = try await stage.host.call("chat-state", ["slow_mode_s": 30])
        #expect(
            try await stage.viewer.next("on-chat-state") == [
                "paused": false, "slow_mode_s": 30, "chat_banned": true, "until": nil,
            ]
        )
        #expect(
            try await stage.guest.next("on-chat-state") == [
                "paused": false, "slow_mode_s": 30, "chat_banned": false, "until": nil,
            ]
        )
    }

    // MARK: reports

    @Test func aReportGoesToModeratorsOncePerUserPerTarget() async throws {
        let stage = try await Stage()
        let message = try await Self.say(stage.guest, "rude")["message_id"]!
        let question = try await stage.guest.call("question-add", ["text": "rude?"])["question_id"]!
        try await stage.settle()
        let first = try await stage.viewer.call("report", ["message_id": message, "reason": "insult"])
        let reportID = try #require(first["report_id"]?.stringValue)
        for moderator in [stage.host, stage.moderator] {
            let report = try await moderator.next("on-report")
            #expect(report["report_id"]?.stringValue == reportID)
            #expect(report["target"] == ["type": "message", "id": message])
            #expect(report["reason"] == "insult")
            #expect(report["reported_by"]?["peer_id"] == stage.id("viewer"))
            #expect(report["at"]?.intValue != nil)
        }
        for other in [stage.guest, stage.viewer] {
            #expect(await other.expectSilence(for: .milliseconds(200)).filter { $0["method"] == "on-report" }.isEmpty)
        }
        let repeated = try await stage.viewer.call("report", ["message_id": message, "reason": "again"])
        #expect(repeated["report_id"]?.stringValue == reportID, "a repeat is accepted")
        #expect(
            await stage.host.expectSilence(for: .milliseconds(200)).filter { $0["method"] == "on-report" }.isEmpty,
            "…and ignored"
        )
        _ = try await stage.viewer.call("report", ["question_id": question, "reason": "q"])
        _ = try await stage.viewer.call("report", ["peer_id": stage.id("guest"), "reason": "p"])
        #expect(try await stage.host.next("on-report")["target"]?["type"] == "question")
        #expect(try await stage.host.next("on-report")["target"]?["type"] == "peer")
        // Bad input.
        #expect(try await stage.viewer.errorCode("report", ["message_id": "nope", "reason": "x"]) == 40405)
        #expect(try await stage.viewer.errorCode("report", ["question_id": "nope", "reason": "x"]) == 40406)
        #expect(try await stage.viewer.errorCode("report", ["peer_id": "nope", "reason": "x"]) == 40400)
        #expect(try await stage.viewer.errorCode("report", ["reason": "x"]) == -32602)
        #expect(
            try await stage.viewer.errorCode(
                "report",
                ["message_id": message, "peer_id": stage.id("guest"), "reason": "x"]
            ) == -32602
        )
        #expect(try await stage.viewer.errorCode("report", ["message_id": message]) == -32602)
        let long = try await stage.viewer.failure(
            "report",
            ["peer_id": stage.id("host"), "reason": .string(String(repeating: "é", count: 129))]
        )
        #expect(long.code == 41300 && long.message.contains("reason"))
        let (restricted, _) = try await stage.daemon.join("anon", as: "viewer", restrictions: "view_and_polls_only")
        #expect(try await restricted.errorCode("report", ["message_id": message, "reason": "x"]) == 40300)
        let (restrictedModerator, _) = try await stage.daemon.join(
            "rm",
            as: "moderator",
            restrictions: "view_and_polls_only"
        )
        #expect(try await restrictedModerator.errorCode("chat-ban", ["user_id": "g"]) == 40300)
        #expect(try await restrictedModerator.errorCode("chat-state", ["paused": true]) == 40300)
        #expect(try await restrictedModerator.errorCode("chat-unban", ["user_id": "g"]) == 40300)
    }

    // MARK: word filter

    /// Section 31: a link to a blocked host or a subdomain of one is 40302
    /// in messages, questions and stage notes, for every role; bare host
    /// text is not a link; the message names blocked_domains.
    @Test func blockedDomainsRefuseLinksEverywhereForEveryone() async throws {
        let daemon = try await Daemon.start(settings: #"{"chat":{"blocked_domains":["Spam.example"]}}"#)
        let stage = try await Stage(daemon: daemon)
        let refused = try await Self.error(
            stage.viewer,
            "broadcast",
            ["info": ["message": "free https://x.SPAM.example/win"]]
        )
        #expect(refused.code == 40302 && refused.message.contains("blocked_domains"), "\(refused)")
        #expect(refused.message.hasPrefix("info.message: "), "\(refused)")
        #expect(try await stage.host.errorCode("broadcast", ["info": ["message": "www.spam.example"]]) == 40302)
        #expect(
            try await stage.guest.errorCode(
                "broadcast",
                ["info": ["message": "http://spam.example"], "peer_id": stage.id("host")]
            ) == 40302,
            "any recipient"
        )
        #expect(try await stage.viewer.errorCode("question-add", ["text": "is http://spam.example legit?"]) == 40302)
        #expect(try await stage.viewer.errorCode("stage-request", ["note": "see www.spam.example"]) == 40302)
        #expect(
            try await Self.say(stage.viewer, "spam.example is bare text, https://notspam.example is fine")["message_id"]
                != nil
        )
    }

    @Test func blockedWordsRefuseMessagesAndQuestionsOnWordBoundaries() async throws {
        let daemon = try await Daemon.start(settings: #"{"chat":{"blocked_words":["Darn","фигня"]}}"#)
        let stage = try await Stage(daemon: daemon)
        let refused = try await Self.error(stage.guest, "broadcast", ["info": ["message": "well, DARN it"]])
        #expect(refused.code == 40302)
        #expect(refused.message.contains("blocked_words") && !refused.message.lowercased().contains("darn"))
        #expect(
            try await stage.guest.errorCode("broadcast", ["info": ["message": "x"], "peer_id": stage.id("host")]) == nil
        )
        #expect(
            try await stage.guest.errorCode("broadcast", ["info": ["message": "darn"], "peer_id": stage.id("host")])
                == 40302,
            "any recipient"
        )
        #expect(try await stage.host.errorCode("broadcast", ["info": ["message": "darn!"]]) == 40302, "moderators too")
        #expect(try await stage.guest.errorCode("question-add", ["text": "ФИГНЯ?"]) == 40302, "Unicode lower-casing")
        #expect(try await Self.say(stage.guest, "darning socks, undarn")["message_id"] != nil, "word boundaries")
        let admin = try daemon.managementToken()
        let rest = try await http(
            "POST",
            daemon,
            "/v2/active-rooms/room-1/send-message",
            token: admin,
            body: #"{"message":"darn"}"#
        )
        #expect(rest.status == 200, "REST messages are not filtered")
        let message = try await Self.say(stage.guest, "ok")["message_id"]!
        #expect(
            try await stage.viewer.call("report", ["message_id": message, "reason": "darn"])["report_id"] != nil,
            "nor report reasons"
        )
    }

    // MARK: webhooks

    @Test func moderationWebhooksComeInOrderWithTheRoomsOtherEvents() async throws {
        let receiver = try WebhookReceiver()
        let daemon = try await Daemon.start(webhooksTo: receiver.url)
        let (host, _) = try await daemon.join("h", as: "host", room: "show")
        let (guest, guestJoin) = try await daemon.join("g", as: "guest", room: "show")
        defer { _ = (host, guest) }
        let guestID = try #require(guestJoin["peer"]?["peer_id"])
        let message = try await Self.say(guest, "rude")["message_id"]!
        let report = try await host.call("report", ["message_id": message, "reason": "insult"])["report_id"]!
        _ = try await host.call("message-delete", ["message_id": message])
        _ = try await host.call("chat-ban", ["user_id": "g", "duration_s": 60])
        _ = try await host.call("peer-ban", ["peer_id": guestID, "reason": "spam"])
        _ = try await host.call("peer-unban", ["user_id": "g"])
        _ = try await host.call("peer-unban", ["user_id": "g"])  // no ban: no event
        let expected = [
            "session.open.success", "peer.join.success", "peer.join.success", "report.created", "message.deleted",
            "chat.banned", "peer.banned", "peer.leave.success", "peer.unbanned",
        ]
        #expect(try await receiver.deliveredTypes(count: expected.count) == expected)
        let events = receiver.delivered.map { $0["data"] ?? .null }
        let hostRef: JSON = ["peer_id": events[1]["peer_id"]!, "role": "host", "info": ["name": "h", "user_id": "h"]]
        #expect(events[3]["report_id"] == report)
        #expect(events[3]["target"] == ["type": "message", "id": message])
        #expect(events[3]["reason"] == "insult" && events[3]["reported_by"]?["info"]?["user_id"] == "h")
        #expect(events[4]["message_id"] == message && events[4]["deleted_by"] == hostRef)
        #expect(events[5]["user_id"] == "g" && events[5]["until"]?.intValue != nil && events[5]["banned_by"] == hostRef)
        #expect(events[6]["user_id"] == "g" && events[6]["until"] == .null && events[6]["reason"] == "spam")
        #expect(events[7]["reason"] == "peer banned")
        #expect(events[8]["user_id"] == "g" && events[8]["unbanned_by"] == hostRef)
        try await Task.sleep(for: .milliseconds(300))
        #expect(receiver.delivered.count == expected.count, "nothing more")
    }

    // MARK: the Swift SDK

    @Test func theSwiftSDKCallsAndDecodesModeration() async throws {
        let stage = try await Stage()
        let result = try await stage.host.setChatState(paused: true)
        #expect(result.paused && result.slowModeSeconds == 0)
        let state = try await stage.guest.next { event in if case .chatState(let state) = event { state } else { nil } }
        #expect(state == ChatState(paused: true, slowModeSeconds: 0, chatBanned: false, until: nil))
        try await stage.host.setChatState(paused: false, slowModeSeconds: 5)
        try await stage.moderator.chatBan(userID: "v", duration: 60)
        let banned = try await stage.viewer.next { event in
            if case .chatState(let state) = event, state.chatBanned { state } else { nil }
        }
        #expect(banned.slowModeSeconds == 5 && banned.until != nil)
        let client = try await stage.daemon.client()
        let joined = try await client.join(token: try stage.daemon.token(user: "v", role: "viewer"))
        #expect(joined.chat.state.chatBanned && joined.chat.state.slowModeSeconds == 5)
        try await stage.moderator.chatUnban(userID: "v")
        let message = try await Self.say(stage.host, "hi")["message_id"]!.stringValue!
        let reportID = try await stage.guest.report(.message(message), reason: "spam")
        let report = try await stage.moderator.next { event in
            if case .report(let report) = event { report } else { nil }
        }
        #expect(report.reportID == reportID && report.target == .message(message) && report.reason == "spam")
        #expect(report.reportedBy.peerID == stage.ids["guest"])
        try await stage.host.ban(peerID: stage.ids["guest"], reason: "bye")
        #expect(try await stage.guest.closeCode() == 4001)
        let left = try await stage.viewer.next { event in
            if case .peerLeave(_, let reason) = event { reason } else { nil }
        }
        #expect(left == "peer banned")
        try await stage.host.unban(userID: "g")
        do {
            try await stage.host.ban(userID: "h")
            Issue.record("a peer banned its own user")
        } catch RoomClientError.rpc(let code, _, _) {
            #expect(code == -32602)
        }
    }
}
