import RoomConfig
import RoomProtocol
import RoomWire
import Testing

@testable import RoomModel

/// Reactions and tap votes (PROTOCOL.md section 20), without sockets: the
/// counting rules, the coalesced push, what deleting and clearing drop, and
/// the bounds.
@Suite struct ReactionModelTests {
    static func registry(historySize: Int = 200) -> (RoomRegistry, ManualClock) {
        var settings = Settings()
        settings.chat.historySize = historySize
        var template = Fixtures.template(settings: settings)
        template.roles["host"]?.permissions.moderateChat = true
        let clock = ManualClock()
        return (RoomRegistry(template: template, clock: clock, ids: SequentialIDGenerator()), clock)
    }

    static func say(_ registry: RoomRegistry, _ peer: Peer, _ text: String = "hi") throws -> String {
        try registry.broadcast(from: peer, message: text, type: "chat", to: .everyone).message.id
    }

    static func failure(_ body: () throws -> Void) -> RoomError? {
        do {
            try body()
            return nil
        } catch {
            return error as? RoomError
        }
    }

    @Test func aUserReactsToAMessageOncePerTypeWhateverItsPeers() throws {
        let (registry, _) = Self.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let again = try registry.join(Fixtures.request("g", role: "viewer")).peer  // the same user, another peer
        let id = try Self.say(registry, host)
        #expect(try registry.react(guest, target: id, type: "like").total == 1)
        #expect(try registry.react(guest, target: id, type: "like").total == 1, "a repeat changes nothing")
        #expect(try registry.react(again, target: id, type: "like").total == 1, "counts are per user, not per peer")
        #expect(try registry.react(host, target: id, type: "like").total == 2)
        #expect(
            try registry.react(guest, target: id, type: "fire") == ReactionCount(target: id, type: "fire", total: 1)
        )
        #expect(host.room.reactions.userEntries == 3)

        let two = try #require(Self.failure { _ = try registry.react(guest, target: id, type: "love", count: 2) })
        #expect(two.code == .invalidParams && two.message.hasPrefix("count:"), "\(two)")
        let type = try #require(Self.failure { _ = try registry.react(guest, target: id, type: "boo") })
        #expect(type.code == .invalidParams && type.message.hasPrefix("type:") && type.message.contains("like, love"))
        let unknown = try #require(Self.failure { _ = try registry.react(guest, target: "nope", type: "like") })
        #expect(unknown.code == .messageNotFound && unknown.message.hasPrefix("target:"), "\(unknown)")
        for bad in ["contestant:", "contestant:a b", "contestant:" + String(repeating: "x", count: 65)] {
            let error = try #require(Self.failure { _ = try registry.react(guest, target: bad, type: "like") })
            #expect(error.code == .invalidParams && error.message.hasPrefix("target:"), "\(bad): \(error)")
        }
        #expect(code { _ = try registry.react(guest, target: "", type: "like") } == .messageNotFound)

