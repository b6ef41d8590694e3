/// The shape of role names and predefined room ids: `[A-Za-z0-9_-]{1,64}`.
enum TemplateIdentifier {
    static let rule = "1 to 64 characters from A-Z, a-z, 0-9, _ and -"

    static func isValid(_ s: String) -> Bool {
        (1...64).contains(s.utf8.count)
            && s.utf8.allSatisfy { b in
                switch b {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }
}
