import Foundation
import RoomClient
import RoomWire
import Testing

/// Feed requests roomd reads and answers itself on a kept connection
/// (RequestHeads.swift, FeedRequestHead.swift), over real sockets: the same
/// bytes libwebsockets answers; what roomd does not answer goes to lws with
/// the socket at a request boundary; an idle kept connection is closed; an
/// answer larger than the kernel takes at once reaches a slow reader whole
/// while the loop serves others. Single and over 3 nodes (HTTP goes to a
/// node that is usually not the room's home: a span it has cached is
/// answered there).
@Suite struct FeedDirectTests {
    static let start = FeedTests.start

    static func get(_ target: String, token: String?, _ extra: String = "") -> String {
        "GET \(target) HTTP/1.1\r\nHost: x\r\n" + (token.map { "Authorization: Bearer \($0)\r\n" } ?? "") + extra
            + "\r\n"
    }

    static func answered(_ daemon: Daemon) async throws -> Int {
        FeedTests.value("roomd_feed_answered_directly_total", in: try await daemon.metricsText())
    }

    /// A daemon whose room's host broadcast "hi", a viewer's token, and the
    /// feed span (one second) that holds the broadcast.
    static func spanWithABroadcast() async throws -> (Daemon, RoomClient, String, String) {
        let daemon = try await FeedTests.daemon()
        let (host, _) = try await daemon.join("h", as: "host")
        let token = try daemon.token(user: "v", role: "viewer")
        try await TestModeTests.advanceAll(daemon, by: 1000)
        _ = try await host.call("broadcast", ["info": ["message": "hi"]])
        try await TestModeTests.advanceAll(daemon, by: 1000)
        return (daemon, host, token, "/v2/rooms/room-1/feed?from=\(Self.start + 1)&to=\(Self.start + 2)")
    }

    @Test func aKeptConnectionGetsLibwebsocketsBytesAndHandsOverWhatRoomdDoesNotAnswer() async throws {
        let (daemon, host, token, target) = try await Self.spanWithABroadcast()
        defer { _ = host }  // the room lives on
        // `Connection: close` goes to libwebsockets (and caches the span on the node asked).
        let (lws, closed) = try await rawExchange(
            port: daemon.port,
            Array(Self.get(target, token: token, "Connection: close\r\n").utf8),
            timeout: 10
        )
        #expect(closed && lws.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(lws.prefix(200))")
        let before = try await Self.answered(daemon)

        let kept = try RawHTTPConnection(port: daemon.port)
        kept.send(Self.get(target, token: token))
        let first = try #require(await kept.exactAnswer(timeout: 10))
        #expect(first.head + "\r\n\r\n" + String(decoding: first.body, as: UTF8.self) == lws, "byte for byte")
        let etag = try #require(
            first.head.split(separator: "\r\n").first { $0.hasPrefix("etag: ") }.map { String($0.dropFirst(6)) }
        )
        // Three requests in one write: a 200, a 304, a 401 (no token), answered in order.
        kept.send(
            Self.get(target, token: token) + Self.get(target, token: token, "If-None-Match: \(etag)\r\n")
                + Self.get(target, token: nil)
        )
        let again = try #require(await kept.exactAnswer(timeout: 10))
        #expect(again.head == first.head && again.body == first.body)
        let notModified = try #require(await kept.exactAnswer(timeout: 10))
        #expect(notModified.head.hasPrefix("HTTP/1.1 304 Not Modified\r\n") && notModified.body.isEmpty)
        #expect(notModified.head.contains("etag: \(etag)"))
        let refused = try #require(await kept.exactAnswer(timeout: 10))
        #expect(refused.head.hasPrefix("HTTP/1.1 401 Unauthorized\r\n"), "\(refused.head)")
        #expect(try JSON.parse(refused.body)["code"] == 40100)
        #expect(try await Self.answered(daemon) == before + 4, "roomd answered these four itself")

