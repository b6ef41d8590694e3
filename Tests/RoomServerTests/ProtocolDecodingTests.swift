import RoomProtocol
import RoomWire
import Testing

/// What RoomProtocol's decoders make of good and bad input, value or error
/// text, pinned (captured before their optional fields, integer arrays and
/// the kept message moved to shared WireReader helpers).
@Suite struct ProtocolDecodingTests {
    /// The decoded value, or `error: path: problem`.
    private static func outcome<T>(_ text: String, _ decode: (JSON) throws -> T) -> String {
        do {
            let json = try JSON.parse(text)
            return "\(try decode(json))"
        } catch {
            return "error: \(error)"
        }
    }

    private static func lines<T>(_ inputs: [String], _ decode: (JSON) throws -> T) -> [String] {
        inputs.map { outcome($0, decode) }
    }

    @Test func scalarsAndObjects() {
        let got = Self.lines(
            [
                #"{"track_id":"t1","type":"audio","source":"screen","mute":true,"description":"d"}"#,
                #"{"type":"audio","source":"screen","mute":true,"description":"d"}"#,
                #"{"track_id":5,"type":"audio","source":"screen","mute":true,"description":"d"}"#,
                #"{"track_id":"t1","type":"sound","source":"screen","mute":true,"description":"d"}"#,
                #"{"track_id":"t1","type":"audio","source":"screen","mute":"no","description":"d"}"#,
                #"[1]"#,
            ],
            { try Track(json: $0) }
        )
        #expect(
            got == [
                #"Track(trackID: "t1", type: RoomProtocol.TrackType.audio, source: RoomProtocol.TrackSource.screen, mute: true, description: "d")"#,
                "error: track.track_id: missing",
                "error: track.track_id: expected a string, got number",
                #"error: track.type: expected one of audio, video, got "sound""#,
                "error: track.mute: expected a boolean, got string",
                "error: track: expected an object, got array",
            ]
        )
    }

    @Test func peerRefsAndPeers() {
        let refs = Self.lines(
            [
                #"{"peer_id":null,"role":null,"info":{"name":"server"}}"#,
                #"{"peer_id":"p","role":"host","info":{"name":"A","user_id":"u"}}"#,
                #"{"peer_id":1,"role":null,"info":{"name":"server"}}"#,
                #"{"peer_id":"p","role":"host","info":[]}"#,
            ],
            { try PeerRef(json: $0) }
        )
        #expect(
            refs == [
                #"PeerRef(peerID: nil, role: nil, name: "server", userID: nil)"#,
                #"PeerRef(peerID: Optional("p"), role: Optional("host"), name: "A", userID: Optional("u"))"#,
                "error: peer_ref.peer_id: expected a string, got number",
                "error: peer_ref.info: expected an object, got array",
            ]
        )
        let peers = Self.lines(
            [
                #"{"peer_id":"p","role":"r","joined_at":1.5,"groups":[],"tracks":{},"info":{}}"#,
                #"{"peer_id":"p","role":"r","joined_at":7,"groups":"g","tracks":{},"info":{}}"#,
                #"{"peer_id":"p","role":"r","joined_at":7,"groups":["a",2],"tracks":{},"info":{}}"#,
                #"{"peer_id":"p","role":"r","joined_at":7,"groups":[],"tracks":{"t":{}},"info":{}}"#,
            ],
            { try WirePeer(json: $0) }
        )
        #expect(
            peers == [
                "error: peer.joined_at: expected an integer, got 1.5",
                "error: peer.groups: expected an array, got string",
                "error: peer.groups[1]: expected a string, got number",
                "error: peer.tracks.t.track_id: missing",
            ]
        )
    }

    @Test func theShowsStates() {
        let ref = #"{"peer_id":"p","role":"host","info":{"name":"A"}}"#
        let room = #""room_id":"r","session_id":"s","started_at":1,"peer_count":2,"locked":false"#
        let got = Self.lines(
            [
                #"{\#(room)}"#,
                #"{\#(room),"hls":null,"rtmp":null,"recording":null}"#,
                #"{\#(room),"hls":{"running":true,"starts_at":5,"vod_url":"v","started_at":6,"started_by":\#(ref),"stopped_at":7,"stopped_by":\#(ref),"variants":[{"url":"u","meeting_url":null,"metadata":"m","started_at":8}],"cues":[{"id":"c","payload":"p","start_date":1,"end_date":2}]}}"#,
                #"{\#(room),"hls":{"running":false,"state":"vod","starts_at":null,"started_at":null,"started_by":null,"stopped_at":null,"stopped_by":null,"variants":[],"cues":[]}}"#,
                #"{\#(room),"hls":{"running":false,"starts_at":"soon","variants":[],"cues":[]}}"#,
                #"{\#(room),"hls":{"running":false,"started_by":"x","variants":[],"cues":[]}}"#,
                #"{\#(room),"hls":{"running":false,"stopped_at":2.5,"variants":[],"cues":[]}}"#,
                #"{\#(room),"hls":{"running":false,"stopped_by":{"peer_id":null},"variants":[],"cues":[]}}"#,
                #"{\#(room),"hls":{"running":false,"state":"gone","variants":[],"cues":[]}}"#,
                #"{\#(room),"rtmp":{"running":true,"started_at":3,"started_by":\#(ref),"rtmp_urls_count":2,"stopped_at":null}}"#,
                #"{\#(room),"rtmp":{"running":true,"started_at":"x","rtmp_urls_count":"y","stopped_at":"z"}}"#,
                #"{\#(room),"rtmp":{"running":true,"rtmp_urls_count":"y","stopped_at":"z"}}"#,
                #"{\#(room),"rtmp":{"running":true,"rtmp_urls_count":1,"stopped_at":"z"}}"#,
                #"{\#(room),"recording":{"running":false,"started_at":3,"started_by":null,"stopped_at":4}}"#,
                #"{\#(room),"recording":{"running":false,"started_by":[],"stopped_at":"z"}}"#,
            ],
            { try WireRoom(json: $0) }
        )
        let expected = [
            #"WireRoom(roomID: "r", sessionID: "s", startedAt: 1, peerCount: 2, locked: false, hls: nil, rtmp: nil, recording: nil)"#,
            #"WireRoom(roomID: "r", sessionID: "s", startedAt: 1, peerCount: 2, locked: false, hls: nil, rtmp: nil, recording: nil)"#,
            #"WireRoom(roomID: "r", sessionID: "s", startedAt: 1, peerCount: 2, locked: false, hls: Optional(RoomProtocol.HLSState(running: true, state: RoomProtocol.StreamState.live, startsAt: Optional(5), vodURL: Optional("v"), startedAt: Optional(6), startedBy: Optional(RoomProtocol.PeerRef(peerID: Optional("p"), role: Optional("host"), name: "A", userID: nil)), stoppedAt: Optional(7), stoppedBy: Optional(RoomProtocol.PeerRef(peerID: Optional("p"), role: Optional("host"), name: "A", userID: nil)), variants: [RoomProtocol.HLSVariant(url: "u", meetingURL: nil, metadata: Optional("m"), startedAt: 8)], cues: [RoomProtocol.HLSCue(id: "c", payload: "p", startDate: 1, endDate: 2)])), rtmp: nil, recording: nil)"#,
            #"WireRoom(roomID: "r", sessionID: "s", startedAt: 1, peerCount: 2, locked: false, hls: Optional(RoomProtocol.HLSState(running: false, state: RoomProtocol.StreamState.vod, startsAt: nil, vodURL: nil, startedAt: nil, startedBy: nil, stoppedAt: nil, stoppedBy: nil, variants: [], cues: [])), rtmp: nil, recording: nil)"#,
            #"error: room.hls.starts_at: expected an integer, got "soon""#,
            "error: room.hls.started_by: expected an object, got string",
            "error: room.hls.stopped_at: expected an integer, got 2.5",
            "error: room.hls.stopped_by.info: missing",
            #"error: hls.state: unknown state "gone""#,
            #"WireRoom(roomID: "r", sessionID: "s", startedAt: 1, peerCount: 2, locked: false, hls: nil, rtmp: Optional(RoomProtocol.RTMPState(running: true, startedAt: Optional(3), startedBy: Optional(RoomProtocol.PeerRef(peerID: Optional("p"), role: Optional("host"), name: "A", userID: nil)), urlsCount: 2, stoppedAt: nil)), recording: nil)"#,
            #"error: room.rtmp.started_at: expected an integer, got "x""#,
            #"error: room.rtmp.rtmp_urls_count: expected an integer, got "y""#,
            #"error: room.rtmp.stopped_at: expected an integer, got "z""#,
            "WireRoom(roomID: \"r\", sessionID: \"s\", startedAt: 1, peerCount: 2, locked: false, hls: nil, rtmp: nil, recording: Optional(RoomProtocol.RecordingState(running: false, startedAt: Optional(3), startedBy: nil, stoppedAt: Optional(4))))",
            "error: room.recording.started_by: expected an object, got array",
        ]
        #expect(got.count == expected.count)
        for (line, (g, e)) in zip(got, expected).enumerated() { #expect(g == e, "line \(line)") }
    }

    @Test func chatMessagesAndReactions() {
        let chat = Self.lines(
            [
                #"{"paused":true,"slow_mode_s":3,"chat_banned":true,"until":99}"#,
                #"{"paused":true,"slow_mode_s":3,"chat_banned":true,"until":null}"#,
                #"{"paused":true,"slow_mode_s":3,"chat_banned":true,"until":"x"}"#,
            ],
            { try ChatState(WireReader($0, path: "chat")) }
        )
        #expect(
            chat == [
                "ChatState(paused: true, slowModeSeconds: 3, chatBanned: true, until: Optional(99))",
                "ChatState(paused: true, slowModeSeconds: 3, chatBanned: true, until: nil)",
                #"error: chat.until: expected an integer, got "x""#,
            ]
        )
        let sender = #""sender":{"peer_id":"p","role":"host","info":{"name":"A"}}"#
        let inputs = [
            #"{"message_id":"m","timestamp":5,\#(sender),"recipient":{"type":"roles","roles":["a"]},"info":{"message":"hi","type":"chat"}}"#,
            #"{"message_id":"m","timestamp":5,\#(sender),"recipient":{"type":"peer","peer_id":"q","roles":null},"info":{"message":"hi","type":"chat"}}"#,
            #"{"message_id":"m","timestamp":5,\#(sender),"recipient":{"type":"roles","roles":[1]},"info":{"message":"hi","type":"chat"}}"#,
            #"{"message_id":"m","timestamp":5,\#(sender),"info":{"message":"hi","type":"chat"}}"#,
            #"{"message_id":"m","timestamp":5,\#(sender),"recipient":{"type":"peer"},"info":"hi"}"#,
            #"{"message_id":"m","timestamp":5,\#(sender),"recipient":{"type":"peer"},"info":{"message":"hi"}}"#,
            #"{"message_id":"m","timestamp":"5",\#(sender),"info":{"message":"hi","type":"chat"}}"#,
            #"{"message_id":"m","timestamp":5,"sender":{},"info":{"message":"hi","type":"chat"}}"#,
        ]
        let live = Self.lines(inputs) { try Message(WireReader($0, path: "msg")) }
        let kept = Self.lines(inputs) { try Message(kept: WireReader($0, path: "msg")) }
        let peerRef = #"RoomProtocol.PeerRef(peerID: Optional("p"), role: Optional("host"), name: "A", userID: nil)"#
        #expect(
            live == [
                #"Message(messageID: "m", timestamp: 5, sender: \#(peerRef), recipient: RoomProtocol.Recipient(type: RoomProtocol.Recipient.Kind.roles, peerID: nil, roles: Optional(["a"])), message: "hi", type: "chat", shadowed: false)"#,
                #"Message(messageID: "m", timestamp: 5, sender: \#(peerRef), recipient: RoomProtocol.Recipient(type: RoomProtocol.Recipient.Kind.peer, peerID: Optional("q"), roles: nil), message: "hi", type: "chat", shadowed: false)"#,
                "error: msg.recipient.roles[0]: expected a string, got number",
                "error: msg.recipient: missing",
                "error: msg.info: expected an object, got string",
                "error: msg.info.type: missing",
                #"error: msg.timestamp: expected an integer, got "5""#,
                "error: msg.sender.info: missing",
            ]
        )
        let toAll = "RoomProtocol.Recipient(type: RoomProtocol.Recipient.Kind.broadcast, peerID: nil, roles: nil)"
        let broadcast =
            #"Message(messageID: "m", timestamp: 5, sender: \#(peerRef), recipient: \#(toAll), "#
            + #"message: "hi", type: "chat", shadowed: false)"#
        #expect(
            kept == [
                broadcast, broadcast, broadcast, broadcast,
                "error: msg.info: expected an object, got string",
                "error: msg.info.type: missing",
                #"error: msg.timestamp: expected an integer, got "5""#,
                "error: msg.sender.info: missing",
            ]
        )
        let counts = Self.lines(
            [
                #"{"target":"stream","type":"like","total":3,"mine":1}"#,
                #"{"target":"stream","type":"like","total":3,"mine":null}"#,
                #"{"target":"stream","type":"like","total":3,"mine":true}"#,
            ],
            { try ReactionCount(WireReader($0, path: "count")) }
        )
        #expect(
            counts == [
                #"ReactionCount(target: "stream", type: "like", total: 3, mine: Optional(1))"#,
                #"ReactionCount(target: "stream", type: "like", total: 3, mine: nil)"#,
                "error: count.mine: expected an integer, got true",
            ]
        )
    }

    @Test func pollsAndQuizzes() {
        let questions = Self.lines(
            [
                #"{"index":1,"text":"q","type":"single-choice","skippable":false,"weight":2,"options":[{"index":1,"text":"a"}],"answer":{"option":1}}"#,
                #"{"index":1,"text":"q","type":"multiple-choice","skippable":false,"weight":2,"options":[],"answer":{"options":[1,3]}}"#,
                #"{"index":1,"text":"q","type":"short-answer","skippable":true,"weight":0,"answer_min_len":1,"answer_max_len":null,"options":[]}"#,
                #"{"index":1,"text":"q","type":"short-answer","skippable":true,"weight":0,"answer_max_len":"9","options":[]}"#,
                #"{"index":1,"text":"q","type":"multiple-choice","skippable":false,"weight":2,"options":[],"answer":{"options":[1,"3"]}}"#,
            ],
            { try PollQuestion(WireReader($0, path: "q")) }
        )
        #expect(
            questions == [
                #"PollQuestion(index: 1, text: "q", type: RoomProtocol.PollQuestionType.singleChoice, skippable: false, weight: 2, answerMinLen: nil, answerMaxLen: nil, options: ["a"], answer: Optional([1]))"#,
                #"PollQuestion(index: 1, text: "q", type: RoomProtocol.PollQuestionType.multipleChoice, skippable: false, weight: 2, answerMinLen: nil, answerMaxLen: nil, options: [], answer: Optional([1, 3]))"#,
                #"PollQuestion(index: 1, text: "q", type: RoomProtocol.PollQuestionType.shortAnswer, skippable: true, weight: 0, answerMinLen: Optional(1), answerMaxLen: nil, options: [], answer: nil)"#,
                #"error: q.answer_max_len: expected an integer, got "9""#,
                "error: q.answer.options[1]: expected an integer",
            ]
        )
        let info =
            #""poll_id":"p","title":"t","type":"quiz","state":"started","#
            + #""duration":0,"anonymous":false,"visibility":true"#
        let polls = Self.lines(
            [
                #"{\#(info),"vote":["a"],"responses":null,"created_by":"c","started_by":null,"created_at":1,"started_at":2,"stopped_at":null,"questions_count":0,"questions":[]}"#,
                #"{\#(info),"created_at":1,"questions_count":0}"#,
                #"{\#(info),"vote":"a","created_at":1,"questions_count":0}"#,
                #"{\#(info),"responses":[true],"created_at":1,"questions_count":0}"#,
                #"{\#(info),"created_at":1,"stopped_at":"x","questions_count":0}"#,
                #"{\#(info),"created_at":1,"questions_count":1,"questions":[{}]}"#,
            ],
            { try PollInfo(WireReader($0, path: "poll")) }
        )
        #expect(
            polls == [
                #"PollInfo(pollID: "p", title: "t", type: RoomProtocol.PollType.quiz, state: RoomProtocol.PollState.started, duration: 0, anonymous: false, visibility: true, vote: Optional(["a"]), responses: nil, createdBy: Optional("c"), startedBy: nil, stoppedBy: nil, createdAt: 1, startedAt: Optional(2), stoppedAt: nil, questionsCount: 0, questions: Optional([]))"#,
                #"PollInfo(pollID: "p", title: "t", type: RoomProtocol.PollType.quiz, state: RoomProtocol.PollState.started, duration: 0, anonymous: false, visibility: true, vote: nil, responses: nil, createdBy: nil, startedBy: nil, stoppedBy: nil, createdAt: 1, startedAt: nil, stoppedAt: nil, questionsCount: 0, questions: nil)"#,
                "error: poll.vote: expected an array, got string",
                "error: poll.responses[0]: expected a string, got boolean",
                #"error: poll.stopped_at: expected an integer, got "x""#,
                "error: poll.questions[0].index: missing",
            ]
        )
        let outcomes = Self.lines(
            [
                #"{"question":1,"correct":true}"#,
                #"{"question":1,"correct":null,"error":{"code":40906,"message":"m"}}"#,
                #"{"question":1,"correct":1}"#,
                #"{"question":1,"error":{"code":"x","message":"m"}}"#,
                #"{"question":1,"error":{"code":1}}"#,
            ],
            { try PollAnswerOutcome(WireReader($0, path: "outcome")) }
        )
        #expect(
            outcomes == [
                "PollAnswerOutcome(question: 1, correct: Optional(true), errorCode: nil, errorMessage: nil)",
                #"PollAnswerOutcome(question: 1, correct: nil, errorCode: Optional(40906), errorMessage: Optional("m"))"#,
                "error: outcome.correct: expected a boolean, got number",
                #"error: outcome.error.code: expected an integer, got "x""#,
                "error: outcome.error.message: missing",
            ]
        )
        let results = Self.lines(
            [
                #"{"poll_id":"p","user_count":1,"max_user":2,"total_response":3,"questions":[{"question":1,"type":"single-choice","options":[1,0],"skipped":0,"total":1,"correct":1}]}"#,
                #"{"poll_id":"p","user_count":1,"max_user":2,"total_response":3,"questions":[{"question":1,"type":"single-choice","options":[1,0.5],"skipped":0,"total":1}]}"#,
                #"{"poll_id":"p","user_count":1,"max_user":2,"total_response":3,"questions":[{"question":1,"type":"single-choice","options":{},"skipped":0,"total":1}]}"#,
            ],
            { try PollResult(WireReader($0, path: "result")) }
        )
        #expect(
            results == [
                #"PollResult(pollID: "p", userCount: 1, maxUser: 2, totalResponse: 3, questions: [RoomProtocol.PollResult.Question(question: 1, type: RoomProtocol.PollQuestionType.singleChoice, options: [1, 0], skipped: 0, total: 1, correct: Optional(1))])"#,
                "error: result.questions[0].options[1]: expected an integer",
                "error: result.questions[0].options: expected an array, got object",
            ]
        )
        let responses = Self.lines(
            [
                #"{"question":2,"option":1,"options":null,"text":null,"skipped":false,"peer":{"peer_id":"p","role":"r","info":{"name":"A"}}}"#,
                #"{"question":2,"options":[2,3],"skipped":false}"#,
                #"{"question":2,"options":[2,"3"],"skipped":false}"#,
                #"{"question":2,"option":"1","skipped":false}"#,
                #"{"question":2,"skipped":false,"peer":1}"#,
            ],
            { try PollResponse(WireReader($0, path: "response")) }
        )
        #expect(
            responses == [
                #"PollResponse(question: 2, option: Optional(1), options: nil, text: nil, skipped: false, peer: Optional(RoomProtocol.PeerRef(peerID: Optional("p"), role: Optional("r"), name: "A", userID: nil)))"#,
                "PollResponse(question: 2, option: nil, options: Optional([2, 3]), text: nil, skipped: false, peer: nil)",
                "error: response.options[1]: expected an integer",
                #"error: response.option: expected an integer, got "1""#,
                "error: response.peer: expected an object, got number",
            ]
        )
        let boards = Self.lines(
            [
                #"{"poll_id":null,"total_users":3,"voted_users":2,"correct_users":1,"entries":[{"position":1,"score":5,"correct_responses":1,"total_responses":2,"duration":70,"peer":null}],"last":true}"#,
                #"{"poll_id":"p","total_users":3,"voted_users":2,"correct_users":1,"entries":[{"position":1,"score":5,"correct_responses":1,"total_responses":2,"duration":70,"peer":"x"}],"last":true}"#,
            ],
            { try PollLeaderboard(WireReader($0, path: "board")) }
        )
        #expect(
            boards == [
                "PollLeaderboard(pollID: nil, totalUsers: 3, votedUsers: 2, correctUsers: 1, entries: [RoomProtocol.PollLeaderboard.Entry(position: 1, score: 5, correctResponses: 1, totalResponses: 2, duration: 70, peer: nil)], last: true)",
                "error: board.entries[0].peer: expected an object, got string",
            ]
        )
    }
}
