import CWebSockets

/// permessage-deflate's sending side (RFC 7692; PROTOCOL.md section 1): a
/// service thread's one raw-deflate stream, reset before every message, so
/// that each compressed frame stands alone (roomd answers
/// `server_no_context_takeover`). A push is compressed once, by its first
/// recipient that negotiated the extension (`Frame.deflated(by:)`), and the
/// same compressed frame is queued to all of them. lws' own per-connection
/// compressor is never used: roomd writes its frames raw.
///
/// Level 6, memLevel 4, a 32 KiB window: for the 150–400-byte pushes of a
/// live show, memLevel 4 gives the sizes of 8 (within 1–2 bytes) and resets
/// 16 times less hash table (docs/ARCHITECTURE.md, Transport). ~136 KiB per
/// service thread. The service thread's only.
package final class MessageDeflater {
    /// Frames shorter than this stay plain: the compressed form saves little and costs a deflate.
    static let minimumFrameBytes = 128

    private let stream: UnsafeMutablePointer<z_stream>
    private var output: [UInt8] = []
    /// `roomd_deflated_frames_total`, `roomd_deflate_bytes_saved_total`.
    private let metrics: ServerMetrics?

    /// nil when zlib cannot start a stream (out of memory): frames then stay plain.
    package convenience init?() { self.init(metrics: nil) }

    init?(metrics: ServerMetrics?) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard cws_deflate_init(stream, 6, 15, 4) == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            return nil
        }
        self.metrics = metrics
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// The compressed frame (FIN, RSV1, text: `0xC1`) of `payload`, a text
    /// frame's payload, or nil when it would not be smaller than `plainCount`
    /// wire bytes.
    package func frame(of payload: ArraySlice<UInt8>, plainCount: Int) -> Frame? {
        guard deflateReset(stream) == Z_OK else { return nil }
        // Not smaller unless it fits in the plain frame's size: a fuller buffer means no.
        let room = Frame.headerRoom + plainCount
        if output.count < room { output = [UInt8](repeating: 0, count: room) }
        let written: Int? = payload.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.pointee.avail_in = UInt32(input.count)
                stream.pointee.next_out = out.baseAddress! + Frame.headerRoom
                stream.pointee.avail_out = UInt32(plainCount)
                let status = deflate(stream, Z_SYNC_FLUSH)
                guard status == Z_OK, stream.pointee.avail_in == 0, stream.pointee.avail_out > 0 else { return nil }
                return plainCount - Int(stream.pointee.avail_out)
            }
        }
        // A sync flush ends with an empty stored block, 00 00 FF FF, which RFC 7692 leaves out.
        guard let written, written >= 4 else { return nil }
        let end = Frame.headerRoom + written
        guard output[end - 4] == 0, output[end - 3] == 0, output[end - 2] == 0xFF, output[end - 1] == 0xFF else {
            return nil
        }
        let frame = Frame(reservedPayload: Array(output[..<(end - 4)]), firstByte: 0xC1)
        guard frame.count < plainCount else { return nil }
        metrics?.deflatedFrames.increment()
        metrics?.deflateBytesSaved.increment(by: plainCount - frame.count)
        return frame
    }
}

/// Whether the client of `wsi` negotiated permessage-deflate (lws sets an
/// extension's option only on a connection where the extension is active;
/// `rx_buf_size` 10 is its default, so nothing changes).
func negotiatedDeflate(_ wsi: OpaquePointer) -> Bool {
    lws_set_extension_option(wsi, "permessage-deflate", "rx_buf_size", "10") == 0
}

/// LWS_CALLBACK_CONFIRM_EXTENSION_OKAY for permessage-deflate: declined when
/// the offer asks for a server window (`server_max_window_bits`): lws 4.1.6
/// accepts it but answers without the value, and a strict client then fails
/// the handshake; declined, the connection opens uncompressed.
func acceptsDeflateOffer(_ wsi: OpaquePointer) -> Bool {
    let length = Int(lws_hdr_total_length(wsi, WSI_TOKEN_EXTENSIONS))
    guard length > 0, length < 1024 else { return length == 0 }
    var buffer = [CChar](repeating: 0, count: length + 1)
    guard lws_hdr_copy(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_EXTENSIONS) >= 0 else { return false }
    let offer = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return !offer.contains("server_max_window_bits")
}

/// LWS_CALLBACK_ADD_HEADERS of an upgrade that negotiated permessage-deflate:
/// the answer gets both `no_context_takeover` flags, and lws' inflater is
/// reset after every message (lws 4.1.6 swaps the two flags for a server:
/// shim.h). Without the amended line, lws keeps its inflater's context.
func amendDeflateAnswer(_ wsi: OpaquePointer, _ args: UnsafeMutableRawPointer?) {
    guard let args, lws_hdr_total_length(wsi, WSI_TOKEN_EXTENSIONS) > 0 else { return }
    let amended = cws_pmd_amend_response(args) == 1
    _ = lws_set_extension_option(wsi, "permessage-deflate", "server_no_context_takeover", amended ? "1" : "0")
}
