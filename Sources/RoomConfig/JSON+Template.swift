import RoomWire

/// How the template decoder reads RoomWire's JSON values.
extension JSON {
    /// The value as an integer: an integral number (`1`, `1.0`, `1e2`) in the
    /// range where doubles are exact.
    var templateInteger: Int? {
        guard case .number(let text) = self else { return nil }
        if let n = Int(text) { return n }
        guard let x = Double(text), x.rounded(.towardZero) == x, abs(x) <= 9_007_199_254_740_992 else { return nil }
        return Int(x)
    }

    /// How the value is named after "got" in a type problem (`number 1.5`, `string`).
    var templateKind: String {
        if case .number(let text) = self { return "number \(text)" }
        return typeName
    }
}
