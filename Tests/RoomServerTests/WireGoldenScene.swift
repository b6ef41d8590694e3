import Foundation
import RoomProtocol
import RoomTokens
import RoomWire

@testable import RoomModel
@testable import RoomServer

/// The pushes and REST bodies of the golden scene (WireGoldenTests.swift).
extension GoldenScene {
    var room: Room { server.registry.rooms["golden"]! }

    /// Every `Push` case (and its variants) through `Envelope.push`, as one line each.
    func everyPush() -> [String] {
        let host = room.peersInJoinOrder[0]
        let moderator = room.peersInJoinOrder.last!
        let poll = room.polls.ordered[0]
        let draft = room.polls.ordered[1]
        let by = ActorRef(host)
        let kept = room.chat.messages[0]
        let direct = ChatMessage(
            id: "m-d",
            timestamp: 5,
            sender: .server,
            recipient: .peer("p-x"),
            message: "to you",
            type: "dm"
        )
        let group = ChatMessage(
            id: "m-g",
            timestamp: 6,
            sender: by,
            recipient: .roles(["guest", "viewer"]),
            message: "to \"groups\"",
            type: "chat"
        )
        let cues = [
            HLSCue(id: "c1", payload: "p\u{1}", startDate: 10, endDate: 20),
            HLSCue(id: "c2", payload: "", startDate: 11, endDate: 21),
        ]
        let stream = LiveStream(
            state: .live,
            startedAt: 1,
            startedBy: by,
            stoppedAt: nil,
            stoppedBy: nil,
            variants: [
                HLSVariant(url: "https://hls/a.m3u8", meetingURL: "https://m", metadata: nil, startedAt: 1),
                HLSVariant(url: "https://hls/b.m3u8", meetingURL: nil, metadata: "sd", startedAt: 2),
            ],
            cues: cues,
            startsAt: 0,
            vodURL: nil
        )
        let scheduled = LiveStream(state: .scheduled, startsAt: 99)
        let ended = LiveStream(
            state: .vod,
            startedAt: 1,
            startedBy: .server,
            stoppedAt: 3,
            stoppedBy: by,
            vodURL: "https://vod"
        )
        var pushes: [Push] = [
            .peerJoin(host, withTracks: true),
            .peerJoin(host, withTracks: false),
            .peerLeave(peerID: "p-1", reason: .peerBanned),
            .peerUpdate(host, changed: [.name, .data, .role, .groups], withTracks: true),
            .peerUpdate(moderator, changed: [], withTracks: false),
            .broadcast(kept),
            .broadcast(direct),
            .broadcast(group),
            .messageDelete(messageID: "m-1", deletedBy: by),
            .chatClear(clearedBy: .server),
            .messagePin(kept, pinnedBy: by),
            .messagePin(nil, pinnedBy: .server),
            .chatState(ChatState(paused: true, slowModeSeconds: 5, chatBanned: true, until: 77)),
            .chatState(ChatState(paused: false, slowModeSeconds: 0, chatBanned: false, until: nil)),
            .report(Report(id: "r-1", target: ReportTarget(.question, "q-1"), reason: "why", reportedBy: by, at: 8)),
            .reactions([
                ReactionCount(target: "stream", type: "clap", total: 5),
                ReactionCount(target: "m-1", type: "love", total: 1, mine: 1),
            ]),
        ]
        for track in host.tracks {
            pushes += [.trackAdd(peerID: host.id, track), .trackUpdate(peerID: host.id, track)]
            pushes.append(.trackRemove(peerID: host.id, track))
        }
        pushes += [
            .roleChangeRequest(requestedBy: .peer(host), role: "guest", token: "t-1"),
            .roleChangeRequest(requestedBy: .server, role: "viewer", token: "t-2"),
            .roleChangeRejected(token: "t-1", requestedFor: "p-2", role: "guest", reason: .expired),
            .trackUpdateRequest(requestedBy: .peer(moderator), trackID: "mic", mute: true),
            .changeTrackMuteStateRequest(requestedBy: .server, filter: TrackFilter(), value: false),
            .changeTrackMuteStateRequest(
                requestedBy: .peer(host),
                filter: TrackFilter(roles: ["guest"], kind: .video, source: .screen),
                value: true
            ),
            .peerLeaveRequest(requestedBy: .server, reason: "room over", roomEnd: true),
            .peerLeaveRequest(requestedBy: .peer(host), reason: "", roomEnd: false),
            .activeSpeakers([]),
            .activeSpeakers([
                Speaker(peerID: host.id.rawValue, trackID: "mic", level: 80),
                Speaker(peerID: "p-9", trackID: "t", level: 0),
            ]),
            .roomState(peerCount: 12, joined: [host, moderator], left: ["p-7", "p-8"]),
            .roomState(peerCount: 3, joined: nil, left: nil),
            .roomState(peerCount: 0, joined: [], left: []),
            .pollStart(poll, withAnswers: true),
            .pollStart(poll, withAnswers: false),
            .pollStart(draft, withAnswers: false),
            .pollStop(poll),
            .pollStop(draft),
            .pollStats(poll, maxUser: 4, withCorrect: true),
            .pollStats(poll, maxUser: 4, withCorrect: false),
            .pollStats(draft, maxUser: 0, withCorrect: true),
            .questions(changed: room.questions.all, removed: ["q-x"]),
            .questions(changed: [], removed: []),
            .pollAnswer(pollID: poll.id, answers: [["question": 1, "option": 1]]),
            .hlsUpdate(stream),
            .hlsUpdate(scheduled),
            .hlsUpdate(ended),
            .hlsTimedMetadata(cues),
            .tokenExpiring(expiresAt: 1_763_700_300_000),
        ]
        if let entry = room.sessionStore.entries["topic"] { pushes.append(.metadataChange(entry)) }
        if let rtmp = room.rtmp { pushes.append(.rtmpUpdate(rtmp)) }
        if let recording = room.recording { pushes.append(.recordingUpdate(recording)) }
        var lines = pushes.map { text(Envelope.push($0, policyChanges: [:])) }
        for role in ["host", "viewer"] {
            lines.append(
                text(Envelope.push(.policyChange(role: role), policyChanges: server.dispatcher.policies.changeFrames))
            )
        }
        return lines
    }

