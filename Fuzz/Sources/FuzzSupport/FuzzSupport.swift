/// What every roomd fuzz target shares: the libFuzzer entry points.
///
/// SwiftPM links an executable target with `--defsym main=<Module>_main`, so
/// libFuzzer's own `main` cannot be used. Each target instead defines
/// `<Module>_main` with `@_cdecl` and hands its callback to
/// `LLVMFuzzerRunDriver`, libFuzzer's documented entry point for programs that
/// keep their own `main`. The callback is also exported as
/// `LLVMFuzzerTestOneInput`, which libFuzzer's (unused) `main` references. The targets are compiled with
/// `-parse-as-library` (no top-level code) and `-sanitize=fuzzer,address`
/// (see `make fuzz`).

/// One input: the bytes libFuzzer passes (`data` may be nil when `size` is 0).
public typealias FuzzCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

// swift-format-ignore: AlwaysUseLowerCamelCase
// libFuzzer's C entry point, by its name.
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: FuzzCallback
) -> CInt

/// Runs libFuzzer with the process arguments (corpus directories, `-max_total_time=…`).
public func runFuzzer(
    _ argc: CInt,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
    _ callback: FuzzCallback
) -> CInt {
    var count = argc
    var vector = argv
    return LLVMFuzzerRunDriver(&count, &vector, callback)
}

/// The input as an array (libFuzzer's buffer is only valid during the call).
public func fuzzBytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}

/// Stops the run with a finding: libFuzzer (through ASan's deadly-signal
/// handler) saves the input as `crash-…`.
public func fuzzFinding(_ message: String, input: [UInt8]) -> Never {
    let shown = input.count <= 512 ? String(decoding: input, as: UTF8.self) : "\(input.count) bytes"
    fatalError("fuzz finding: \(message)\ninput: \(shown)")
}
