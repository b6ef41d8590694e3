import CWebSockets

/// The `?name=value&…` arguments of a plain HTTP request, as lws parsed them
/// (one fragment per argument). At most 16 are read, each up to 4 KiB (a
/// token in `?token=`, PROTOCOL.md section 24).
func queryArguments(_ wsi: OpaquePointer) -> [String: String] {
    var arguments: [String: String] = [:]
    var buffer = [CChar](repeating: 0, count: 4097)
    for index in 0..<16 {
        let count = lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, Int32(index))
        if count < 0 { break }
        let text = String(decoding: buffer.prefix(Int(count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        if arguments[String(parts[0])] == nil { arguments[String(parts[0])] = parts.count > 1 ? String(parts[1]) : "" }
    }
    return arguments
}
