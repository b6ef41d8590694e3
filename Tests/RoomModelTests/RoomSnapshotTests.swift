import RoomConfig
import RoomProtocol
import RoomWire
import Testing

@testable import RoomModel

/// A room's saved state (cluster takeover, docs/CLUSTER.md): what a snapshot
/// restores on another node, and how its peers' graces end there.
@Suite struct RoomSnapshotTests {
    static func template() -> RoleTemplate {
        var roles = Fixtures.template().roles
        roles["host"]!.permissions.pollWrite = true
        roles["host"]!.permissions.moderateChat = true
        roles["viewer"]!.permissions.pollRead = true
        return RoleTemplate(name: "t", roles: Array(roles.values), settings: Settings())
    }

    /// A room with a track, a group, a session-store key, a started poll with a vote and a lock.
    static func busyRoom() throws -> (RoomRegistry, ManualClock, Room) {
        let clock = ManualClock()
        let registry = RoomRegistry(template: template(), clock: clock, ids: SequentialIDGenerator())
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        _ = try registry.addTrack(host, id: "mic", kind: .audio)
        _ = try registry.addToGroup(by: .peer(host), host, group: "stage")
        _ = try registry.setMetadata(by: .peer(host), in: host.room, key: "topic", value: .string("snapshots"))
        let poll = try registry.setPollInfo(by: host, PollInfoInput(title: "Q", type: .poll))
        _ = try registry.setPollQuestions(
            by: host,
            pollID: poll.id,
            [
                QuestionInput(text: "?", type: .singleChoice, options: ["a", "b"])
            ]
        )
        _ = try registry.startPoll(by: host, pollID: poll.id)
        _ = try registry.respond(viewer, pollID: poll.id, [ResponseInput(question: 1, option: 2)])
        return (registry, clock, host.room)
    }

