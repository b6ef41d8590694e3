/// The timestamp every measured message carries, found by receivers with
/// one `memmem`: `~T` + 16 digits (send time, µs of CLOCK_MONOTONIC) +
/// 2 digits (measurement step) + 7 digits (index of the sending connection,
/// so echoes to the sender are not counted as deliveries).
enum Marker {
    /// Digits after `~T`.
    static let digits = 25
    static let length = 2 + digits

    /// A message body of exactly `size` bytes (at least `length`): the marker,
    /// then printable padding. Plain ASCII, nothing to escape in JSON.
    static func body(micros: UInt64, step: Int, sender: Int, size: Int) -> [UInt8] {
        var out = [UInt8](repeating: UInt8(ascii: "x"), count: max(size, length))
        out[0] = UInt8(ascii: "~")
        out[1] = UInt8(ascii: "T")
        put(micros, width: 16, into: &out, at: 2)
        put(UInt64(step % 100), width: 2, into: &out, at: 18)
        put(UInt64(sender % 10_000_000), width: 7, into: &out, at: 20)
        if out.count > length { out[length] = UInt8(ascii: " ") }
        return out
    }

    private static func put(_ value: UInt64, width: Int, into out: inout [UInt8], at offset: Int) {
        var rest = value
        for position in stride(from: offset + width - 1, through: offset, by: -1) {
            out[position] = UInt8(48 + rest % 10)
            rest /= 10
        }
    }
}