        // Another route: the socket goes to libwebsockets, which serves it and what follows.
        kept.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + Self.get(target, token: token))
        let health = try #require(await kept.exactAnswer(timeout: 10))
        #expect(health.head.hasPrefix("HTTP/1.1 200 OK\r\n") || health.head.hasPrefix("HTTP/1.1 503"))
        let byLWS = try #require(await kept.exactAnswer(timeout: 10))
        #expect(byLWS.head == first.head && byLWS.body == first.body, "the same answer from lws")
        #expect(try await Self.answered(daemon) == before + 4)

        // Heads lws would read differently go to lws too: a tab before a value, `%` in the target, HTTP/1.0.
        for (request, status) in [
            (Self.get(target, token: nil, "Authorization:\tBearer \(token)\r\n"), "HTTP/1.1 401"),
            (Self.get(target.replacingOccurrences(of: "feed?", with: "fe%65d?"), token: token), "HTTP/1.1 200"),
            ("GET \(target) HTTP/1.0\r\nHost: x\r\nAuthorization: Bearer \(token)\r\n\r\n", "HTTP/1.0 200"),
        ] {
            let (answer, _) = try await rawExchange(port: daemon.port, Array(request.utf8), timeout: 2)
            #expect(answer.hasPrefix(status), "\(answer.prefix(80))")
        }
        #expect(try await Self.answered(daemon) == before + 4)
    }

    @Test func aKeptConnectionIdleForFiveSecondsIsClosed() async throws {
        let daemon = try await FeedTests.daemon()
        let token = try daemon.token(user: "v", role: "viewer")
        try await TestModeTests.advanceAll(daemon, by: 2000)
        let kept = try RawHTTPConnection(port: daemon.port)
        // Before the request: its answer (the idle time's start) comes later, and
        // however late this task reads it, the time measured is never shorter.
        let idleSince = Date()
        kept.send(Self.get("/v2/rooms/room-1/feed?from=\(Self.start)&to=\(Self.start + 1)", token: token))
        let answer = try #require(await kept.exactAnswer(timeout: 10))
        #expect(answer.head.hasPrefix("HTTP/1.1 "))
        #expect(await kept.closes(within: 9), "closed after 5 idle seconds (the 1-s sweep)")
        #expect(Date().timeIntervalSince(idleSince) >= 4.5, "not before its 5 s")
    }

    /// A daemon whose room holds 2,000 chat messages of 4 KB over two
    /// seconds, and the feed span of them: a body of ~8.6 MB, more than the
    /// kernel takes at once; `whole` is lws' answer (cached on the node asked).
    static func largeAnswer() async throws -> (daemon: Daemon, target: String, token: String, whole: String) {
        let daemon = try await FeedTests.daemon(
            settings: #"{"limits":{"messages_per_second":100000,"message_burst":100000}}"#
        )
        let host = try RawSocket(port: daemon.port, readTimeoutSeconds: 60)
        try host.sendText(TransportTests.join(try daemon.token(user: "host", role: "host")))
        _ = try #require(await host.readFrame())
        let text = String(repeating: "c", count: 4000)
        for second in 0..<2 {
            try await TestModeTests.advanceAll(daemon, by: 1000)
            let ids = (1...1000).map { second * 1000 + $0 }
            try host.sendTexts(
                ids.map {
                    #"{"jsonrpc":"2.0","id":\#($0),"method":"broadcast","params":{"info":{"message":"\#($0) \#(text)"}}}"#
                }
            )
            while let frame = await host.readFrame() {
                if frame.opcode == 1, try JSON.parse(frame.payload)["id"] == .int(ids.last!) { break }
            }
        }
        try await TestModeTests.advanceAll(daemon, by: 1000)
        let token = try daemon.token(user: "v", role: "viewer")
        let target = "/v2/rooms/room-1/feed?from=\(Self.start + 1)&to=\(Self.start + 3)"
        let whole = try feedRequest(daemon, target, token: token, close: true)
        #expect(whole.status == 200 && whole.body.utf8.count > 8_000_000, "\(whole.body.utf8.count) bytes")
        return (daemon, target, token, whole.body)
    }

    @Test func anAnswerLargerThanTheSocketTakesReachesASlowReaderWholeWhileOthersAreServed() async throws {
        let (daemon, target, token, whole) = try await Self.largeAnswer()
        let before = try await Self.answered(daemon)

        let slow = try RawHTTPConnection(port: daemon.port, receiveBuffer: 4096)
        slow.send(Self.get(target, token: token))
        try await Task.sleep(for: .milliseconds(500))  // roomd's send is cut short: the rest waits for POLLOUT
        // Meanwhile the loop serves others: a feed request on another kept connection, and /healthz.
        let other = try RawHTTPConnection(port: daemon.port)
        other.send(Self.get(target, token: nil))
        #expect(await other.exactAnswer(timeout: 5)?.head.hasPrefix("HTTP/1.1 401") == true)
        #expect(try await healthStatusLine(port: daemon.port) != nil)

        let answer = try #require(await slow.exactAnswer(timeout: 60), "the whole answer")
        #expect(answer.head.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(String(decoding: answer.body, as: UTF8.self) == whole, "every byte, in order")
        // The connection goes on: its next request is answered too.
        slow.send(Self.get(target, token: nil))
        #expect(await slow.exactAnswer(timeout: 10)?.head.hasPrefix("HTTP/1.1 401") == true)
        #expect(try await Self.answered(daemon) == before + 3)
    }

    /// A reader that stops taking its answer halfway is closed once nothing
    /// of it was sent for 10 s (`RequestHeads.timeoutMillis`, the 1-s sweep):
    /// the rest of an answer never holds a socket, or its copy, for ever.
    @Test func aReaderThatStopsTakingItsAnswerIsClosedAfterTenSecondsWithoutProgress() async throws {
        let (daemon, target, token, whole) = try await Self.largeAnswer()
        let stuck = try RawHTTPConnection(port: daemon.port, receiveBuffer: 4096)
        stuck.send(Self.get(target, token: token))
        try await Task.sleep(for: .seconds(12))  // nothing read: the kernel's buffers fill, then no progress
        #expect(await stuck.closes(within: 10), "closed by roomd")
        #expect(
            stuck.buffered > 0 && stuck.buffered < whole.utf8.count,
            "\(stuck.buffered) of \(whole.utf8.count) bytes"
        )
    }

    /// A span no node has cached asked of every node on a kept connection:
    /// over 3 nodes, the nodes that are not the room's home forward it to
    /// the home and answer on the connection roomd keeps (RestForwarder's
    /// kept askers), caching it; the requests pipelined behind it wait and
    /// are answered in order, by roomd too.
    @Test func aSpanOnlyTheHomeBuildsIsAnsweredOnTheKeptConnectionInOrder() async throws {
        let (daemon, host, token, target) = try await Self.spanWithABroadcast()
        defer { _ = host }  // the room lives on
        let before = try await Self.answered(daemon)
        var bodies: [[UInt8]] = []
        let ports = Crowd.ports(daemon)
        for port in ports {
            let kept = try RawHTTPConnection(port: port)
            kept.send(Self.get(target, token: token) + Self.get(target, token: token) + Self.get(target, token: nil))
            let first = try #require(await kept.exactAnswer(timeout: 10), "port \(port)")
            #expect(first.head.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(first.head)")
            #expect(String(decoding: first.body, as: UTF8.self).contains("hi"), "the broadcast is in the span")
            let second = try #require(await kept.exactAnswer(timeout: 10))
            #expect(second.head == first.head && second.body == first.body, "the same answer, after the first")
            let refused = try #require(await kept.exactAnswer(timeout: 10))
            #expect(refused.head.hasPrefix("HTTP/1.1 401 Unauthorized\r\n"), "\(refused.head)")
            bodies.append(first.body)
        }
        #expect(Set(bodies).count == 1, "every node answers the same span")
        #expect(try await Self.answered(daemon) == before + 3 * ports.count, "all of them by roomd itself")
    }
}
