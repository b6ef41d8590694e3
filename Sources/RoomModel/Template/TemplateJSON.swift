/// A JSON value of the template file (see `TemplateJSONParser`).
enum TemplateJSON: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits an `Int`.
    case integer(Int)
    /// Any other number.
    case number(Double)
    case string(String)
    case array([TemplateJSON])
    case object([String: TemplateJSON])

    /// The value as an integer: `.integer`, or a `.number` with no fractional
    /// part (`1.0`, `1e2`) in the range where doubles are exact.
    var integerValue: Int? {
        switch self {
        case .integer(let n): n
        case .number(let x) where x.rounded(.towardZero) == x && abs(x) <= 9_007_199_254_740_992: Int(x)
        default: nil
        }
    }

    /// How the value is named after "got" in a type problem.
    var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer(let n): "number \(n)"
        case .number(let x): "number \(x)"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}
