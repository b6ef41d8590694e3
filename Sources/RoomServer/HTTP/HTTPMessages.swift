import RoomWire

/// A header of a response beyond the common ones (the feed's `cache-control`, `etag`).
struct HTTPHeader: Equatable, Sendable {
    var name: String
    var value: String
}

/// A complete HTTP response waiting for its connection to become writable.
struct HTTPResponse: Equatable {
    var status: Int
    var body: [UInt8]
    var contentType = "application/json"
    var headers: [HTTPHeader] = []

    static func json(_ status: Int, _ value: JSON) -> HTTPResponse {
        HTTPResponse(status: status, body: value.bytes)
    }

    static func json(_ status: Int, encoded: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, body: encoded)
    }

    static func error(_ status: Int, code: Int, _ message: String) -> HTTPResponse {
        json(status, ["code": .int(code), "message": .string(message)])
    }
}

/// A plain HTTP request being received (anything but the /ws upgrade).
final class HTTPRequest {
    enum Method: String {
        case get = "GET"
        case post = "POST"
        /// Test mode's `DELETE /v2/test/faults` (PROTOCOL.md section 25).
        case delete = "DELETE"
        /// REST's `PATCH …/questions/{question_id}` (1.3, section 32).
        case patch = "PATCH"
        case other = "OTHER"
    }

    let method: Method
    let path: String
    let authorization: String?
    /// `If-None-Match` (the feed's 304s).
    var ifNoneMatch: String?
    var body: [UInt8] = []
    /// The declared `Content-Length`.
    var expected = 0
    /// `?name=value` arguments (QueryArguments.swift).
    var query: [String: String] = [:]
    /// The connection's socket, whose peer address the feed's build caps
    /// count a request without a token by (-1: none, forwarded by another node).
    var socket: Int32 = -1

    init(method: Method, path: String, authorization: String?) {
        self.method = method
        self.path = path
        self.authorization = authorization
    }
}

extension HTTPResponse {
    /// The bytes libwebsockets 4.1.6 writes for this answer to a kept
    /// HTTP/1.1 GET (`HTTPExchange.respond`: `lws_add_http_common_headers`,
    /// then `headers`): the same status line, reason phrase and header order,
    /// so that an answer roomd writes itself (RequestHeads.swift) cannot be
    /// told from lws' one.
    var keptAliveBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(160 + headers.count * 64 + body.count)
        bytes += Self.statusLine(status)
        bytes += Array("\r\ncontent-type: \(contentType)\r\ncontent-length: \(body.count)\r\n".utf8)
        for header in headers { bytes += Array("\(header.name): \(header.value)\r\n".utf8) }
        bytes += [13, 10]
        bytes += body
        return bytes
    }

    /// `HTTP/1.1 CODE REASON` with libwebsockets' reason phrases (lib/roles/http/header.c:
    /// 4xx to 417, 5xx to 505, 200, 304, other 3xx "Redirect"; otherwise none).
    static func statusLine(_ status: Int) -> [UInt8] {
        let reason: String =
            switch status {
            case 100: "Continue"
            case 200: "OK"
            case 304: "Not Modified"
            case 300..<400: "Redirect"
            case 400..<418: reasons4xx[status - 400]
            case 500..<506: reasons5xx[status - 500]
            default: ""
            }
        return Array("HTTP/1.1 \(status) \(reason)".utf8)
    }

    private static let reasons4xx = [
        "Bad Request", "Unauthorized", "Payment Required", "Forbidden", "Not Found", "Method Not Allowed",
        "Not Acceptable", "Proxy Auth Required", "Request Timeout", "Conflict", "Gone", "Length Required",
        "Precondition Failed", "Request Entity Too Large", "Request URI too Long", "Unsupported Media Type",
        "Requested Range Not Satisfiable", "Expectation Failed",
    ]
    private static let reasons5xx = [
        "Internal Server Error", "Not Implemented", "Bad Gateway", "Service Unavailable", "Gateway Timeout",
        "HTTP Version Not Supported",
    ]
}
