import Foundation
import RoomClient
import RoomWire
import Testing

/// REST for the whole show (1.3, PROTOCOL.md section 32), over real
/// sockets: each route does what its WebSocket call does — the peers'
/// sockets get the same pushes, with the server PeerRef as the actor — and
/// answers the documented errors. In a cluster run the REST requests go to
/// the last node, which is usually not the room's home (RestForwarder).
@Suite struct RestShowTests {
    static let base = "/v2/active-rooms/room-1"

    static func rest(
        _ stage: Stage,
        _ method: String,
        _ path: String,
        _ body: String? = nil
    ) async throws -> (status: Int, body: JSON) {
        try await http(method, stage.daemon, base + path, token: try stage.daemon.managementToken(), body: body)
    }

    static func say(_ client: RoomClient, _ text: String) async throws -> String {
        let sent = try await client.call("broadcast", ["info": ["message": .string(text)]])
        return try #require(sent["message_id"]?.stringValue)
    }

    static func isServer(_ ref: JSON?) -> Bool {
        ref?["peer_id"] == .null && ref?["info"]?["name"] == "server"
    }

    // MARK: chat

    @Test func chatRoutesPushWhatTheirWebSocketCallsPush() async throws {
        let stage = try await Stage()
        let first = try await Self.say(stage.viewer, "hello")
        let second = try await Self.say(stage.guest, "spam")
        try await stage.settle()

        let history = try await Self.rest(stage, "GET", "/chat?limit=10")
        #expect(history.status == 200)
        #expect(history.body["messages"]?.arrayValue?.compactMap { $0["message_id"]?.stringValue } == [first, second])
        #expect(history.body["more"] == false)
        let older = try await Self.rest(stage, "GET", "/chat?before=\(second)")
        #expect(older.body["messages"]?.arrayValue?.count == 1)
        #expect(try await Self.rest(stage, "GET", "/chat?limit=0").status == 400)
        let unknownBefore = try await Self.rest(stage, "GET", "/chat?before=nope")
        #expect(unknownBefore.status == 400, "a cursor in the query: the request's fault")
        #expect(unknownBefore.body["code"] == 40405)

        #expect(try await Self.rest(stage, "DELETE", "/chat/\(second)").status == 200)
        for client in stage.all {
            let push = try await client.next("on-message-delete")
            #expect(push["message_id"]?.stringValue == second)
            #expect(Self.isServer(push["deleted_by"]), "the server PeerRef: \(push)")
        }
        let again = try await Self.rest(stage, "DELETE", "/chat/\(second)")
        #expect(again.status == 404)
        #expect(again.body["code"] == 40405)

        #expect(try await Self.rest(stage, "POST", "/chat/pin", #"{"message_id":"\#(first)"}"#).status == 200)
        for client in stage.all {
            let push = try await client.next("on-message-pin")
            #expect(push["message"]?["message_id"]?.stringValue == first)
            #expect(Self.isServer(push["pinned_by"]))
        }
        let pinned = try await Self.rest(stage, "GET", "/chat")
        #expect(pinned.body["pinned"]?["message_id"]?.stringValue == first, "the history comes with the pin")
        #expect(pinned.body["state"] == ["paused": false, "slow_mode_s": 0])
        #expect(try await Self.rest(stage, "POST", "/chat/pin", "{}").status == 400)
        #expect(try await Self.rest(stage, "POST", "/chat/pin", #"{"message_id":"nope"}"#).body["code"] == 40405)

        let state = try await Self.rest(stage, "POST", "/chat/state", #"{"slow_mode_s":10}"#)
        #expect(state.status == 200)
        #expect(state.body == ["paused": false, "slow_mode_s": 10])
        for client in stage.all { #expect(try await client.next("on-chat-state")["slow_mode_s"] == 10) }
        let emptyState = try await Self.rest(stage, "POST", "/chat/state", "{}")
        #expect(emptyState.status == 400)
        #expect(emptyState.body["code"] == -32602)
        #expect(try await Self.rest(stage, "POST", "/chat/state", #"{"slow_mode_s":4000}"#).status == 400)

        #expect(try await Self.rest(stage, "POST", "/chat/clear").status == 200)
        for client in stage.all {
            #expect(Self.isServer(try await client.next("on-chat-clear")["cleared_by"]))
        }
        let cleared = try await Self.rest(stage, "GET", "/chat")
        #expect(cleared.body["messages"] == [])
        #expect(cleared.body["pinned"] == .null, "the clear unpinned it")
        #expect(cleared.body["state"] == ["paused": false, "slow_mode_s": 10])
        #expect(try await Self.rest(stage, "GET", "/chatter").status == 404)
        #expect(try await Self.rest(stage, "PATCH", "/chat", "{}").status == 404)
    }

    @Test func chatBansAreSetListedAndLifted() async throws {
        let stage = try await Stage()
        let banned = try await Self.rest(stage, "POST", "/chat-bans", #"{"user_id":"g","duration_s":600}"#)
        #expect(banned.status == 200)
        let state = try await stage.guest.next("on-chat-state")
        #expect(state["chat_banned"] == true)
        #expect(try await stage.guest.errorCode("broadcast", ["info": ["message": "hi"]]) == 40302)
        #expect(try await Self.rest(stage, "POST", "/chat-bans", #"{"user_id":"v","shadow":true}"#).status == 200)

        let list = try await Self.rest(stage, "GET", "/chat-bans")
        #expect(list.status == 200)
        let bans = try #require(list.body["chat_bans"]?.arrayValue)
        #expect(bans.map { $0["user_id"]?.stringValue } == ["g", "v"])
        #expect(bans[0]["until"]?.intValue != nil)
        #expect(bans[0]["shadow"] == false)
        #expect(bans[1]["until"] == .null)
        #expect(bans[1]["shadow"] == true)
        #expect(Self.isServer(bans[0]["banned_by"]))
        #expect(list.body["total"] == 2)
        let page = try await Self.rest(stage, "GET", "/chat-bans?offset=1&limit=1")
        #expect(page.body["chat_bans"]?.arrayValue?.map { $0["user_id"]?.stringValue } == ["v"])

        // A moderator's chat ban names it as banned_by.
        _ = try await stage.moderator.call("chat-ban", ["user_id": "x-user"])
        let named = try await Self.rest(stage, "GET", "/chat-bans")
        #expect(named.body["chat_bans"]?[2]?["banned_by"]?["peer_id"] == stage.id("moderator"))

        #expect(try await Self.rest(stage, "DELETE", "/chat-bans/g").status == 200)
        #expect(try await stage.guest.next("on-chat-state")["chat_banned"] == false)
        _ = try await stage.guest.call("broadcast", ["info": ["message": "back"]])
        let missing = try await Self.rest(stage, "POST", "/chat-bans", #"{"duration_s":5}"#)
        #expect(missing.status == 400)
        #expect(missing.body["message"]?.stringValue?.contains("user_id") == true)
        #expect(try await Self.rest(stage, "POST", "/chat-bans", #"{"user_id":"g","duration_s":0}"#).status == 400)
    }

    @Test func heldMessagesAreListedApprovedAndRejectedOverREST() async throws {
        let settings = #"{"chat":{"hold":{"first_message":true}}}"#
        let stage = try await Stage(daemon: try await Daemon.start(settings: settings))
        let held = try await stage.viewer.call("broadcast", ["info": ["message": "first!"]])
        let heldID = try #require(held["message_id"]?.stringValue)
        let other = try await stage.guest.call("broadcast", ["info": ["message": "me too"]])
        let otherID = try #require(other["message_id"]?.stringValue)
        try await stage.settle()
        let list = try await Self.rest(stage, "GET", "/held")
        #expect(list.status == 200)
        #expect(list.body["messages"]?.arrayValue?.compactMap { $0["message_id"]?.stringValue } == [heldID, otherID])

        #expect(try await Self.rest(stage, "POST", "/held/\(heldID)/approve").status == 200)
        for client in [stage.host, stage.guest, stage.moderator] {
            #expect(try await client.next("on-broadcast")["message_id"]?.stringValue == heldID)
        }
        let review = try await stage.viewer.next("on-message-review")
        #expect(review == ["message_id": .string(heldID), "status": "approved", "reason": nil])

        let rejected = try await Self.rest(stage, "POST", "/held/\(otherID)/reject", #"{"reason":"off topic"}"#)
        #expect(rejected.status == 200)
        #expect(try await stage.guest.next("on-message-review")["reason"] == "off topic")
        let gone = try await Self.rest(stage, "POST", "/held/\(otherID)/approve")
        #expect(gone.status == 404)
        #expect(gone.body["code"] == 40405)
        #expect(try await Self.rest(stage, "GET", "/held").body["messages"] == [])
    }

    // MARK: questions and polls

    @Test func questionsAreListedAndUpdatedOverREST() async throws {
        let stage = try await Stage()
        let asked = try await stage.viewer.call("question-add", ["text": "when?"])
        let id = try #require(asked["question_id"]?.stringValue)
        try await stage.settle()
        let list = try await Self.rest(stage, "GET", "/questions?state=open&order=new")
        #expect(list.status == 200)
        #expect(list.body["questions"]?[0]?["question_id"]?.stringValue == id)
        #expect(list.body["total"] == 1)
        #expect(try await Self.rest(stage, "GET", "/questions?state=gone").status == 400)

        let updated = try await Self.rest(stage, "PATCH", "/questions/\(id)", #"{"state":"answered","pinned":true}"#)
        #expect(updated.status == 200)
        #expect(updated.body["state"] == "answered")
        #expect(updated.body["pinned"] == true)
        // `on-questions` is coalesced per tick: the add's own push may come
        // first (settle() does not wait for a tick); the update's follows.
        var state: JSON?
        for _ in 0..<2 where state != "answered" {
            state = try await stage.viewer.next("on-questions")["changed"]?[0]?["state"]
        }
        #expect(state == "answered")
        let unknown = try await Self.rest(stage, "PATCH", "/questions/nope", #"{"state":"hidden"}"#)
        #expect(unknown.status == 404)
        #expect(unknown.body["code"] == 40406)
        #expect(try await Self.rest(stage, "PATCH", "/questions/\(id)", "{}").status == 400)
        let hidden = try await Self.rest(stage, "PATCH", "/questions/\(id)", #"{"state":"hidden"}"#)
        #expect(hidden.status == 200)
        #expect(try await Self.rest(stage, "GET", "/questions?state=hidden").body["total"] == 1)
    }

    @Test func pollsAreCreatedStartedStoppedAndCountedOverREST() async throws {
        let stage = try await Stage()
        let body = #"""
            {"title":"Capitals","type":"quiz","questions":[{"question":{"text":"Capital of France?",
            "type":"single-choice"},"options":[{"text":"Paris"},{"text":"Lyon"}],"answer":{"option":1}}]}
            """#
        let created = try await Self.rest(stage, "POST", "/polls", body)
        #expect(created.status == 200)
        let pollID = try #require(created.body["poll_id"]?.stringValue)
        #expect(try await Self.rest(stage, "POST", "/polls", #"{"type":"poll"}"#).status == 400)

        let started = try await Self.rest(stage, "POST", "/polls/\(pollID)/start")
        #expect(started.status == 200)
        #expect(started.body["poll_id"]?.stringValue == pollID)
        for client in stage.all {
            let push = try await client.next("on-poll-start")
            #expect(push["polls"]?[0]?["poll_id"]?.stringValue == pollID)
        }
        let twice = try await Self.rest(stage, "POST", "/polls/\(pollID)/start")
        #expect(twice.status == 409)
        #expect(twice.body["code"] == 40904)
        _ = try await stage.viewer.call(
            "poll-response",
            ["poll_id": .string(pollID), "responses": [["question": 1, "option": 1]]]
        )
        let results = try await Self.rest(stage, "GET", "/polls/\(pollID)/results")
        #expect(results.status == 200)
        #expect(results.body["user_count"] == 1)
        #expect(try await Self.rest(stage, "POST", "/polls/\(pollID)/stop").status == 200)
        for client in stage.all { _ = try await client.next("on-poll-stop") }
        let unknown = try await Self.rest(stage, "POST", "/polls/nope/stop")
        #expect(unknown.status == 404)
        #expect(unknown.body["code"] == 40404)
        #expect(try await Self.rest(stage, "GET", "/polls/nope/results").status == 404)

        // GET polls: newest first, with their questions (and the quiz's answer), by state, paged.
        let second = try await Self.rest(stage, "POST", "/polls", #"{"title":"Next","type":"poll"}"#)
        let secondID = try #require(second.body["poll_id"]?.stringValue)
        let all = try await Self.rest(stage, "GET", "/polls")
        #expect(all.status == 200 && all.body["total"] == 2 && all.body["more"] == nil, "\(all.body)")
        #expect(all.body["polls"]?.arrayValue?.compactMap { $0["poll_id"]?.stringValue } == [secondID, pollID])
        let quiz = all.body["polls"]?[1]
        #expect(quiz?["state"] == "stopped" && quiz?["title"] == "Capitals")
        #expect(quiz?["questions"]?[0]?["options"]?[0]?["text"] == "Paris")
        #expect(quiz?["questions"]?[0]?["answer"] != nil, "the operator sees the quiz's answer")
        let stopped = try await Self.rest(stage, "GET", "/polls?state=stopped")
        #expect(stopped.body["polls"]?.arrayValue?.compactMap { $0["poll_id"]?.stringValue } == [pollID])
        let page = try await Self.rest(stage, "GET", "/polls?limit=1")
        #expect(page.body["polls"]?.arrayValue?.count == 1 && page.body["more"] == true)
        #expect(try await Self.rest(stage, "GET", "/polls?state=done").status == 400)
        #expect(try await Self.rest(stage, "GET", "/polls?limit=0").status == 400)
    }

    // MARK: mute

    @Test func muteAsksThePeerAndMutesEveryUnmutedTrack() async throws {
        let stage = try await Stage()
        _ = try await stage.guest.call("track-add", ["track_id": "mic", "type": "audio"])
        _ = try await stage.guest.call("track-add", ["track_id": "cam", "type": "video"])
        _ = try await stage.guest.call("track-add", ["track_id": "off", "type": "audio", "mute": true])
        try await stage.settle()
        let guestID = stage.ids["guest"]!
        let muted = try await Self.rest(stage, "POST", "/peers/\(guestID)/mute", "{}")
        #expect(muted.status == 200)
        #expect(muted.body["track_ids"] == ["mic", "cam"])
        for track in ["mic", "cam"] {
            let request = try await stage.guest.next("on-track-update-request")
            #expect(request["track_id"]?.stringValue == track)
            #expect(request["mute"] == true)
            #expect(Self.isServer(request["requested_by"]))
        }
        for _ in 0..<2 { #expect(try await stage.viewer.next("on-track-update")["track"]?["mute"] == true) }

        let one = try await Self.rest(stage, "POST", "/peers/\(guestID)/mute", #"{"track_id":"mic"}"#)
        #expect(one.body["track_ids"] == ["mic"])
        let unmute = try await Self.rest(stage, "POST", "/peers/\(guestID)/mute", #"{"value":false}"#)
        #expect(unmute.status == 400)
        #expect(unmute.body["code"] == -32602)
        let noTrack = try await Self.rest(stage, "POST", "/peers/\(guestID)/mute", #"{"track_id":"nope"}"#)
        #expect(noTrack.status == 404)
        #expect(noTrack.body["code"] == 40401)
        let noPeer = try await Self.rest(stage, "POST", "/peers/nobody/mute", "{}")
        #expect(noPeer.status == 404)
        #expect(noPeer.body["code"] == 40400)
    }

    // MARK: auth

    @Test func everyNewRouteNeedsAManagementToken() async throws {
        let stage = try await Stage()
        let app = try stage.daemon.token(user: "h", role: "host")
        for (method, path) in [
            ("GET", "/chat"), ("DELETE", "/chat/x"), ("POST", "/chat/pin"), ("POST", "/chat/clear"),
            ("POST", "/chat/state"), ("POST", "/chat-bans"), ("DELETE", "/chat-bans/u"), ("GET", "/chat-bans"),
            ("GET", "/held"), ("POST", "/held/x/approve"), ("POST", "/held/x/reject"), ("GET", "/questions"),
            ("PATCH", "/questions/x"), ("POST", "/polls"), ("POST", "/polls/x/start"), ("POST", "/polls/x/stop"),
            ("GET", "/polls/x/results"), ("POST", "/peers/x/mute"), ("GET", "/reports"),
            ("POST", "/reports/x/resolve"),
        ] {
            let body = method == "GET" || method == "DELETE" ? nil : "{}"
            let anonymous = try await http(method, stage.daemon, Self.base + path, body: body)
            #expect(anonymous.status == 401, "\(method) \(path)")
            #expect(anonymous.body["code"] == 40100)
            let appToken = try await http(method, stage.daemon, Self.base + path, token: app, body: body)
            #expect(appToken.status == 403, "\(method) \(path)")
        }
        let noRoom = try await http(
            "GET",
            stage.daemon,
            "/v2/active-rooms/nowhere/chat",
            token: try stage.daemon.managementToken()
        )
        #expect(noRoom.status == 404)
        #expect(noRoom.body["code"] == 40001)
    }
}