        // unreact: the user's own reaction goes; none there is a no-op.
        #expect(try registry.unreact(again, target: id, type: "like").total == 1, "the user's, from any of its peers")
        #expect(try registry.unreact(guest, target: id, type: "like").total == 1, "already gone: no-op")
        #expect(try registry.unreact(guest, target: id, type: "wow").total == 0)
        let tap = try #require(Self.failure { _ = try registry.unreact(guest, target: "stream", type: "like") })
        #expect(tap.code == .invalidParams && tap.message.hasPrefix("target:"), "\(tap)")
        #expect(code { _ = try registry.unreact(guest, target: "contestant:red", type: "like") } == .invalidParams)
        #expect(code { _ = try registry.unreact(guest, target: "nope", type: "like") } == .messageNotFound)
        #expect(code { _ = try registry.unreact(guest, target: id, type: "boo") } == .invalidParams)
        #expect(host.room.reactions.userEntries == 2)
    }

    @Test func tapsAddUpPerUserAndNeverOverflow() throws {
        let (registry, _) = Self.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let viewer = try registry.join(Fixtures.request("v", role: "viewer", viewOnly: true)).peer
        #expect(try registry.react(viewer, target: "stream", type: "fire", count: 50).total == 50)
        #expect(try registry.react(viewer, target: "stream", type: "fire").total == 51, "a user may tap again")
        #expect(try registry.react(host, target: "stream", type: "fire", count: 9).total == 60)
        #expect(try registry.react(viewer, target: "contestant:red-1", type: "clap", count: 3).total == 3)
        for count in [0, 51, -1, Int.max, Int.min] {
            let error = try #require(
                Self.failure { _ = try registry.react(host, target: "stream", type: "fire", count: count) }
            )
            #expect(error.code == .invalidParams && error.message.hasPrefix("count:"), "\(count): \(error)")
        }
        let mine = try registry.reactions(for: viewer, targets: ["stream", "contestant:red-1", "contestant:blue"])
        #expect(
            mine == [
                ReactionCount(target: "stream", type: "fire", total: 60, mine: 51),
                ReactionCount(target: "contestant:red-1", type: "clap", total: 3, mine: 3),
            ]
        )
        // A total saturates instead of wrapping (no call gets near it: 50 taps a call).
        var reactions = Reactions()
        _ = try reactions.add(.max - 1, by: "a", on: .stream, type: "like")
        #expect(try reactions.add(.max, by: "b", on: .stream, type: "like") == .max)
        #expect(try reactions.add(.max, by: "a", on: .stream, type: "like") == .max)
    }

    @Test func everyPeerGetsOneCoalescedPushPerIntervalOnlyWhenSomethingChanged() throws {
        let (registry, _) = Self.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let viewer = try registry.join(Fixtures.request("v", role: "viewer", viewOnly: true)).peer
        let other = try registry.join(Fixtures.request("o", role: "viewer", room: "r2")).peer
        let id = try Self.say(registry, host)
        #expect(registry.tickReactions().isEmpty, "nothing changed: no push")

        for _ in 0..<200 { _ = try registry.react(viewer, target: "stream", type: "fire", count: 5) }
        _ = try registry.react(guest, target: id, type: "like")
        _ = try registry.react(host, target: id, type: "like")
        _ = try registry.react(guest, target: "contestant:red", type: "clap")
        _ = try registry.react(guest, target: id, type: "love")
        _ = try registry.unreact(guest, target: id, type: "love")  // changed and back: not pushed
        let pushes = registry.tickReactions()
        #expect(
            pushes.sent == [
                Sent(
                    push: "on-reactions:stream/fire=1000,\(id)/like=2,contestant:red/clap=1",
                    to: [host.id, guest.id, viewer.id]
                )
            ],
            "one push to every peer of the room, the reactors included; none to another room"
        )
        #expect(!pushes.sent.contains { $0.to.contains(other.id) })
        #expect(registry.tickReactions().isEmpty, "nothing since")

        _ = try registry.react(guest, target: id, type: "like")  // a repeat: no change
        #expect(registry.tickReactions().isEmpty)
        _ = try registry.unreact(host, target: id, type: "like")
        #expect(registry.tickReactions().sent.map(\.push) == ["on-reactions:\(id)/like=1"], "only what changed")
    }

    @Test func deletingClearingAndTheRingDropMessageReactionsWithoutAPush() throws {
        let (registry, _) = Self.registry(historySize: 3)
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let room = host.room
        let first = try Self.say(registry, host, "first")
        let second = try Self.say(registry, host, "second")
        _ = try registry.react(guest, target: first, type: "like")
        _ = try registry.react(guest, target: second, type: "like")
        _ = try registry.react(guest, target: "stream", type: "clap", count: 4)
        _ = registry.tickReactions()

        // Deleted: the totals go, unpushed (on-message-delete says it), also while pending.
        _ = try registry.react(host, target: second, type: "wow")
        let deleted = try registry.deleteMessage(second, by: .peer(host), in: room)
        #expect(deleted.sent.map(\.push) == ["on-message-delete:\(second)"])
        #expect(registry.tickReactions().isEmpty, "the deleted message's change is not pushed")
        #expect(room.reactions.total(second, "like") == 0 && room.reactions.userEntries == 2)
        #expect(code { _ = try registry.reactions(for: guest, targets: [second]) } == .messageNotFound)

        // Dropped from the ring (3 slots): its reactions go too.
        _ = try registry.react(host, target: first, type: "fire")
        for n in 0..<3 { _ = try Self.say(registry, host, "m\(n)") }
        #expect(room.chat.message(first) == nil)
        #expect(room.reactions.total(first, "like") == 0 && room.reactions.userEntries == 1, "bounded by the ring")
        #expect(registry.tickReactions().isEmpty)

        // chat-clear: every message's reactions go; taps stay.
        let kept = try Self.say(registry, host, "kept")
        _ = try registry.react(guest, target: kept, type: "like")
        _ = try registry.react(guest, target: "stream", type: "clap")
        let cleared = try registry.clearChat(by: .peer(host), in: room)
        #expect(cleared.deliveries.sent.map(\.push) == ["on-chat-clear"])
        #expect(registry.tickReactions().sent.map(\.push) == ["on-reactions:stream/clap=5"], "the taps' change only")
        #expect(registry.allReactions(in: room) == [ReactionCount(target: "stream", type: "clap", total: 5)])
        #expect(room.reactions.userEntries == 1)
    }

    /// Dropping a message while thousands of changes wait (a delete, the
    /// ring's eviction, a clear) takes out its own changes only: the others
    /// are pushed, in the order they happened, and nothing of the gone ones.
    @Test func droppingMessagesWithChangesPendingKeepsTheOthersInOrder() throws {
        let (registry, _) = Self.registry(historySize: 1000)
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let room = host.room
        let ids = try (0..<1000).map { n in try Self.say(registry, host, "m\(n)") }
        for id in ids {
            _ = try registry.react(host, target: id, type: "like")
            _ = try registry.react(host, target: id, type: "fire")
        }
        _ = try registry.react(host, target: "stream", type: "clap", count: 2)
        _ = try registry.deleteMessage(ids[500], by: .peer(host), in: room)
        _ = try Self.say(registry, host, "evicts the oldest")  // ids[0] leaves the ring
        _ = try registry.unreact(host, target: ids[1], type: "fire")  // back to 0: not pushed
        #expect(room.reactions.userEntries == 2 * 998 - 1 + 1)
        #expect(room.reactions.isPending(ids[2]) && !room.reactions.isPending(ids[0]))

        var pushed: [String] = []
        while case let sent = registry.tickReactions().sent, !sent.isEmpty {
            #expect(sent.count == 1)
            pushed += sent[0].push.dropFirst("on-reactions:".count).split(separator: ",").map(String.init)
        }
        let expected = ids.enumerated().flatMap { n, id -> [String] in
            if n == 0 || n == 500 { return [] }
            return n == 1 ? ["\(id)/like=1"] : ["\(id)/like=1", "\(id)/fire=1"]
        }
        #expect(pushed == expected + ["stream/clap=2"])

        // A clear with changes pending: the taps' change only is pushed.
        for id in ids[600..<700] { _ = try registry.unreact(host, target: id, type: "like") }
        _ = try registry.react(host, target: "stream", type: "clap")
        _ = try registry.clearChat(by: .peer(host), in: room)
        #expect(registry.tickReactions().sent.map(\.push) == ["on-reactions:stream/clap=3"])
        #expect(room.reactions.userEntries == 1 && !room.reactions.hasPending)
    }

    /// The messages' changes and the taps' are kept apart (a clear drops
    /// the messages' whole, in O(1)), yet pushed in the order they came;
    /// after a clear the ring and the counts start again from nothing.
    @Test func changesOfMessagesAndTapsArePushedInTheOrderTheyCameAcrossAClear() throws {
        let (registry, _) = Self.registry(historySize: 3)
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let room = host.room
        let a = try Self.say(registry, host, "a")
        _ = try registry.react(host, target: "stream", type: "clap")
        _ = try registry.react(host, target: a, type: "like")
        _ = try registry.react(host, target: "contestant:x", type: "fire", count: 2)
        _ = try registry.react(host, target: a, type: "wow")
        _ = try registry.react(host, target: "stream", type: "clap")  // pending already: keeps its place
        #expect(
            registry.tickReactions().sent.map(\.push) == [
                "on-reactions:stream/clap=2,\(a)/like=1,contestant:x/fire=2,\(a)/wow=1"
            ]
        )

        _ = try registry.react(host, target: a, type: "love")
        _ = try registry.react(host, target: "stream", type: "clap")
        let cleared = try registry.clearChat(by: .peer(host), in: room)
        #expect(cleared.deliveries.sent.map(\.push) == ["on-chat-clear"])
        #expect(room.chat.count == 0 && room.reactions.userEntries == 2 && room.reactions.isPending("stream"))
        let b = try Self.say(registry, host, "b")
        _ = try registry.react(host, target: b, type: "like")
        _ = try registry.react(host, target: "contestant:x", type: "fire")
        #expect(
            registry.tickReactions().sent.map(\.push) == ["on-reactions:stream/clap=3,\(b)/like=1,contestant:x/fire=3"]
        )
        #expect(try registry.chatHistory(in: room, before: nil, limit: 10).messages.map(\.id) == [b])
        for n in 0..<4 { _ = try Self.say(registry, host, "m\(n)") }  // the new slots fill and b leaves the ring
        #expect(room.chat.count == 3 && room.chat.message(b) == nil && room.reactions.total(b, "like") == 0)
    }

    /// One push holds at most the budget of encoded counts (at least one),
    /// and the room stays due with the rest, oldest first.
    @Test func aPushHoldsAtMostItsBudgetOfEncodedCounts() throws {
        var reactions = Reactions()
        let names = (0..<100).map { "contestant:c\($0)" }
        for name in names { _ = try reactions.add(1, by: UserID("u"), on: ReactionTarget(name)!, type: "like") }
        let size = Reactions.encodedSize(ReactionCount(target: names[0], type: "like", total: 1))
        #expect(size == #"{"target":"contestant:c0","type":"like","total":1},"#.utf8.count)
        let first = reactions.takeChanged(budget: 2 + 10 * size)
        #expect(first.map(\.target) == Array(names.prefix(10)))
        #expect(reactions.hasPending)
        #expect(reactions.takeChanged(budget: 1).map(\.target) == [names[10]], "at least one")
        #expect(reactions.takeChanged().map(\.target) == Array(names.dropFirst(11)))
        #expect(!reactions.hasPending && reactions.takeChanged().isEmpty)
    }

    /// REST's pages: whole targets within the budget, `last` to go on from,
    /// nil at the end; a `start` that left the history is 40405.
    @Test func theRestListPagesByTargetFromStart() throws {
        let (registry, _) = Self.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let room = host.room
        let ids = try (0..<5).map { n in try Self.say(registry, host, "m\(n)") }
        for id in ids { _ = try registry.react(host, target: id, type: "like") }
        _ = try registry.react(host, target: "stream", type: "clap")
        _ = try registry.react(host, target: "contestant:b", type: "clap")
        _ = try registry.react(host, target: "contestant:a", type: "clap")
        let all = registry.allReactions(in: room).map(\.target)
        #expect(all == ["stream", "contestant:a", "contestant:b"] + ids)
        var start: String? = nil
        var listed: [String] = []
        repeat {
            let page = try registry.reactionsPage(in: room, after: start, budget: 1)  // one target a page
            #expect(page.counts.count == 1)
            listed += page.counts.map(\.target)
            start = page.last
        } while start != nil
        #expect(listed == all)
        #expect(try registry.reactionsPage(in: room, after: ids[4], budget: .max).counts.isEmpty)
        _ = try registry.deleteMessage(ids[2], by: .peer(host), in: room)
        #expect(code { _ = try registry.reactionsPage(in: room, after: ids[2], budget: .max) } == .messageNotFound)
        #expect(try registry.reactionsPage(in: room, after: "contestant:a", budget: .max).counts.count == 1 + 4)
    }

    @Test func reactionsGetListsPairsAboveZeroWithTheCallersOwnCount() throws {
        let (registry, _) = Self.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let id = try Self.say(registry, host)
        _ = try registry.react(guest, target: id, type: "wow")
        _ = try registry.react(host, target: id, type: "like")
        _ = try registry.react(guest, target: id, type: "like")
        _ = try registry.react(guest, target: "contestant:b", type: "clap", count: 2)
        _ = try registry.react(guest, target: "contestant:a", type: "clap")
        _ = try registry.react(host, target: id, type: "laugh")
        _ = try registry.unreact(host, target: id, type: "laugh")
        let counts = try registry.reactions(for: host, targets: [id, "stream", id])
        #expect(
            counts == [
                ReactionCount(target: id, type: "like", total: 2, mine: 1),
                ReactionCount(target: id, type: "wow", total: 1, mine: 0),
            ],
            "settings' type order, totals above 0, a target asked twice listed once"
        )
        #expect(try registry.reactions(for: host, targets: []).isEmpty)
        let many = try #require(
            Self.failure { _ = try registry.reactions(for: host, targets: Array(repeating: "stream", count: 101)) }
        )
        #expect(many.code == .invalidParams && many.message.hasPrefix("targets:"), "\(many)")
        #expect(try registry.reactions(for: host, targets: Array(repeating: "stream", count: 100)).isEmpty)
        let unknown = try #require(Self.failure { _ = try registry.reactions(for: host, targets: ["stream", "x"]) })
        #expect(unknown.code == .messageNotFound && unknown.message.hasPrefix("targets[1]:"), "\(unknown)")
        let bad = try #require(Self.failure { _ = try registry.reactions(for: host, targets: ["contestant:?"]) })
        #expect(bad.code == .invalidParams && bad.message.hasPrefix("targets[0]:"), "\(bad)")
        // REST: every pair — the stream, the contestants by id, the messages oldest first.
        #expect(
            registry.allReactions(in: host.room).map { "\($0.target)/\($0.type)=\($0.total)" } == [
                "contestant:a/clap=1", "contestant:b/clap=2", "\(id)/like=2", "\(id)/wow=1",
            ]
        )
    }

    @Test func aSessionHasAtMost100ContestantsAnd100000UserCounts() throws {
        let (registry, _) = Self.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        for n in 0..<Reactions.maxContestants { _ = try registry.react(host, target: "contestant:c\(n)", type: "clap") }
        let more = try #require(
            Self.failure { _ = try registry.react(host, target: "contestant:one-more", type: "clap") }
        )
        #expect(more.code == .tooMany && more.message.hasPrefix("target:"), "\(more)")
        #expect(try registry.react(guest, target: "contestant:c7", type: "fire").total == 1, "a known one takes more")
        #expect(try registry.react(guest, target: "stream", type: "fire").total == 1, "the stream is no contestant")

        // Fill the room's user counts to the bound (the model's own entry point: no 100,000 peers).
        let room = host.room
        var n = 0
        while room.reactions.userEntries < Reactions.maxUserEntries {
            _ = try room.reactions.add(1, by: "u\(n)", on: .stream, type: "like")
            n += 1
        }
        let id = try Self.say(registry, host)
        let full = try #require(Self.failure { _ = try registry.react(guest, target: id, type: "like") })
        #expect(full.code == .tooMany && full.message.contains("100000"), "\(full)")
        #expect(code { _ = try registry.react(guest, target: "stream", type: "like") } == .tooMany)
        #expect(
            try registry.react(guest, target: "stream", type: "fire", count: 3).total == 4,
            "an existing count grows"
        )
    }

    @Test func aRestoredRoomKeepsTotalsCountsAndPushesWhatItsPeersHadNotHeard() throws {
        let (registry, _) = Self.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let id = try Self.say(registry, host)
        _ = try registry.react(guest, target: id, type: "like")
        _ = try registry.react(guest, target: "stream", type: "fire", count: 7)
        _ = try registry.react(host, target: "contestant:red", type: "clap", count: 2)
        _ = registry.tickReactions()
        _ = try registry.react(host, target: "stream", type: "fire")
        _ = try registry.react(host, target: id, type: "wow")
        _ = try registry.unreact(guest, target: id, type: "like")  // pending at 0

        let snapshot = registry.snapshot(of: host.room)
        #expect(snapshot.reactions.map(\.target) == ["stream", "contestant:red", id])
        #expect(
            snapshot.reactions[2].totals == ["like": 0, "wow": 1]
                && snapshot.reactions[2].heard == ["like": 1, "wow": 0]
        )
        let decoded = try RoomSnapshot(json: snapshot.encodeJSON())
        #expect(decoded == snapshot)
        let (other, _) = Self.registry()
        let restored = try #require(other.restore(decoded, graceMillis: 5000))
        #expect(other.snapshot(of: restored) == snapshot, "nothing lost or added")
        #expect(restored.reactions.count(of: "g", "stream", "fire") == 7)
        #expect(restored.reactions.userEntries == 4)
        #expect(
            other.tickReactions().sent.map(\.push) == ["on-reactions:stream/fire=8,\(id)/like=0,\(id)/wow=1"],
            "the new home pushes what was not pushed yet"
        )
        let late = try other.join(Fixtures.request("g", role: "viewer")).peer
        #expect(try other.react(late, target: "stream", type: "fire").total == 9)
        #expect(other.allReactions(in: restored).count == 3)
    }

    @Test func aSnapshotKeepsEveryTapTotalAndEveryUsersCount() throws {
        var settings = Settings()
        let types = (0..<32).map { String(repeating: "0", count: 31 - "\($0)".count) + "\($0)t" }  // 32 characters each
        settings.reactions.types = types
        let template = Fixtures.template(settings: settings)
        let registry = RoomRegistry(template: template, clock: ManualClock(), ids: SequentialIDGenerator())
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let room = host.room
        let long = String(repeating: "c", count: 60)
        // The worst case of the tap targets: 100 contestants of 64 characters, every type, huge totals.
        for n in 0..<Reactions.maxContestants {
            for type in types {
                _ = try room.reactions.add(.max / 2, by: "u", on: .contestant(long + "\(1000 + n)"), type: type)
            }
        }
        for type in types { _ = try room.reactions.add(.max / 2, by: "u", on: .stream, type: type) }
        while room.reactions.hasPending { _ = room.reactions.takeChanged() }  // pushed, a budget at a time
        // And many users' counts.
        for n in 0..<20_000 {
            _ = try room.reactions.add(
                1,
                by: UserID(String(repeating: "u", count: 40) + "\(n)"),
                on: .stream,
                type: types[0]
            )
        }
        let snapshot = registry.snapshot(of: room)
        let bytes = snapshot.encodeJSON()
        let decoded = try RoomSnapshot(json: bytes)
        #expect(decoded.reactions.count == 101, "every tap target")
        #expect(decoded.reactions.allSatisfy { $0.totals.count == 32 }, "every total")
        #expect(decoded.reactions[0].totals[types[0]] == .max / 2 + 20_000)
        let users = decoded.reactions.reduce(0) { $0 + $1.users.values.reduce(0) { $0 + $1.count } }
        #expect(users == 20_000 + 101 * 32, "every user's count: \(users)")
        let (other, _) = Fixtures.registry(settings: settings)
        let restored = try #require(other.restore(decoded, graceMillis: 1000))
        #expect(restored.reactions.total("stream", types[0]) == .max / 2 + 20_000, "a total above its users kept")
    }

    /// 1.3: a large chat and the worst reactions (taps of every bound, every
    /// message reacted to with every type) are saved whole.
    @Test func aLargeChatAndTheWorstReactionsAreSavedWhole() throws {
        var settings = Settings()
        settings.chat.historySize = 10000
        let types = (0..<32).map { String(repeating: "0", count: 31 - "\($0)".count) + "\($0)t" }
        settings.reactions.types = types
        let registry = RoomRegistry(
            template: Fixtures.template(settings: settings),
            clock: ManualClock(),
            ids: SequentialIDGenerator()
        )
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let room = host.room
        let text = String(repeating: "t", count: 200)
        var ids: [String] = []
        for n in 0..<3000 { ids.append(try Self.say(registry, host, "\(n)" + text)) }
        for id in ids { for type in types { _ = try registry.react(host, target: id, type: type) } }
        let long = String(repeating: "c", count: 60)
        for n in 0..<Reactions.maxContestants {
            for type in types {
                _ = try registry.react(host, target: "contestant:\(long)\(1000 + n)", type: type, count: 50)
            }
        }
        for type in types { _ = try registry.react(host, target: "stream", type: type, count: 50) }
        #expect(room.reactions.userEntries == 3000 * 32 + 101 * 32)

        let bytes = registry.snapshot(of: room).encodeJSON()
        let decoded = try RoomSnapshot(json: bytes)
        let kept = decoded.chatMessages.map(\.id)
        #expect(kept == ids)
        let taps = decoded.reactions.prefix(101)
        #expect(taps.first?.target == "stream" && taps.allSatisfy { $0.totals.count == 32 }, "every tap total")
        let messages = decoded.reactions.dropFirst(101).map(\.target)
        #expect(messages == kept.reversed(), "every message's totals, newest first")
        #expect(decoded.reactions.dropFirst(101).allSatisfy { $0.totals.count == 32 && $0.users.count == 32 })
    }

    @Test func theSnapshotKeepsTheReactionsOfEveryMessage() throws {
        let (registry, _) = Self.registry(historySize: 10000)
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let noisy = String(repeating: "\u{1}", count: 4000)  // 24 KB of JSON each
        var ids: [String] = []
        for n in 0..<40 { ids.append(try Self.say(registry, host, "\(n)" + noisy)) }
        for id in ids { _ = try registry.react(host, target: id, type: "like") }
        let decoded = try RoomSnapshot(json: registry.snapshot(of: host.room).encodeJSON())
        let kept = Set(decoded.chatMessages.map(\.id))
        #expect(kept == Set(ids))
        #expect(Set(decoded.reactions.map(\.target)) == kept)
    }

    @Test func snapshotsOfFormatTwoWithoutReactionsAndMalformedReactions() throws {
        let (registry, _) = Self.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        _ = try registry.react(host, target: "stream", type: "like", count: 2)
        let good = String(decoding: registry.snapshot(of: host.room).encodeJSON(), as: UTF8.self)
        let stream = #"{"target":"stream","totals":{"like":2},"heard":{"like":0},"users":{"like":{"h":2}}}"#
        #expect(good.contains(#","reactions":[\#(stream)],"moderation":"#), "\(good)")
        let before = try RoomSnapshot(json: Array(good.replacing(#","reactions":[\#(stream)]"#, with: "").utf8))
        #expect(before.reactions.isEmpty, "saved by a 1.2 build before reactions")
        func failure(_ replacement: String) -> String? {
            do {
                _ = try RoomSnapshot(json: Array(good.replacing(stream, with: replacement).utf8))
                return nil
            } catch {
                return error.description
            }
        }
        #expect(failure(stream) == nil)
        #expect(failure(stream + "," + stream) == #"reactions[1].target: duplicate target "stream""#)
        #expect(
            failure(stream.replacing(#""stream""#, with: #""contestant:a b""#))
                == #"reactions[0].target: a contestant's id must match [A-Za-z0-9_-]{1,64}, got "contestant:a b""#
        )
        #expect(
            failure(stream.replacing(#""like":2}"#, with: #""like":-1}"#))
                == "reactions[0].totals.like: expected at least 0, got -1"
        )
        #expect(
            failure(stream.replacing(#""h":2"#, with: #""h":0"#))
                == "reactions[0].users.like.h: expected at least 1, got 0"
        )
        #expect(
            failure(stream.replacing(#""h":2"#, with: #""h":2,"h":1"#)) == "reactions[0].users.like.h: duplicate key"
        )
        #expect(
            failure(stream.replacing(#""heard":{"like":0}"#, with: #""heard":{"wow":0}"#))
                == "reactions[0].heard.wow: no total of this type"
        )
        #expect(
            failure(stream.replacing(#""like":2},"heard":{"like":0}"#, with: #""like":0},"heard":{}"#))
                == "reactions[0].totals.like: a total of 0 is saved only for a pair still to be pushed"
        )
        #expect(
            failure(stream.replacing(#""users":{"like""#, with: #""users":{"wow""#))
                == "reactions[0].users.wow: no total of this type"
        )
        #expect(failure(stream.replacing(#""users":{"#, with: #""x":1,"users":{"#)) == "reactions[0].x: unknown key")
        #expect(
            failure(stream.replacing(#""users":{"like":{"h":2}}"#, with: #""users":[]"#))
                == "reactions[0].users: expected object, got array"
        )
    }
}
