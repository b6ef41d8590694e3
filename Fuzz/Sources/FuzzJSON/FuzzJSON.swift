import FuzzSupport
import RoomWire

/// RoomWire's JSON parser and writer. Properties checked for every input:
/// - `JSON.parse` returns or throws `JSONParseError`, never traps or hangs,
///   with the wire settings (depth 64, last duplicate wins) and the template
///   ones (depth 256, duplicates rejected);
/// - a parsed value written by `JSONWriter` parses again to an equal value,
///   and writing that again gives the same bytes (the writer's output is
///   valid JSON and a fixed point);
/// - the template settings accept nothing the wire settings reject, except
///   nesting deeper than 64.
@_cdecl("FuzzJSON_main")
public func fuzzJSONMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzJSON)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzBytes(data, size)
    let wire = try? JSON.parse(input)
    let strict = try? JSON.parse(input, maxDepth: 256, rejectDuplicateKeys: true)
    if strict != nil, wire == nil, (try? JSON.parse(input, maxDepth: 256)) == nil {
        fuzzFinding("accepted with duplicates rejected but refused with duplicates allowed", input: input)
    }
    guard let value = wire else { return 0 }
    let written = value.bytes
    let again: JSON
    do { again = try JSON.parse(written, maxDepth: 256) } catch {
        fuzzFinding(
            "the writer's output does not parse (\(error)): \(String(decoding: written, as: UTF8.self))",
            input: input
        )
    }
    guard again == value else {
        fuzzFinding(
            "the value changed through writer and parser: \(String(decoding: written, as: UTF8.self))",
            input: input
        )
    }
    guard again.bytes == written else {
        fuzzFinding("writing is not a fixed point: \(String(decoding: written, as: UTF8.self))", input: input)
    }
    return 0
}