    /// The REST API's and the feed's answers, and what they pushed.
    func restBodies() throws -> [String] {
        let admin = "Bearer " + (try TokenMinter(secret: Self.secret).managementToken())
        transcript = []
        let host = room.peersInJoinOrder[0].id
        let requests: [(HTTPRequest.Method, String, String?)] = [
            (.get, "/v2/active-rooms", nil),
            (.get, "/v2/active-rooms/golden", nil),
            (.get, "/v2/active-rooms/golden/peers", nil),
            (.get, "/v2/active-rooms/golden/peers/\(host)", nil),
            (.get, "/v2/active-rooms/golden/peers/nobody", nil),
            (.get, "/v2/active-rooms/golden/metadata", nil),
            (.get, "/v2/active-rooms/golden/reactions", nil),
            (.get, "/v2/active-rooms/golden/rtmp", nil),
            (.get, "/v2/active-rooms/golden/recording", nil),
            (.post, "/v2/active-rooms/golden/hls/start", #"{"variants":[{"meeting_url":"https://m/r"}]}"#),
            (.post, "/v2/active-rooms/golden/hls/timed-metadata", #"{"metadata_objs":[{"payload":"x","duration":5}]}"#),
            (.get, "/v2/active-rooms/golden/hls", nil),
            (.get, "/v2/active-rooms/golden/hls/daterange", nil),
            (.get, "/v2/active-rooms/golden/stream", nil),
            (.post, "/v2/active-rooms/golden/hls/stop", "{}"),
            (.post, "/v2/active-rooms/golden/rtmp/start", #"{"rtmp_urls":["rtmp://b/k","rtmp://c/k"]}"#),
            (.get, "/v2/active-rooms/golden/rtmp", nil),
            (.post, "/v2/active-rooms/golden/recording/start", "{}"),
            (.post, "/v2/active-rooms/golden/send-message", #"{"message":"from the server","type":"notice"}"#),
            (.post, "/v2/active-rooms/golden/metadata", #"{"key":"k2","value":[true]}"#),
            (.post, "/v2/active-rooms/golden/peers/\(host)", #"{"name":"Ada R.","role":"moderator"}"#),
            (.post, "/v2/active-rooms/golden/ban", #"{"user_id":"zed","reason":"spam"}"#),
            (.get, "/v2/active-rooms/golden/bans", nil),
            (.post, "/v2/rooms", #"{"room_id":"later","polls":[{"title":"Draft","type":"poll"}]}"#),
            (.get, "/v2/active-rooms/later", nil),
            (.get, "/v2/rooms/golden/feed", nil),
            (.post, "/v2/active-rooms/golden/end-room", #"{"reason":"over","lock":true}"#),
            (.get, "/v2/active-rooms/golden", nil),
        ]
        var lines: [String] = []
        for (method, path, body) in requests {
            clock.now += 250
            let request = HTTPRequest(method: method, path: path, authorization: admin)
            if let body { request.body = Array(body.utf8) }
            if path.hasSuffix("/feed") {
                let now = clock.now / 1000
                request.query = ["from": "\(now - 30)", "to": "\(now)"]
            }
            let response = server.routes.route(request)
            let answer =
                "\(method.rawValue) \(path) \(response.status) \(String(decoding: response.body, as: UTF8.self))"
            lines += answer.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            settle()
            lines += transcript
            transcript = []
        }
        return lines
    }

    private func text(_ frame: Frame) -> String { String(decoding: frame.textPayload, as: UTF8.self) }
}
