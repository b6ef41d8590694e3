import CWebSockets
import RoomCollections
import RoomWire

/// Plain HTTP on the service thread (anything but the /ws upgrade):
/// requests are read — headers checked, bodies up to the message limit —
/// and, once complete, handed back to the caller to be routed; an answer is
/// written at once, head and body in one write. A `GET` without
/// a body keeps its connection for the next request (HTTP/1.1 keep-alive,
/// the feed's viewers and a CDN in front of it); any other request closes it
/// after the answer (`keepsAlive`). Its service thread's only (checked at
/// each entry point in debug builds).
final class HTTPExchange {
    /// A request head (request line, headers, the empty line) over this gets
    /// 431 (PROTOCOL.md section 1, 1.1). On the libev loop roomd measures the
    /// raw head before lws reads it (RequestHeads.swift); on lws' poll() loop
    /// only the headers lws knows can be counted (`headerBytes`).
    static let maxHeaderBytes = 8192
    /// lws' header table per request: the values of the headers it knows, and
    /// the names and values of the others with 8 bytes each of its own. Three
    /// times the limit, so that no head within the limit overflows it (a head
    /// of 4-byte unknown headers, `a:\r\n`, takes 10 bytes each); lws
    /// closes a request that overflows the table without an answer.
    static let headerTableBytes = 24576
    static let bodyTimeoutSeconds = 10
    /// A kept connection waiting longer than this for its next request is
    /// closed (by the 1-s sweep: within a second after).
    static let keepAliveIdleMillis: Int64 = 5000
    private static let close = Array("close".utf8)

    /// Largest body (`max_message_bytes`).
    let maxBody: Int
    /// Whether the 431 check counts the headers lws parsed: on lws' poll()
    /// loop only; on the libev loop the raw head was measured before lws saw it.
    var countsParsedHeaders = true
    private var requests: [OpaquePointer: HTTPRequest] = [:]
    /// Connections whose answer is written (or buffered by lws).
    private var answered: Set<OpaquePointer> = []
    /// The connection whose LWS_CALLBACK_HTTP runs: an answer written during
    /// it is finished when the callback returns (`inHTTPCallback`), without
    /// a round through the writable callback (a quick `make bench` (m) on one
    /// cached span, 32 kept-alive connections: 53,388 → 58,079 req/s).
    private var inCallback: OpaquePointer?
    /// Connections whose request being answered may keep them open.
    private var keepsAlive: Set<OpaquePointer> = []
    /// Connections that answered a request and stayed open: their next
    /// request was read by libwebsockets alone, not measured by
    /// RequestHeads first, so `started` checks what lws parsed.
    private var keptAlive: Set<OpaquePointer> = []
    /// Kept connections waiting for their next request, oldest first, and
    /// since when each waits (an entry whose time is not the connection's
    /// current one is stale). roomd times them out itself: an lws timeout
    /// is a sorted insert into one list of every timed connection, O(kept
    /// connections) per request — 10,000 kept viewers made it 250 µs.
    private var idle = FIFO<(wsi: OpaquePointer, since: Int64)>()
    private var idleSince: [OpaquePointer: Int64] = [:]
    /// Connections whose request's LWS_CALLBACK_HTTP_BODY_COMPLETION came
    /// before its answer (`bodyComplete`).
    private var bodyCompleted: Set<OpaquePointer> = []

    private let thread: ServiceThread

    init(maxBody: Int, thread: ServiceThread) {
        self.maxBody = maxBody
        self.thread = thread
    }

    /// What a callback made of a request.
    enum Progress {
        /// Its body is on the way (or it was answered already): return this to lws.
        case waiting(Int32)
        /// Complete: route it.
        case complete(HTTPRequest)
    }

