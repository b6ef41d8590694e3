import CWebSockets

/// The one lws protocol callback, for HTTP and WebSocket alike. A plain
/// top-level function: lws calls it on the service thread (checked here in
/// debug builds, for every reason).
func roomdCallback(
    _ wsi: OpaquePointer?,
    _ reason: lws_callback_reasons,
    _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?,
    _ length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let opaque = lws_context_user(context) else {
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    let server = Unmanaged<RoomServer>.fromOpaque(opaque).takeUnretainedValue()
    server.thread.assertIsCurrent()

    switch reason {
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        server.drainInbox()
        return 0

    // lws' own accept (the poll() loop; on libev roomd accepts itself): `input` is the socket.
    case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
        let fd = Int32(truncatingIfNeeded: Int(bitPattern: input))
        guard let arrival = server.sockets.admit(from: PeerAddress(peerOf: fd) ?? .unknown, as: .adopting) else {
            return 1
        }
        server.sockets.adopting = arrival  // lws adopts the socket next
        return 0

    case LWS_CALLBACK_WSI_CREATE:
        server.sockets.created(wsi)
        return 0

    case LWS_CALLBACK_WSI_DESTROY:
        server.sockets.destroyed(wsi)
        // Whatever closed it: a kept HTTP connection whose next request lws
        // could not parse goes on as a raw socket (RAW_ADOPT below) and
        // closes without LWS_CALLBACK_CLOSED_HTTP; nothing may keep its
        // pointer (the idle keep-alive list would time out a freed wsi).
        server.http.closed(wsi)
        server.router.httpClosed(wsi)
        return 0

    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        // Only RFC 6455 (version 13) upgrades of /ws, and none while draining.
        if server.sockets.draining { return 1 }
        guard requestPath(wsi) == "/ws" else { return 1 }
        if server.http.countsParsedHeaders, headerBytes(wsi) > HTTPExchange.maxHeaderBytes { return 1 }
        return webSocketVersion(wsi) == "13" ? 0 : 1

    // permessage-deflate (Transport/Deflate.swift): `input` is the extension's name.
    case LWS_CALLBACK_CONFIRM_EXTENSION_OKAY:
        return acceptsDeflateOffer(wsi) ? 0 : 1

    case LWS_CALLBACK_ADD_HEADERS:
        amendDeflateAnswer(wsi, input)
        return 0

    // The client's close frame. After roomd's own (a permessage-deflate connection,
    // Connection.writeQueued): the handshake is done, close without an echo.
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        return server.sockets[wsi]?.closeFrameSent == true ? 1 : 0

    case LWS_CALLBACK_ESTABLISHED:
        server.connectionOpened(wsi)
        return 0

    case LWS_CALLBACK_RECEIVE_PONG:
        server.sockets[wsi]?.liveness.heard(at: monotonicMillis())
        return 0

    case LWS_CALLBACK_RECEIVE:
        guard let connection = server.sockets[wsi] else { return -1 }
        connection.liveness.heard(at: monotonicMillis())
        let fragment = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        server.received(
            fragment,
            on: connection,
            first: lws_is_first_fragment(wsi) != 0,
            final: lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0,
            binary: lws_frame_is_binary(wsi) != 0
        )
        return 0

    case LWS_CALLBACK_SERVER_WRITEABLE:
        return server.sockets.write(wsi)

    case LWS_CALLBACK_CLOSED:
        server.connectionClosed(wsi)
        return 0

    case LWS_CALLBACK_HTTP:
        let cString = input?.assumingMemoryBound(to: CChar.self)
        let path = cString.map { String(cString: $0) } ?? "/"
        // lws decodes %XX into the path; `length` counts its bytes but NULs, so a
        // shorter C string means a %00 cut it (the libev loop refused those before lws).
        let cut = cString.map { strlen($0) < length } ?? false
        return server.http.inHTTPCallback(
            wsi,
            serve: { server.serve(server.http.started(wsi, path: path, cut: cut), on: wsi) },
            finish: { server.httpWritable(wsi) }
        )

    case LWS_CALLBACK_HTTP_BODY:
        let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        return server.serve(server.http.bodyReceived(wsi, bytes), on: wsi)

    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        return server.serve(server.http.bodyComplete(wsi), on: wsi)

    case LWS_CALLBACK_HTTP_WRITEABLE:
        return server.httpWritable(wsi)

    case LWS_CALLBACK_CLOSED_HTTP:
        server.http.closed(wsi)
        server.router.httpClosed(wsi)
        return 0

    // A request line libwebsockets cannot parse (an unknown method, not
    // HTTP at all) falls back to a raw socket: answer 400 and close.
    case LWS_CALLBACK_RAW_ADOPT:
        lws_callback_on_writable(wsi)
        return 0

    case LWS_CALLBACK_RAW_RX:
        return 0

    case LWS_CALLBACK_RAW_WRITEABLE:
        var bytes =
            [UInt8](repeating: 0, count: Int(CWS_PRE))
            + HTTPExchange.rawResponse(400, reason: "Bad Request", code: 400, "not an HTTP/1.1 request roomd serves")
        _ = bytes.withUnsafeMutableBufferPointer { buffer in
            // LWS_WRITE_HTTP is LWS_WRITE_RAW.
            lws_write(wsi, buffer.baseAddress! + Int(CWS_PRE), buffer.count - Int(CWS_PRE), LWS_WRITE_HTTP)
        }
        return -1

    default:
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
}

/// The bytes of the request's headers that lws parsed (values of every
/// header it knows, plus a name and separator each).
func headerBytes(_ wsi: OpaquePointer) -> Int {
    var total = 0
    for token in 0..<Int32(WSI_TOKEN_COUNT.rawValue) {
        let length = Int(lws_hdr_total_length(wsi, lws_token_indexes(rawValue: UInt32(token))))
        if length > 0 { total += length + 20 }
    }
    return total
}

/// The `Sec-WebSocket-Version` header ("" when absent).
func webSocketVersion(_ wsi: OpaquePointer) -> String {
    var buffer = [CChar](repeating: 0, count: 16)
    let count = lws_hdr_copy(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_VERSION)
    guard count > 0 else { return "" }
    return String(decoding: buffer.prefix(Int(count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The request's path (without query), from the parsed headers.
func requestPath(_ wsi: OpaquePointer) -> String {
    var buffer = [CChar](repeating: 0, count: 512)
    let count = lws_hdr_copy(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_GET_URI)
    guard count > 0 else { return "" }
    let path = String(decoding: buffer.prefix(Int(count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
}
