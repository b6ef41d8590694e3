import CWebSockets

/// The one lws protocol callback, for HTTP and WebSocket alike. A plain
/// top-level function: lws calls it on the service thread only.
func roomdCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let opaque = lws_context_user(context) else {
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    let server = Unmanaged<RoomServer>.fromOpaque(opaque).takeUnretainedValue()

    switch reason {
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        server.drainInbox()
        return 0

    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        // Only /ws upgrades, and none while draining.
        if server.draining { return 1 }
        return requestPath(wsi) == "/ws" ? 0 : 1

    case LWS_CALLBACK_ESTABLISHED:
        _ = server.makeConnection(wsi)
        return 0

    case LWS_CALLBACK_RECEIVE_PONG:
        server.connections[wsi]?.heard(at: monotonicMillis())
        return 0

    case LWS_CALLBACK_RECEIVE:
        guard let connection = server.connections[wsi] else { return -1 }
        connection.heard(at: monotonicMillis())
        let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        server.received(bytes, on: connection,
                        first: lws_is_first_fragment(wsi) != 0,
                        final: lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0,
                        binary: lws_frame_is_binary(wsi) != 0)
        return 0

    case LWS_CALLBACK_SERVER_WRITEABLE:
        guard let connection = server.connections[wsi] else { return -1 }
        let queued = connection.queuedBytes
        let result = connection.writeQueued(into: &server.writeScratch, limit: RoomServer.writeChunk,
                                            backedUpLimit: RoomServer.backedUpWriteChunk)
        if queued > connection.queuedBytes {
            server.metrics.bytesOut.increment(by: queued - connection.queuedBytes)
            server.bytesSinceTrim += queued - connection.queuedBytes
        }
        return result

    case LWS_CALLBACK_CLOSED:
        server.connectionClosed(wsi)
        return 0

    case LWS_CALLBACK_HTTP:
        let path = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "/"
        return server.httpRequestStarted(wsi, path: path)

    case LWS_CALLBACK_HTTP_BODY:
        return server.httpBodyReceived(wsi, UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length))

    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        return server.httpBodyComplete(wsi)

    case LWS_CALLBACK_HTTP_WRITEABLE:
        return server.writeHTTPBody(wsi)

    case LWS_CALLBACK_CLOSED_HTTP:
        server.httpResponses.removeValue(forKey: wsi)
        server.httpRequests.removeValue(forKey: wsi)
        return 0

    default:
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
}

/// The request's path (without query), from the parsed headers.
func requestPath(_ wsi: OpaquePointer) -> String {
    var buffer = [CChar](repeating: 0, count: 512)
    let count = lws_hdr_copy(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_GET_URI)
    guard count > 0 else { return "" }
    let path = String(decoding: buffer.prefix(Int(count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
}
