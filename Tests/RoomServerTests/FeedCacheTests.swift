import Foundation
import RoomConfig
import RoomModel
import RoomProtocol
import RoomTokens
import Testing

@testable import RoomServer

/// The feed's body cache (HTTP/FeedCache.swift): bounded by entries and bytes, oldest out first.
@Suite struct FeedCacheTests {
    @Test func tenThousandSpansStayWithinTheBounds() {
        let cache = FeedCache(maxEntries: 100, maxBytes: 50_000)
        for i in 0..<10_000 {
            let key = FeedCache.Key(room: RoomID("r\(i % 7)"), from: Int64(i), to: Int64(i + 3))
            cache.insert(key, body: Array(repeating: UInt8(ascii: "x"), count: 300 + i % 700))
            #expect(cache.count <= 100)
            #expect(cache.bytes <= 50_000)
        }
        #expect(cache.entry(FeedCache.Key(room: "r0", from: 0, to: 3)) == nil, "the oldest went first")
        #expect(cache.entry(FeedCache.Key(room: RoomID("r\(9999 % 7)"), from: 9999, to: 10_002)) != nil)
        let huge = FeedCache.Key(room: "big", from: 1, to: 2)
        let served = cache.insert(huge, body: Array(repeating: 0, count: 60_000))
        #expect(served.body.count == 60_000, "served once")
        #expect(cache.entry(huge) == nil, "not kept: over the byte budget")
    }

    @Test func etagsAreStrongAndMatchedAsRFC9110Says() {
        let tag = FeedCache.etag(Array("{}".utf8))
        #expect(tag.count == 34 && tag.first == "\"" && tag.last == "\"")
        #expect(tag != FeedCache.etag(Array("{ }".utf8)))
        #expect(FeedCache.matches(tag, tag))
        #expect(FeedCache.matches("\"a\", \(tag)", tag))
        #expect(FeedCache.matches("W/\(tag)", tag), "If-None-Match compares weakly")
        #expect(FeedCache.matches("*", tag))
        #expect(!FeedCache.matches("\"a\"", tag))
        #expect(!FeedCache.matches(nil, tag))
    }

    /// The feed's verified app tokens (one JWT check per viewer, not per poll) are bounded.
    @Test func knownTokensStayBounded() throws {
        let secret = Array("0123456789abcdef0123456789abcdef-test".utf8)
        let template = try RoleTemplate.decode(Array(#"{"roles":{"viewer":{}}}"#.utf8)).template
        let clock = ManualClock(now: Int64(Date().timeIntervalSince1970 * 1000))
        let feed = RestFeed(
            thread: ServiceThread(),
            registry: RoomRegistry(template: template, clock: clock),
            verifier: TokenVerifier(secret: secret, accessKey: nil, maxNameBytes: 256),
            clock: clock,
            metrics: ServerMetrics()
        )
        let minter = TokenMinter(secret: secret)
        let now = clock.now / 1000
        for i in 0..<(RestFeed.maxKnownTokens + 100) {
            let request = HTTPRequest(
                method: .get,
                path: "/v2/rooms/r/feed",
                authorization: "Bearer " + (try minter.appToken(room: "r", user: "u\(i)", role: "viewer"))
            )
            request.query = ["from": "\(now - 3)", "to": "\(now)"]
            _ = feed.prepare(request)
            #expect(feed.knownTokens <= RestFeed.maxKnownTokens)
        }
        #expect(feed.knownTokens > 0)
    }

    /// Issue 34: a body is assembled from its seconds' pieces, each encoded
    /// once (`FeedPieces`), not encoded item by item for every span: spans
    /// sliding over the same seconds encode each second once, and every body
    /// is the same bytes as the span encoded whole (`RestFeed.encode`), merges
    /// across seconds included (a total changed twice, a question changed
    /// then removed, removed then changed).
    @Test func bodiesAreAssembledFromPiecesEncodedOnce() throws {
        let template = try RoleTemplate.decode(
            Array(try String(contentsOfFile: Daemon.shippedConfig, encoding: .utf8).utf8)
        )
        .template
        let clock = ManualClock(now: 1_763_700_000_000)
        let registry = RoomRegistry(template: template, clock: clock)
        let feed = RestFeed(
            thread: ServiceThread(),
            registry: registry,
            verifier: TokenVerifier(
                secret: Array("0123456789abcdef0123456789abcdef-test".utf8),
                accessKey: nil,
                maxNameBytes: 256
            ),
            clock: clock,
            metrics: ServerMetrics()
        )
        let host = try registry.join(
            JoinRequest(roomID: "r", userID: "h", roleName: "host", name: "h", viewOnly: false)
        ).peer
        let viewer = try registry.join(
            JoinRequest(roomID: "r", userID: "v", roleName: "viewer", name: "v", viewOnly: false)
        )
        .peer
        let start = clock.nowMillis() / 1000
        var asked: [String] = []
        for second in 0..<30 {
            clock.advance(byMillis: 1000)
            _ = try registry.send(
                from: .peer(host),
                in: host.room,
                message: "m\(second) \"quoted\" é",
                type: "chat",
                to: .everyone
            )
            _ = try registry.react(viewer, target: "stream", type: "fire", count: 1 + second % 3)
            if second % 5 == 0 { asked.append(try registry.addQuestion(by: viewer, text: "q\(second)?").id) }
            if second % 7 == 3, let id = asked.first {
                try registry.deleteQuestion(by: host, id)
                asked.removeFirst()
            }
            if second % 4 == 1, let id = asked.last { _ = try registry.voteQuestion(by: host, id, .up) }
            if second % 6 == 2, let id = asked.last {
                _ = try registry.updateQuestion(by: host, id, state: .hidden, pinned: nil)
            }
            if second % 6 == 4, let id = asked.last {
                _ = try registry.updateQuestion(by: host, id, state: .open, pinned: nil)
            }
        }
        clock.advance(byMillis: 1000)
        let end = start + 31
        for from in start..<(end - 1) {
            for to in [min(from + 5, end), min(from + 30, end)] where to > from {
                guard case .seconds(let stored) = registry.feedSeconds("r", from: from, to: to),
                    case .span(let span) = registry.feed("r", from: from, to: to)
                else {
                    Issue.record("no span \(from)..<\(to)")
                    return
                }
                let assembled = feed.assemble(stored)
                #expect(assembled == RestFeed.encode(span), "\(from)..<\(to)")
            }
        }
        #expect(feed.pieces.encoded <= 31, "each stored second encoded once: \(feed.pieces.encoded)")
        #expect(feed.pieces.count > 0)
    }
}
