import CWebSockets

/// The `?name=value&…` arguments of a plain HTTP request, as lws parsed them
/// (one fragment per argument). At most 16 are read, each up to 4 KiB (a
/// token in `?token=`, PROTOCOL.md section 24); the first of a repeated name
/// counts.
func queryArguments(_ wsi: OpaquePointer) -> [String: String] {
    guard lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS) > 0 else { return [:] }
    var arguments: [String: String] = [:]
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: 4097) { buffer in
        for index in 0..<16 {
            let count = lws_hdr_copy_fragment(
                wsi,
                buffer.baseAddress,
                Int32(buffer.count),
                WSI_TOKEN_HTTP_URI_ARGS,
                Int32(index)
            )
            if count < 0 { break }
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
