import CWebSockets
import RoomWire

/// A complete HTTP response waiting for its connection to become writable.
struct HTTPResponse {
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
        let declared = header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH).flatMap { Int($0) } ?? 0
        if declared > maxHTTPBody {
            return respond(wsi, .error(413, code: 41300, "body over \(maxHTTPBody) bytes"))
        }
        if method == .post, declared > 0 {
            httpRequests[wsi] = request  // the body follows
            return 0
        }
        return respond(wsi, route(request))
    }

    /// LWS_CALLBACK_HTTP_BODY.
    func httpBodyReceived(_ wsi: OpaquePointer, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let request = httpRequests[wsi] else { return 0 }
        if request.body.count + bytes.count > maxHTTPBody {
            httpRequests.removeValue(forKey: wsi)
            return respond(wsi, .error(413, code: 41300, "body over \(maxHTTPBody) bytes"))
        }
        request.body.append(contentsOf: bytes)
        return 0
    }

    /// LWS_CALLBACK_HTTP_BODY_COMPLETION.
    func httpBodyComplete(_ wsi: OpaquePointer) -> Int32 {
        guard let request = httpRequests.removeValue(forKey: wsi) else { return 0 }
        return respond(wsi, route(request))
    }

    func route(_ request: HTTPRequest) -> HTTPResponse {
        switch (request.method, request.path) {
        case (.get, "/healthz"):
            let body: JSON = [
                "status": .string(draining ? "draining" : "ok"),
                "rooms": .int(registry.rooms.count),
                "peers": .int(registry.peerCount),
            ]
            return .json(draining ? 503 : 200, body)
        case (.get, "/metrics"):
            return HTTPResponse(status: 200, body: metrics.exposition(server: self),
                                contentType: "text/plain; version=0.0.4; charset=utf-8")
        case (_, "/ws"):
            return .error(400, code: 400, "/ws expects a WebSocket upgrade")
        default:
            if request.path.hasPrefix(RestAPI.prefix) { return rest.handle(request) }
            return .error(404, code: 404, "no route for \(request.path)")
        }
    }

    private func respond(_ wsi: OpaquePointer, _ response: HTTPResponse) -> Int32 {
        var headers = [UInt8](repeating: 0, count: Int(CWS_PRE) + 1024)
        let ok: Bool = headers.withUnsafeMutableBufferPointer { buffer in
            let start = buffer.baseAddress! + Int(CWS_PRE)
            var cursor: UnsafeMutablePointer<UInt8>? = start
            let end = buffer.baseAddress! + buffer.count - 1
            if lws_add_http_common_headers(wsi, UInt32(response.status), response.contentType,
                                           lws_filepos_t(response.body.count), &cursor, end) != 0 {
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
        let written = buffer.withUnsafeMutableBufferPointer { pointer in
            lws_write(wsi, pointer.baseAddress! + Int(CWS_PRE), response.body.count, LWS_WRITE_HTTP_FINAL)
        }
        if written < 0 { return -1 }
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }

    private func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0, length < 8192 else { return nil }
        var buffer = [CChar](repeating: 0, count: length + 1)
        guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token) >= 0 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
