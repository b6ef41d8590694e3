import Testing

@testable import RoomServer

/// Which heads roomd reads itself (FeedRequestHead.swift): a plain HTTP/1.1
/// feed GET, with what lws would read of it; everything lws would read
/// differently is nil (lws serves it). FeedDirectTests checks the answers
/// over real sockets.
@Suite struct FeedRequestHeadTests {
    static let target = "/v2/rooms/show/feed?from=100&to=102"

    static func parse(_ head: String) -> HTTPRequest? {
        Array(head.utf8).withUnsafeBytes { FeedRequestHead.parse($0, socket: 7) }
    }

    @Test func aFeedGetIsReadWithItsTokenValidatorAndArguments() throws {
        let request = try #require(
            Self.parse(
                "GET \(Self.target)&token=a.b-c_d&from=999 HTTP/1.1\r\nhOsT: x\r\nAuthorization:   Bearer t.k\r\n"
                    + "If-None-Match: \"abc\"\r\nConnection: keep-alive\r\nUser-Agent: wrk\r\n\r\n"
            )
        )
        #expect(request.method == .get && request.path == "/v2/rooms/show/feed")
        #expect(request.query == ["from": "100", "to": "102", "token": "a.b-c_d"], "the first of a repeated name")
        #expect(request.authorization == "Bearer t.k", "leading spaces skipped, as lws does")
        #expect(request.ifNoneMatch == "\"abc\"")
        #expect(request.socket == 7)
        let bare = try #require(Self.parse("GET \(Self.target) HTTP/1.1\r\nHost: x\r\nAuthorization:\r\n\r\n"))
        #expect(bare.authorization == nil, "an empty value is none, as lws has it")
    }

    @Test(arguments: [
        ("another route", "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("another method", "POST \(target) HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("HTTP/1.0", "GET \(target) HTTP/1.0\r\nHost: x\r\n\r\n"),
        ("no Host", "GET \(target) HTTP/1.1\r\nAccept: */*\r\n\r\n"),
        ("Connection: close", "GET \(target) HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n"),
        ("an upgrade", "GET \(target) HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n"),
        ("a body", "GET \(target) HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"),
        ("chunked", "GET \(target) HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"),
        ("two tokens", "GET \(target) HTTP/1.1\r\nHost: x\r\nAuthorization: a\r\nauthorization: b\r\n\r\n"),
        ("two validators", "GET \(target) HTTP/1.1\r\nHost: x\r\nIf-None-Match: a\r\nIf-None-Match: b\r\n\r\n"),
        ("a tab before a value", "GET \(target) HTTP/1.1\r\nHost: x\r\nAuthorization:\tBearer t\r\n\r\n"),
        ("a space after a value", "GET \(target) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t \r\n\r\n"),
        ("a folded line", "GET \(target) HTTP/1.1\r\nHost: x\r\n more\r\n\r\n"),
        ("a space before a colon", "GET \(target) HTTP/1.1\r\nHost : x\r\n\r\n"),
        ("bare LF", "GET \(target) HTTP/1.1\nHost: x\n\n"),
        ("percent", "GET /v2/rooms/sh%6Fw/feed?from=1&to=2 HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("plus", "GET \(target)&token=a+b HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("a double slash", "GET /v2/rooms//show/feed?from=1&to=2 HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("a dot segment", "GET /v2/rooms/./feed?from=1&to=2 HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("an empty argument", "GET \(target)&&x=1 HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("17 arguments", "GET \(target)" + String(repeating: "&a=1", count: 15) + " HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("a fragment", "GET \(target)#x HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("two spaces", "GET  \(target) HTTP/1.1\r\nHost: x\r\n\r\n"),
    ])
    func headsLibwebsocketsWouldReadDifferentlyGoToIt(_ why: String, _ head: String) {
        #expect(Self.parse(head) == nil, "\(why)")
    }

    @Test func sixteenArgumentsAreRead() throws {
        let head = "GET \(Self.target)" + String(repeating: "&a=1", count: 14) + " HTTP/1.1\r\nHost: x\r\n\r\n"
        #expect(Self.parse(head)?.query.count == 3)
    }

    @Test func statusLinesHaveLibwebsocketsReasonPhrases() {
        for (status, line) in [
            (200, "HTTP/1.1 200 OK"), (304, "HTTP/1.1 304 Not Modified"), (308, "HTTP/1.1 308 Redirect"),
            (401, "HTTP/1.1 401 Unauthorized"), (410, "HTTP/1.1 410 Gone"),
            (413, "HTTP/1.1 413 Request Entity Too Large"), (429, "HTTP/1.1 429 "),
            (503, "HTTP/1.1 503 Service Unavailable"),
        ] {
            #expect(String(decoding: HTTPResponse.statusLine(status), as: UTF8.self) == line)
        }
        var answer = HTTPResponse(status: 304, body: [])
        answer.headers = [HTTPHeader(name: "etag", value: "\"e\"")]
        #expect(
            String(decoding: answer.keptAliveBytes, as: UTF8.self)
                == "HTTP/1.1 304 Not Modified\r\ncontent-type: application/json\r\ncontent-length: 0\r\netag: \"e\"\r\n\r\n"
        )
    }
}
