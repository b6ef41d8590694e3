import CWebSockets
import RoomWire

/// A complete HTTP response waiting for its connection to become writable.
struct HTTPResponse {
    var status: Int
    var body: [UInt8]

    static func json(_ status: Int, _ value: JSON) -> HTTPResponse {
        HTTPResponse(status: status, body: value.bytes)
    }

    static func error(_ status: Int, code: Int, _ message: String) -> HTTPResponse {
        json(status, ["code": .int(code), "message": .string(message)])
    }
}

extension RoomServer {
    /// Routes a plain HTTP request (anything but the /ws upgrade).
    func route(path: String) -> HTTPResponse {
        switch path {
        case "/healthz":
            let body: JSON = [
                "status": .string(draining ? "draining" : "ok"),
                "rooms": .int(registry.rooms.count),
                "peers": .int(registry.peerCount),
            ]
            return .json(draining ? 503 : 200, body)
        case "/ws":
            return .error(400, code: 400, "/ws expects a WebSocket upgrade")
        default:
            return .error(404, code: 404, "no route for \(path)")
        }
    }

    func serveHTTP(_ wsi: OpaquePointer, path: String) -> Int32 {
        let response = route(path: path)
        var headers = [UInt8](repeating: 0, count: Int(CWS_PRE) + 1024)
        let ok: Bool = headers.withUnsafeMutableBufferPointer { buffer in
            let start = buffer.baseAddress! + Int(CWS_PRE)
            var cursor: UnsafeMutablePointer<UInt8>? = start
            let end = buffer.baseAddress! + buffer.count - 1
            if lws_add_http_common_headers(wsi, UInt32(response.status), "application/json",
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
}
