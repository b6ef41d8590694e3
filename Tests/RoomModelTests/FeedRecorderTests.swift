import RoomConfig
import Testing

@testable import RoomModel

/// The audience feed's record (PROTOCOL.md section 24): what a span tells,
/// and the bounds of what is kept.
@Suite struct FeedRecorderTests {
    private func room(window: Int = 300) throws -> (RoomRegistry, ManualClock, Room, Peer) {
        var settings = Settings()
        settings.feed.windowSeconds = window
        settings.chat.historySize = 10
        let (registry, clock) = Fixtures.registry(settings: settings)
        clock.now = 1_763_700_000_000
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        return (registry, clock, host.room, host)
    }

    private func span(_ registry: RoomRegistry, _ from: Int64, _ to: Int64) -> FeedSpan? {
        if case .span(let span) = registry.feed("r1", from: from, to: to) { return span }
        return nil
    }

    @Test func aSpanHoldsItsSecondsEventsAndTheStateAtItsEnd() throws {
        let (registry, clock, room, host) = try room()
        let t0 = clock.now / 1000
        clock.advance(byMillis: 1500)
        let (first, _) = try registry.send(from: .peer(host), in: room, message: "a", type: "chat", to: .everyone)
        _ = try registry.send(from: .peer(host), in: room, message: "direct", type: "chat", to: .peer(host.id.rawValue))
        clock.advance(byMillis: 1000)
        _ = try registry.deleteMessage(first.id, by: .peer(host), in: room)
        _ = try registry.join(Fixtures.request("g", role: "guest"))
        clock.advance(byMillis: 1000)
        let one = try #require(span(registry, t0 + 1, t0 + 2))
        #expect(one.chat.map(\.id) == [first.id], "to everyone only")
        #expect(one.deleted == [])
        #expect(one.state.peerCount == 1)
        let two = try #require(span(registry, t0 + 2, t0 + 3))
        #expect(two.chat == [])
        #expect(two.deleted == [first.id], "a deletion is in the span it happened in")
        #expect(two.state.peerCount == 2)
        let both = try #require(span(registry, t0, t0 + 3))
        #expect(both.chat.map(\.id) == [first.id], "kept, though deleted later")
        #expect(both.deleted == [first.id])
        let quiet = try #require(span(registry, t0 + 3, t0 + 4))
        #expect(quiet.state.peerCount == 2, "the state of the last second with a change")
    }

    /// Memory: seconds beyond the window go, and each second's lists and the whole record are capped.
    @Test func theRecordStaysWithinItsBounds() throws {
        let (registry, clock, room, host) = try room(window: 10)
        let recorder = try #require(room.feed)
        for _ in 0..<200 {  // 200 s, 50 messages each
            for _ in 0..<50 {
                _ = try registry.send(from: .server, in: room, message: "m", type: "chat", to: .everyone)
            }
            clock.advance(byMillis: 1000)
        }
        _ = host
        #expect(recorder.storedSeconds <= 12, "\(recorder.storedSeconds) seconds kept")
        #expect(recorder.heldItems <= 12 * 50)
        for _ in 0..<(FeedRecorder.maxItemsPerSecond + 500) {
            _ = try registry.send(from: .server, in: room, message: "m", type: "chat", to: .everyone)
        }
        #expect(recorder.dropped == 500, "a second keeps at most \(FeedRecorder.maxItemsPerSecond) messages")
        // The whole record: a wide window filled to its item budget drops its oldest seconds (410 for them).
        let (wide, wideClock, wideRoom, _) = try self.room(window: 3600)
        let start = wideClock.now / 1000
        for _ in 0..<120 {
            for _ in 0..<FeedRecorder.maxItemsPerSecond {
                _ = try wide.send(from: .server, in: wideRoom, message: "m", type: "chat", to: .everyone)
            }
            wideClock.advance(byMillis: 1000)
        }
        let wideRecorder = try #require(wideRoom.feed)
        #expect(wideRecorder.heldItems <= FeedRecorder.maxItems + FeedRecorder.maxItemsPerSecond)
        #expect(wide.feed("r1", from: start, to: start + 1) == .gone)
        #expect(wideRecorder.heldFrom > start)
    }