    /// LWS_CALLBACK_HTTP: the headers are in. `cut`: lws' decoded path
    /// holds a NUL (it ends the C string early).
    func started(_ wsi: OpaquePointer, path: String, cut: Bool = false) -> Progress {
        thread.assertIsCurrent()
        let method: HTTPRequest.Method =
            lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0
            ? .post
            : lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0
                ? .get
                : lws_hdr_total_length(wsi, WSI_TOKEN_DELETE_URI) > 0
                    ? .delete : lws_hdr_total_length(wsi, WSI_TOKEN_PATCH_URI) > 0 ? .patch : .other
        let request = HTTPRequest(method: method, path: path, authorization: header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION))
        request.query = queryArguments(wsi)
        request.socket = lws_get_socket_fd(wsi)
        request.ifNoneMatch = header(wsi, WSI_TOKEN_HTTP_IF_NONE_MATCH)
        let later = keptAlive.contains(wsi)
        idleSince.removeValue(forKey: wsi)
        if countsParsedHeaders || later, headerBytes(wsi) > Self.maxHeaderBytes {
            return .waiting(respond(wsi, .error(431, code: 431, "request headers over \(Self.maxHeaderBytes) bytes")))
        }
        // On the libev loop the raw target of a connection's first request was checked before lws
        // (RequestHeads); this is the backstop of lws' poll() loop and of the requests after the first on a
        // kept connection, which sees only what lws decoded: a NUL at the very end of the path goes unseen.
        func control(_ text: String) -> Bool { text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) }
        if cut || control(path) {
            return .waiting(respond(wsi, .error(400, code: 400, "request target: a control byte in the path")))
        }
        if request.query.contains(where: { control($0.key) || control($0.value) }) {
            return .waiting(respond(wsi, .error(400, code: 400, "request target: a control byte in the query")))
        }
        let declared: Int
        switch Self.bodyLength(
            contentLength: header(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH),
            transferEncoding: header(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING),
            limit: maxBody
        ) {
        case .length(let length): declared = length
        case .refused(let response): return .waiting(respond(wsi, response))
        }
        if method == .get, declared == 0 { keepsAlive.insert(wsi) }
        if method == .post || method == .delete || method == .patch, declared > 0 {
            request.expected = declared
            requests[wsi] = request  // the body follows
            // A body that stalls is not waited for longer than a request's headers.
            lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(Self.bodyTimeoutSeconds))
            return .waiting(0)
        }
        return .complete(request)
    }

    /// LWS_CALLBACK_HTTP_BODY.
    func bodyReceived(_ wsi: OpaquePointer, _ bytes: UnsafeRawBufferPointer) -> Progress {
        thread.assertIsCurrent()
        guard let request = requests[wsi] else { return .waiting(0) }
        // A request with a body pipelined behind a kept-alive GET (sent before
        // the GET's answer): libwebsockets 4.1.6 hands over the request's own
        // head as its body ("POST /x…"), never a JSON body. Refused, not read.
        if keptAlive.contains(wsi), request.body.isEmpty {
            let line = Array((request.method.rawValue + " ").utf8)
            let count = min(bytes.count, line.count)
            if count > 0, bytes.prefix(count).elementsEqual(line.prefix(count)) {
                requests.removeValue(forKey: wsi)
                return .waiting(
                    respond(
                        wsi,
                        .error(
                            400,
                            code: 400,
                            "a request with a body pipelined behind another request is not read: "
                                + "send it once the previous answer is in, or on a new connection"
                        )
                    )
                )
            }
        }
        if request.body.count + bytes.count > maxBody {
            requests.removeValue(forKey: wsi)
            return .waiting(respond(wsi, .error(413, code: 41300, "body over \(maxBody) bytes")))
        }
        request.body.append(contentsOf: bytes)
        if request.body.count >= request.expected {
            requests.removeValue(forKey: wsi)
            return .complete(request)
        }
        return .waiting(0)
    }

    /// LWS_CALLBACK_HTTP_BODY_COMPLETION.
    ///
    /// A request whose body is in was routed at its last
    /// LWS_CALLBACK_HTTP_BODY already; when its answer is written, the
    /// connection closes here, without waiting to be writable: when the
    /// request was pipelined behind a kept-alive GET, libwebsockets 4.1.6
    /// calls this callback again and again and
    /// never calls the writable one (docs/RELIABILITY.md). An answer still
    /// on its way from another node is waited for, unless this callback
    /// comes again: then the connection closes without one.
    func bodyComplete(_ wsi: OpaquePointer) -> Progress {
        thread.assertIsCurrent()
        if let request = requests.removeValue(forKey: wsi) { return .complete(request) }
        if answered.remove(wsi) != nil {
            keepsAlive.remove(wsi)
            return .waiting(-1)  // lws flushes what the kernel did not take, then closes
        }
        return .waiting(bodyCompleted.insert(wsi).inserted ? 0 : -1)
    }

    /// LWS_CALLBACK_CLOSED_HTTP.
    func closed(_ wsi: OpaquePointer) {
        thread.assertIsCurrent()
        answered.remove(wsi)
        requests.removeValue(forKey: wsi)
        keepsAlive.remove(wsi)
        keptAlive.remove(wsi)
        bodyCompleted.remove(wsi)
        idleSince.removeValue(forKey: wsi)
    }

    /// The kept connections that have waited `keepAliveIdleMillis` for their
    /// next request by `now` (monotonic ms): to be closed.
    func expiredIdle(now: Int64) -> [OpaquePointer] {
        thread.assertIsCurrent()
        var expired: [OpaquePointer] = []
        while let (wsi, since) = idle.first, since + Self.keepAliveIdleMillis <= now {
            idle.removeFirst()
            if idleSince[wsi] == since {
                idleSince.removeValue(forKey: wsi)
                expired.append(wsi)
            }
        }
        return expired
    }

    /// The answer comes later (from another node): the connection waits up to `seconds`.
    func wait(_ wsi: OpaquePointer, seconds: Int) {
        thread.assertIsCurrent()
        lws_set_timeout(wsi, PENDING_TIMEOUT_HTTP_CONTENT, Int32(seconds))
    }

    /// Writes `response`, head and body in one write (one segment for
    /// a small answer), then waits for the connection to be writable: its
    /// close, or its wait for the next request, comes then (`writable`).
    /// Returns lws' callback result.
    func respond(_ wsi: OpaquePointer, _ response: HTTPResponse) -> Int32 {
        thread.assertIsCurrent()
        let headRoom = 1024
        var buffer = [UInt8](repeating: 0, count: Int(CWS_PRE) + headRoom + response.body.count)
        let ok: Bool = buffer.withUnsafeMutableBufferPointer { buffer in
            let start = buffer.baseAddress! + Int(CWS_PRE)
            var cursor: UnsafeMutablePointer<UInt8>? = start
            let end = start + headRoom - 1
            if lws_add_http_common_headers(
                wsi,
                UInt32(response.status),
                response.contentType,
                lws_filepos_t(response.body.count),
                &cursor,
                end
            ) != 0 {
                return false
            }
            // Only a GET's connection stays open: libwebsockets 4.1.6 spins
            // forever on a pipelined POST whose body was read with the
            // previous request (see docs/RELIABILITY.md), so every other
            // answer closes its connection, and says so.
            if !keepsAlive.contains(wsi),
                lws_add_http_header_by_token(wsi, WSI_TOKEN_CONNECTION, Self.close, 5, &cursor, end) != 0
            {
                return false
            }
            for header in response.headers {
                let name = Array((header.name + ":").utf8) + [0]
                let value = Array(header.value.utf8)
                if lws_add_http_header_by_name(wsi, name, value, Int32(value.count), &cursor, end) != 0 {
                    return false
                }
            }
            guard lws_finalize_http_header(wsi, &cursor, end) == 0, let bodyStart = cursor else { return false }
            response.body.withUnsafeBufferPointer { body in
                if let source = body.baseAddress { bodyStart.update(from: source, count: body.count) }
            }
            let length = bodyStart - start + response.body.count
            // lws keeps what the kernel does not take and flushes it before the next writable.
            return lws_write(wsi, start, length, LWS_WRITE_HTTP_FINAL) == length
        }
        guard ok else { return 1 }
        answered.insert(wsi)
        if inCallback != wsi { lws_callback_on_writable(wsi) }
        return 0
    }

    /// Runs LWS_CALLBACK_HTTP's work (`serve`) for `wsi`; an answer written
    /// meanwhile is finished before the callback returns: `finish` (the
    /// writable step) decides the close or the wait for the next request.
    func inHTTPCallback(_ wsi: OpaquePointer, serve: () -> Int32, finish: () -> Int32) -> Int32 {
        thread.assertIsCurrent()
        inCallback = wsi
        let result = serve()
        inCallback = nil
        guard result == 0, answered.contains(wsi) else { return result }
        return finish()
    }

    /// LWS_CALLBACK_HTTP_WRITEABLE: the answer is out; the close, or the wait
    /// for the connection's next request (`isKeptAlive(wsi)` tells which).
    func writable(_ wsi: OpaquePointer) -> Int32 {
        thread.assertIsCurrent()
        guard answered.remove(wsi) != nil else { return 0 }
        guard keepsAlive.remove(wsi) != nil else { return -1 }
        // libwebsockets says whether the client keeps it (HTTP/1.1 without
        // `Connection: close`), and waits for the rest of a partial write first.
        if lws_http_transaction_completed(wsi) != 0 { return -1 }
        keptAlive.insert(wsi)
        // Instead of lws' keep-alive timeout (see `idle`).
        lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0)
        let now = monotonicMillis()
        idleSince[wsi] = now
        idle.append((wsi, now))
        return 0
    }

    /// Whether the connection answered a request and waits for its next one.
    func isKeptAlive(_ wsi: OpaquePointer) -> Bool { keptAlive.contains(wsi) }

    /// A complete HTTP/1.1 response written straight to a socket, for
    /// requests libwebsockets refuses before any HTTP callback (a request
    /// line it cannot parse, headers over the limit). Closes the connection.
    static func rawResponse(_ status: Int, reason: String, code: Int, _ message: String) -> [UInt8] {
        var body = JSONWriter()
        body.object { w in
            w.field("code", code)
            w.field("message", message)
        }
        let head =
            "HTTP/1.1 \(status) \(reason)\r\ncontent-type: application/json\r\n"
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
            return .refused(
                .error(411, code: 411, "Transfer-Encoding is not supported: send the body with a Content-Length")
            )
        }
        guard let text = contentLength else { return .length(0) }
        let digits = text.utf8
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return .refused(
                .error(
                    400,
                    code: 400,
                    "Content-Length: must be one non-negative decimal number, got \"\(text.prefix(64))\""
                )
            )
        }
        guard digits.count <= 18, let length = Int(text), length <= limit else {
            return .refused(.error(413, code: 41300, "body over \(limit) bytes"))
        }
        return .length(length)
    }

    private func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let length = Int(lws_hdr_total_length(wsi, token))
        guard length > 0, length < 8192 else { return nil }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: length + 1) { buffer in
            let copied = lws_hdr_copy(wsi, buffer.baseAddress, Int32(buffer.count), token)
            guard copied >= 0 else { return nil }
            return String(
                decoding: UnsafeRawBufferPointer(start: buffer.baseAddress, count: Int(copied)),
                as: UTF8.self
            )
        }
    }
}
