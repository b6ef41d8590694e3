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
