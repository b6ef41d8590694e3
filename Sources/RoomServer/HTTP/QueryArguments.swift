import CWebSockets

/// The `?name=value&…` arguments of a plain HTTP request, as lws parsed them
/// (one fragment per argument). At most 16 are read, each as long as a
/// request head may be (8 KiB: a longer head is 431): what a route accepts
/// is its own to say (the feed's `?token=` is at most 4 KiB, and a longer
/// one is told so, PROTOCOL.md section 24). The first of a repeated name counts.
func queryArguments(_ wsi: OpaquePointer) -> [String: String] {
    guard lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS) > 0 else { return [:] }
    var arguments: [String: String] = [:]
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: HTTPExchange.maxHeaderBytes + 1) { buffer in
        for index in 0..<16 {
            let count = lws_hdr_copy_fragment(
                wsi,
                buffer.baseAddress,
                Int32(buffer.count),
                WSI_TOKEN_HTTP_URI_ARGS,
                Int32(index)
            )
            if count == -1 { break }  // no more fragments
            if count < 0 { continue }  // longer than any head roomd answers (431)
            let bytes = UnsafeRawBufferPointer(start: buffer.baseAddress, count: Int(count))
            let equals = bytes.firstIndex(of: UInt8(ascii: "=")) ?? bytes.endIndex
            let name = String(decoding: bytes[..<equals], as: UTF8.self)
            if arguments[name] == nil {
                arguments[name] = equals < bytes.endIndex ? String(decoding: bytes[(equals + 1)...], as: UTF8.self) : ""
            }
        }
    }
    return arguments
}
