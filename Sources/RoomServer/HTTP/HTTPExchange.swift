import CWebSockets
import RoomWire

/// A complete HTTP response waiting for its connection to become writable.
struct HTTPResponse: Equatable {
    var status: Int
    var body: [UInt8]
    var contentType = "application/json"

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
    enum Method: String { case get = "GET", post = "POST", other = "OTHER" }

    let method: Method
    let path: String
    let authorization: String?
    var body: [UInt8] = []
    /// The declared `Content-Length`.
    var expected = 0
    /// `?name=value` arguments (QueryArguments.swift).
    var query: [String: String] = [:]

    init(method: Method, path: String, authorization: String?) {
        self.method = method
        self.path = path
        self.authorization = authorization
    }
}

/// HTTP on the service thread: requests are read (bodies up to the message
/// limit), routed once complete, and answered with one JSON body.
extension RoomServer {
    var maxHTTPBody: Int { options.template.settings.limits.maxMessageBytes }

    /// LWS_CALLBACK_HTTP: the headers are in.
    func httpRequestStarted(_ wsi: OpaquePointer, path: String) -> Int32 {
        let method: HTTPRequest.Method =
            lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0 ? .post
            : lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0 ? .get : .other
        let request = HTTPRequest(method: method, path: path, authorization: header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION))
        request.query = queryArguments(wsi)
        if headerBytes(wsi) > Self.maxHeaderBytes {
            return respond(wsi, .error(431, code: 431, "request headers over \(Self.maxHeaderBytes) bytes"))
        }
        let declared: Int
        switch Self.bodyLength(contentLength: header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH),
                               transferEncoding: header(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING),
                               limit: maxHTTPBody) {
        case .length(let length): declared = length
        case .refused(let response): return respond(wsi, response)
        }
        if method == .post, declared > 0 {
            request.expected = declared
            httpRequests[wsi] = request  // the body follows
            // A body that stalls is not waited for longer than a request's headers.
            lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(Self.bodyTimeoutSeconds))
            return 0
        }
        return answer(wsi, request)
    }

    static let bodyTimeoutSeconds = 10
    private static let close = Array("close".utf8)

    /// A complete HTTP/1.1 response written straight to a socket, for
    /// requests libwebsockets refuses before any HTTP callback (a request
    /// line it cannot parse, headers over the limit). Closes the connection.
    static func rawResponse(_ status: Int, reason: String, code: Int, _ message: String) -> [UInt8] {
        var body = JSONWriter()
        body.object { w in
            w.field("code", code)
            w.field("message", message)
        }
        let head = "HTTP/1.1 \(status) \(reason)\r\ncontent-type: application/json\r\n"
            + "content-length: \(body.bytes.count)\r\nconnection: close\r\n\r\n"
        return Array(head.utf8) + body.bytes
    }

    enum BodyLength: Equatable {
        case length(Int)
        case refused(HTTPResponse)
    }

    /// The framing rules of PROTOCOL.md section 1 (1.1): a body is framed by
    /// one plain decimal `Content-Length`; chunked bodies get 411; a
    /// negative, non-numeric or repeated length gets 400 (libwebsockets
    /// joins repeated headers into one value, so a repeat shows as a
    /// non-numeric value); a length over the limit gets 413.
    static func bodyLength(contentLength: String?, transferEncoding: String?, limit: Int) -> BodyLength {
        if transferEncoding != nil {
            return .refused(.error(411, code: 411, "Transfer-Encoding is not supported: send the body with a Content-Length"))
        }
        guard let text = contentLength else { return .length(0) }
        let digits = text.utf8
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return .refused(.error(400, code: 400, "Content-Length: must be one non-negative decimal number, got \"\(text.prefix(64))\""))
        }
        guard digits.count <= 18, let length = Int(text), length <= limit else {
            return .refused(.error(413, code: 41300, "body over \(limit) bytes"))
        }
        return .length(length)
    }

    /// LWS_CALLBACK_HTTP_BODY.
    func httpBodyReceived(_ wsi: OpaquePointer, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let request = httpRequests[wsi] else { return 0 }
        if request.body.count + bytes.count > maxHTTPBody {
            httpRequests.removeValue(forKey: wsi)
            return respond(wsi, .error(413, code: 41300, "body over \(maxHTTPBody) bytes"))
        }
        request.body.append(contentsOf: bytes)
        if request.body.count >= request.expected {
            httpRequests.removeValue(forKey: wsi)
            return answer(wsi, request)
        }
        return 0
    }

    /// LWS_CALLBACK_HTTP_BODY_COMPLETION.
    func httpBodyComplete(_ wsi: OpaquePointer) -> Int32 {
        guard let request = httpRequests.removeValue(forKey: wsi) else { return 0 }
        return answer(wsi, request)
    }

    /// Answers now, or later when the cluster forwards the request to the room's home.
    private func answer(_ wsi: OpaquePointer, _ request: HTTPRequest) -> Int32 {
        if let router, router.takesOver(request, wsi: wsi) { return 0 }
        return respond(wsi, route(request))
    }

    func route(_ request: HTTPRequest) -> HTTPResponse {
        switch (request.method, request.path) {
        case (.get, "/healthz"):
            // With a cluster: 503 also while the bus is unreachable (section 18).
            let busDown = clusterStatus.map { !$0.connected } ?? false
            var members: [JSON.Member] = [
                JSON.Member("status", .string(draining ? "draining" : busDown ? "cluster unavailable" : "ok")),
                JSON.Member("rooms", .int(registry.rooms.count)),
                JSON.Member("peers", .int(registry.peerCount)),
            ]
            if let cluster = clusterStatus {
                members.append(JSON.Member("cluster", [
                    "node_id": .string(cluster.nodeID), "nodes": .int(cluster.nodes), "connected": .bool(cluster.connected),
                ]))
            }
            return .json(draining || busDown ? 503 : 200, .object(members))
        case (.get, "/metrics"):
            return HTTPResponse(status: 200, body: metrics.exposition(server: self),
                                contentType: "text/plain; version=0.0.4; charset=utf-8")
        case (.get, "/client/roomd.js"):
            return ClientFiles.module
        case (.get, "/client/"):
            return ClientFiles.page
        case (_, "/ws"):
            return .error(400, code: 400, "/ws expects a WebSocket upgrade")
        default:
            if RestAPI.handles(request.path) {
                defer { router?.touch(RestAPI.roomID(in: request.path)) }
                return rest.handle(request)
            }
            return .error(404, code: 404, "no route for \(request.path)")
        }
    }

    func respond(_ wsi: OpaquePointer, _ response: HTTPResponse) -> Int32 {
        var headers = [UInt8](repeating: 0, count: Int(CWS_PRE) + 1024)
        let ok: Bool = headers.withUnsafeMutableBufferPointer { buffer in
            let start = buffer.baseAddress! + Int(CWS_PRE)
            var cursor: UnsafeMutablePointer<UInt8>? = start
            let end = buffer.baseAddress! + buffer.count - 1
            if lws_add_http_common_headers(wsi, UInt32(response.status), response.contentType,
                                           lws_filepos_t(response.body.count), &cursor, end) != 0 {
                return false
            }
            // Every connection closes after its answer: libwebsockets 4.1.6
            // spins forever on a pipelined POST whose body was read with the
            // previous request (see docs/RELIABILITY.md), so roomd never
            // keeps an HTTP connection alive, and says so.
            if lws_add_http_header_by_token(wsi, WSI_TOKEN_CONNECTION, Self.close, 5, &cursor, end) != 0 {
                return false
            }
            return lws_finalize_write_http_header(wsi, start, &cursor, end) == 0
        }
        guard ok else { return 1 }
        httpResponses[wsi] = response
        lws_callback_on_writable(wsi)
        return 0
    }

    func writeHTTPBody(_ wsi: OpaquePointer) -> Int32 {
        guard let response = httpResponses.removeValue(forKey: wsi) else { return 0 }
        var buffer = [UInt8](repeating: 0, count: Int(CWS_PRE)) + response.body
        _ = buffer.withUnsafeMutableBufferPointer { pointer in
            lws_write(wsi, pointer.baseAddress! + Int(CWS_PRE), response.body.count, LWS_WRITE_HTTP_FINAL)
        }
        // Close (written or not): libwebsockets flushes what the kernel did not take first.
        return -1
    }

    private func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0, length < 8192 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