    /// Every kind of state a snapshot carries: tracks of each kind and source, groups, both kinds of
    /// metadata listening, session-store values (nested, deleted), a poll, a quiz with
    /// votes, skips and text answers, a draft, and a running live stream with cues.
    static func everythingRoom() throws -> (RoomRegistry, Room) {
        let clock = ManualClock()
        let registry = RoomRegistry(template: template(), clock: clock, ids: SequentialIDGenerator())
        let host = try registry.join(Fixtures.request("h", role: "host", name: "Host \"one\"")).peer
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let viewer = try registry.join(Fixtures.request("v", role: "viewer", viewOnly: true)).peer
        let room = host.room
        _ = try registry.addTrack(host, id: "mic", kind: .audio, mute: true, description: "desk\nmic")
        _ = try registry.addTrack(host, id: "cam", kind: .video)
        _ = try registry.addTrack(host, id: "screen", kind: .video, source: .screen)
        _ = try registry.addTrack(guest, id: nil, kind: .audio, source: .plugin)
        _ = try registry.addToGroup(by: .peer(host), host, group: "stage")
        _ = try registry.addToGroup(by: .server, viewer, group: RoomRegistry.handRaiseGroup)
        _ = try registry.listenMetadata(host, keys: ["*"])
        _ = try registry.listenMetadata(guest, keys: ["topic", "score"])
        _ = try registry.updatePeer(guest, name: nil, data: #"{"seat":4}"#)
        _ = try registry.setMetadata(by: .peer(host), in: room, key: "topic", value: .string("snapshots ✓"))
        _ = try registry.setMetadata(
            by: .server,
            in: room,
            key: "score",
            value: try JSON.parse(#"{"a":[1,2.50,-0,1e3,{"b":null}],"c":"é\n\u0001","a":true}"#)
        )
        _ = try registry.setMetadata(by: .peer(host), in: room, key: "gone", value: .number("7"))
        _ = try registry.setMetadata(by: .peer(host), in: room, key: "gone", value: .null)
        clock.advance(byMillis: 10)

        let poll = try registry.setPollInfo(
            by: host,
            PollInfoInput(
                title: "Lunch",
                type: .poll,
                visibility: true,
                vote: ["guest", "viewer"]
            )
        )
        _ = try registry.setPollQuestions(
            by: host,
            pollID: poll.id,
            [
                QuestionInput(text: "Where?", type: .multipleChoice, options: ["here", "there", "anywhere"])
            ]
        )
        _ = try registry.startPoll(by: host, pollID: poll.id)
        _ = try registry.respond(
            viewer,
            pollID: poll.id,
            [ResponseInput(question: 1, options: [3, 1], duration: 1200)]
        )
        let quiz = try registry.setPollInfo(
            by: host,
            PollInfoInput(
                title: "Quiz",
                type: .quiz,
                duration: 60,
                anonymous: true,
                responses: ["guest"]
            )
        )
        _ = try registry.setPollQuestions(
            by: host,
            pollID: quiz.id,
            [
                QuestionInput(text: "2+2?", type: .singleChoice, weight: 2, options: ["3", "4"], answer: [2]),
                QuestionInput(text: "why?", type: .shortAnswer, skippable: true, answerMinLen: 1, answerMaxLen: 50),
            ]
        )
        _ = try registry.startPoll(by: host, pollID: quiz.id)
        _ = try registry.respond(
            guest,
            pollID: quiz.id,
            [
                ResponseInput(question: 1, option: 2, duration: 900),
                ResponseInput(question: 2, text: "because"),
            ]
        )
        _ = try registry.respond(
            viewer,
            pollID: quiz.id,
            [
                ResponseInput(question: 1, option: 1),
                ResponseInput(question: 2, skipped: true),
            ]
        )
        _ = try registry.setPollInfo(by: host, PollInfoInput(title: "Draft", type: .poll))

        _ = try registry.startLiveStream(
            by: .peer(host),
            in: room,
            variants: [
                HLSVariantRequest(meetingURL: "https://meet.example.com/r1", metadata: "main"), HLSVariantRequest(),
            ]
        )
        _ = try registry.addTimedMetadata(
            by: .server,
            in: room,
            [
                HLSCueRequest(payload: "slide 1", durationS: 30),
                HLSCueRequest(payload: "{\"q\":1}", durationS: 60),
            ]
        )
        // Chat (1.2): kept messages from a peer and from REST, one deleted, one pinned.
        let said = try registry.broadcast(from: guest, message: "hi \"all\"\n", type: "chat", to: .everyone).message
        _ = try registry.send(from: .server, in: room, message: "notice", type: "notice", to: .everyone)
        let gone = try registry.broadcast(from: host, message: "gone", type: "chat", to: .everyone).message
        _ = try registry.deleteMessage(gone.id, by: .peer(host), in: room)
        _ = try registry.pinMessage(said.id, by: .peer(host), in: room)
        // Q&A (1.2): questions with votes both ways, one pinned and answered, one deleted.
        let asked = try registry.addQuestion(by: guest, text: "why \"snapshots\"?")
        let other = try registry.addQuestion(by: host, text: "and?")
        let withdrawn = try registry.addQuestion(by: guest, text: "gone")
        _ = try registry.voteQuestion(by: viewer, asked.id, .up)
        _ = try registry.voteQuestion(by: host, asked.id, .down)
        _ = try registry.updateQuestion(by: host, other.id, state: .answered, pinned: true)
        try registry.deleteQuestion(by: guest, withdrawn.id)
        // Reactions (1.2): on a message, taps on a contestant (pushed) and on the stream (still to push).
        _ = try registry.react(viewer, target: said.id, type: "love")
        _ = try registry.react(guest, target: "contestant:red", type: "clap", count: 5)
        _ = registry.tickReactions()
        _ = try registry.react(viewer, target: "stream", type: "fire", count: 3)
        return (registry, room)
    }

    @Test func aRestoredRoomHasTheSameStateAndItsEncodingRoundTrips() throws {
        let (registry, _, room) = try Self.busyRoom()
        let snapshot = registry.snapshot(of: room)
        let decoded = try RoomSnapshot(json: snapshot.encodeJSON())
        #expect(decoded == snapshot)

        let (other, _) = Fixtures.registry()
        let restored = try #require(other.restore(decoded, graceMillis: 5000))
        #expect(other.snapshot(of: restored) == snapshot, "nothing lost or added")
        #expect(restored.sessionID == room.sessionID)
        let host = try #require(restored.peer(room.peersInJoinOrder[0].id))
        #expect(host.tracks.map(\.trackID) == ["mic"])
        #expect(host.groups == ["stage"])
        #expect(restored.sessionStore.entry("topic").version == 1)
        #expect(restored.polls.ordered.first?.tallies.first?.optionCounts == [0, 1])
        // A later join continues the sequence: no two peers share a place in the join order.
        let late = try other.join(Fixtures.request("late", role: "viewer")).peer
        #expect(restored.peersInJoinOrder.last === late)
    }

    @Test func everyKindOfStateRoundTripsThroughJSON() throws {
        let (registry, room) = try Self.everythingRoom()
        var snapshot = registry.snapshot(of: room)
        snapshot.locked = true
        #expect(snapshot.peers.map(\.metadataListening) == [.all, .keys(["topic", "score"]), .none])
        #expect(snapshot.sessionStore.tombstones == ["gone"])
        #expect(snapshot.sessionStore.entry("gone").version == 2, "a deleted key keeps its version")
        #expect(snapshot.polls.map(\.state) == [.started, .started, .created])
        #expect(
            snapshot.polls[1].records.contains { $0.skipped } && snapshot.polls[1].records.contains { $0.text != nil }
        )
        #expect(snapshot.liveStream?.cues.count == 2 && snapshot.liveStream?.variants.count == 2)
        #expect(snapshot.chatMessages.map(\.message) == ["hi \"all\"\n", "notice"])
        #expect(snapshot.chatMessages[1].sender == .server)
        #expect(snapshot.pinned?.message == "hi \"all\"\n")
        #expect(snapshot.questions.map(\.text) == ["why \"snapshots\"?", "and?"] && snapshot.questionsAdded == 3)
        #expect(snapshot.questions[0].votes.count == 2 && snapshot.questions[1].pinned)
        #expect(snapshot.reactions.map(\.target) == ["stream", "contestant:red", snapshot.chatMessages[0].id])
        #expect(snapshot.reactions[0].heard == ["fire": 0] && snapshot.reactions[0].users == ["fire": ["v": 3]])
        #expect(snapshot.reactions[1].totals == ["clap": 5] && snapshot.reactions[1].heard.isEmpty)

        let bytes = snapshot.encodeJSON()
        #expect(snapshot.encodeJSON() == bytes, "the same room gives the same bytes")
        let decoded = try RoomSnapshot(json: bytes)
        #expect(decoded == snapshot)
        #expect(decoded.sessionStore.tombstones == snapshot.sessionStore.tombstones)
        #expect(decoded.sessionStore.liveCount == snapshot.sessionStore.liveCount)
        #expect(decoded.polls.map(\.voters) == snapshot.polls.map(\.voters))
        #expect(decoded.encodeJSON() == bytes)

        // Session-store values are JSON values in the snapshot, byte for byte as stored.
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains(#""value":{"a":[1,2.50,-0,1e3,{"b":null}],"c":"é\n\u0001","a":true}"#))
        #expect(text.contains(#""key":"gone","value":null,"version":2,"#), "a tombstone")
        #expect(text.contains(#""metadata_listening":"*""#))
        #expect(text.contains(#""metadata_listening":["score","topic"]"#))

        let (other, _) = Fixtures.registry()
        let restored = try #require(other.restore(decoded, graceMillis: 5000))
        #expect(other.snapshot(of: restored) == snapshot)
        #expect(other.lockedRoomIDs.contains(room.id))
        #expect(
            other.deadlines.dueTimes.contains(snapshot.polls[1].startedAt! + 60_000),
            "the quiz's timer runs again"
        )
        #expect(other.tickReactions().first?.push.name == "on-reactions:stream/fire=3", "the push still due")
    }

    @Test func compactJSONWritesWhatJSONBytesWrites() throws {
        let value = try JSON.parse(#"[{"a":{"b":[[],{},"x\"\\\/\b\f\t"]},"a":-1.5E+3},null,true,false,"ü"]"#)
        #expect(compactJSON(value) == value.bytes)
        var deep = JSON.null
        for _ in 0..<1_000 { deep = .array([deep]) }
        #expect(compactJSON(deep).count == 2_004, "no recursion, however deep")
    }

    @Test func malformedInputFailsNamingTheField() throws {
        let (registry, room) = try Self.everythingRoom()
        let good = String(decoding: registry.snapshot(of: room).encodeJSON(), as: UTF8.self)
        func failure(_ text: String) -> String? {
            do {
                _ = try RoomSnapshot(json: Array(text.utf8))
                return nil
            } catch {
                return error.description
            }
        }
        func replacing(_ old: String, _ new: String) -> String {
            #expect(good.contains(old), "\(old)")
            return good.replacing(old, with: new, maxReplacements: 1)
        }
        #expect(failure(good) == nil)
        #expect(failure("")?.hasPrefix("invalid JSON: line 1, column 1") == true)
        #expect(failure(good + "}")?.hasPrefix("invalid JSON: ") == true)
        #expect(failure("[]") == "expected object, got array")
        #expect(failure(replacing(#""format":2"#, #""format":3"#)) == "format: this build reads formats 1 to 2, got 3")
        #expect(failure(replacing(#""format":2,"#, "")) == "format: missing")
        #expect(failure(replacing(#","chat":{"#, #","chat":{"x":1,"#)) == "chat.x: unknown key")
        #expect(
            failure(replacing(#""type":"notice"}"#, #""type":"notice","id":"x"}"#))
                == "chat.messages[1].id: duplicate key"
        )
        #expect(failure(replacing(#""locked":false"#, #""locked":false,"extra":1"#)) == "extra: unknown key")
        #expect(failure(replacing(#""locked":false"#, #""locked":false,"locked":true"#)) == "locked: duplicate key")
        #expect(
            failure(replacing(#""started_at":"#, #""started_at":1.5,"x":"#))
                == "started_at: expected an integer between \(Int64.min) and \(Int64.max), got 1.5"
        )
        #expect(
            failure(replacing(#""kind":"audio""#, #""kind":"midi""#))
                == #"peers[0].tracks[0].kind: expected one of audio, video, got "midi""#
        )
        #expect(
            failure(replacing(#""view_only":false"#, #""view_only":0"#))
                == "peers[0].view_only: expected boolean, got number"
        )
        #expect(
            failure(replacing(#""metadata_listening":"*""#, #""metadata_listening":"all""#))
                == #"peers[0].metadata_listening: expected "*" or an array of keys, got "all""#
        )
        #expect(failure(replacing(#""id":"peer-2""#, #""id":"peer-1""#)) == #"peers[1].id: duplicate peer id "peer-1""#)
        #expect(failure(replacing(#""sequence":2"#, #""sequence":9"#))?.hasPrefix("peers[1].sequence: ") == true)
        #expect(
            failure(replacing(#""updated_at":1763700000000}"#, #""updated_at":null,"value":2}"#))
                == "session_store.entries[0].value: duplicate key"
        )
        #expect(
            failure(replacing(#""stopped_by":null,"variants""#, #""stopped_by":"h","variants""#))
                == "live_stream.stopped_by: expected object, got string"
        )
        #expect(
            failure(replacing(#""answered":1"#, #""answered":-1"#))?.hasPrefix(
                "polls[0].voters[0].answered: expected an integer between 0 and 4294967295"
            ) == true
        )
        #expect(
            failure(replacing(#""records":[0]"#, #""records":[5]"#))
                == "polls[0].voters[0].records[0]: no record 5 (the poll has 1)"
        )
        #expect(
            failure(replacing(#""option_counts":[1,0,1]"#, #""option_counts":[1,0]"#))
                == "polls[0].tallies[0].option_counts: expected one count per option (3), got 2"
        )
        #expect(
            failure(replacing(#""question":1,"#, #""question":0,"#))
                == "polls[0].records[0].question: the poll has no question 0"
        )
        #expect(failure(replacing(#""live_stream":{"#, #""live_stream":{"x":0,"#)) == "live_stream.x: unknown key")
        #expect(
            failure(replacing(#""target":"stream","#, #""target":"stream","x":1,"#)) == "reactions[0].x: unknown key"
        )
        #expect(
            failure(replacing(#""totals":{"fire":3}"#, #""totals":{"fire":"3"}"#))
                == "reactions[0].totals.fire: expected integer, got string"
        )
        #expect(
            failure(replacing(#""reactions":["#, #""reactions":[1,"#)) == "reactions[0]: expected object, got number"
        )

        var nested = #""x""#
        for _ in 0..<RoomSnapshot.maxDepth { nested = "[\(nested)]" }
        #expect(
            failure(replacing(#""value":"snapshots ✓""#, #""value":\#(nested)"#))?.contains("nested deeper than")
                == true
        )
    }

    @Test func restoredPeersLeaveWhenTheirGraceEndsUnlessReattached() throws {
        let (registry, _, room) = try Self.busyRoom()
        let (other, clock) = Fixtures.registry()
        let restored = try #require(other.restore(registry.snapshot(of: room), graceMillis: 5000))
        let (host, viewer) = (restored.peersInJoinOrder[0], restored.peersInJoinOrder[1])
        #expect(host.graceDeadline != nil && viewer.graceDeadline != nil, "every peer waits for its client")
        other.reattach(viewer)
        clock.advance(byMillis: 4999)
        #expect(other.expireDueDeliveries().isEmpty)
        clock.advance(byMillis: 1)
        let leaves = other.expireDueDeliveries()
        #expect(leaves.map(\.push.name) == ["on-peer-leave"])
        #expect(leaves.first?.to == [viewer.id])
        #expect(restored.peer(host.id) == nil && restored.peer(viewer.id) === viewer)
    }

    @Test func aShorterGraceStartedAfterARestoreEndsOnTime() throws {
        let (registry, _, room) = try Self.busyRoom()
        var settings = Settings()
        settings.room.reconnectGraceS = 1
        let (other, clock) = Fixtures.registry(settings: settings)
        let restored = try #require(other.restore(registry.snapshot(of: room), graceMillis: 5000))
        let local = try other.join(Fixtures.request("x", role: "viewer", room: "r2")).peer
        let witness = try other.join(Fixtures.request("w", role: "viewer", room: "r2")).peer
        #expect(other.startGrace(local))
        clock.advance(byMillis: 1000)
        let leaves = other.expireDueDeliveries()
        #expect(leaves.first?.to == [witness.id], "the 1-s grace ends at 1 s, not behind the restored 5-s ones")
        #expect(restored.peerCount == 2, "the restored peers still wait")
    }

    @Test func aLockedRoomThatEndedRestoresItsLockAlone() throws {
        let (registry, _) = Fixtures.registry()
        let lockOnly = try RoomSnapshot(json: RoomSnapshot.lockedOnly("r9").encodeJSON())
        #expect(lockOnly == .lockedOnly("r9"))
        #expect(registry.restore(lockOnly, graceMillis: 5000) == nil)
        #expect(registry.lockedRoomIDs.contains("r9"))
        #expect(throws: RoomError.self) { try registry.join(Fixtures.request("a", role: "host", room: "r9")) }
    }
}