    /// Ended sessions' records go `window_s` after their end; a room id keeps a few sessions.
    @Test func endedRecordsGoAfterTheWindow() throws {
        let (registry, clock, _, host) = try room(window: 10)
        let end = clock.now / 1000
        _ = registry.leave(host, reason: .clientRequest)
        #expect(registry.feedRecorderCount == 1)
        clock.advance(byMillis: 1000)
        #expect(span(registry, end, end + 1)?.ended == true)
        clock.advance(byMillis: 9000)
        registry.sweepFeeds()
        #expect(registry.feedRecorderCount == 0)
        #expect(registry.feed("r1", from: end, to: end + 1) == .noSession)
        for i in 0..<10 {  // sessions in a row: at most four kept per room
            let peer = try registry.join(Fixtures.request("u\(i)", role: "host")).peer
            clock.advance(byMillis: 100)
            _ = registry.leave(peer, reason: .clientRequest)
        }
        #expect(registry.feedRecorderCount <= FeedRecorders.maxSessionsPerRoom)
    }

    /// Issue 34: a span reads only its own seconds (binary search to `to`,
    /// not a walk to the record's end) and merges them in O(its items). The
    /// merge is the one it replaced, checked against that algorithm (kept
    /// here as the reference) over every span of a show with totals changed
    /// again and again, questions voted, hidden, reopened and deleted.
    @Test func spansMergeTheirSecondsAsBefore() throws {
        let roles = [
            Role(name: "host", priority: 1, permissions: Permissions(moderateChat: true)),
            Role(name: "viewer", priority: 2),
        ]
        let clock = ManualClock()
        clock.now = 1_763_700_000_000
        let registry = RoomRegistry(
            template: RoleTemplate(name: "feed", roles: roles, settings: Settings()),
            clock: clock,
            ids: SequentialIDGenerator()
        )
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let mod = host
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        let start = clock.now / 1000
        var asked: [String] = []
        for second in 0..<40 {
            clock.advance(byMillis: 1000)
            _ = try registry.send(from: .peer(host), in: host.room, message: "m\(second)", type: "chat", to: .everyone)
            _ = try registry.react(viewer, target: "stream", type: "fire", count: 1 + second % 3)
            if second % 5 == 0 { asked.append(try registry.addQuestion(by: viewer, text: "q\(second)?").id) }
            if second % 7 == 3, let id = asked.first {
                try registry.deleteQuestion(by: mod, id)
                asked.removeFirst()
            }
            if second % 4 == 1, let id = asked.last { _ = try registry.voteQuestion(by: host, id, .up) }
            if second % 6 == 2, let id = asked.last {
                _ = try registry.updateQuestion(by: mod, id, state: .hidden, pinned: nil)
            }
            if second % 6 == 4, let id = asked.last {
                _ = try registry.updateQuestion(by: mod, id, state: .open, pinned: nil)
            }
        }
        clock.advance(byMillis: 1000)
        for from in start..<(start + 40) {
            for to in (from + 1)...min(from + 41, start + 41) {
                guard case .seconds(let stored) = registry.feedSeconds("r1", from: from, to: to),
                    let span = span(registry, from, to)
                else {
                    Issue.record("no span \(from)..<\(to)")
                    return
                }
                #expect(stored.seconds.allSatisfy { $0.second >= from && $0.second < to })
                let reference = Self.reference(stored)
                #expect(span.reactions == reference.reactions, "\(from)..<\(to)")
                #expect(span.questionsChanged == reference.questionsChanged, "\(from)..<\(to)")
                #expect(span.questionsRemoved == reference.questionsRemoved, "\(from)..<\(to)")
                #expect(span.chat == reference.chat)
            }
        }
    }

    /// The merge as `FeedRecorder.span` did it before issue 34.
    static func reference(_ stored: FeedSeconds) -> FeedSpan {
        var span = FeedSpan(roomID: stored.roomID, from: stored.from, to: stored.to, state: stored.state)
        var reactionIndex: [String: Int] = [:]
        var questionIndex: [String: Int] = [:]
        var removed: Set<String> = []
        for second in stored.seconds {
            span.chat += second.chat
            for count in second.reactions {
                let key = count.target + "\u{0}" + count.type
                if let i = reactionIndex[key] {
                    span.reactions[i] = count
                } else {
                    reactionIndex[key] = span.reactions.count
                    span.reactions.append(count)
                }
            }
            for question in second.questions {
                removed.remove(question.id)
                if let i = questionIndex[question.id] {
                    span.questionsChanged[i] = question
                } else {
                    questionIndex[question.id] = span.questionsChanged.count
                    span.questionsChanged.append(question)
                }
            }
            for id in second.removedQuestions {
                removed.insert(id)
                if !span.questionsRemoved.contains(id) { span.questionsRemoved.append(id) }
            }
            span.questionsRemoved.removeAll { !removed.contains($0) }
        }
        span.questionsChanged.removeAll { removed.contains($0.id) }
        return span
    }
}
