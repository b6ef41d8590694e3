/// `settings.reactions` (1.2, PROTOCOL.md section 20).
public struct ReactionSettings: Sendable, Equatable {
    public static let defaultTypes = ["like", "love", "laugh", "wow", "fire", "clap"]
    /// What `types` may hold: 1 to 32 reaction ids.
    public static let typeCountRange = 1...32
    static let typeRule = "1 to 32 characters from A-Z, a-z, 0-9, _ and -"

    /// `types`: the reaction ids `react` accepts, each `[A-Za-z0-9_-]{1,32}`, unique.
    public var types: [String] = Self.defaultTypes
    /// `interval_ms`, 100...60000: at most one `on-reactions` per room per interval.
    public var intervalMs: Int = 1000

    public init(types: [String] = Self.defaultTypes, intervalMs: Int = 1000) {
        self.types = types
        self.intervalMs = intervalMs
    }

    /// A reaction id's shape: `[A-Za-z0-9_-]{1,32}`.
    public static func isValidType(_ s: String) -> Bool {
        s.utf8.count <= 32 && TemplateIdentifier.isValid(s)
    }
}

extension ReactionSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        let present = c.keys.contains("types")
        let reported = c.problems.errors.count
        let given = try c.stringArray("types")  // read even when absent: a typo of it gets a did-you-mean
        if present {
            var valid = c.problems.errors.count == reported  // a wrong type is reported by the cursor
            if valid, !Self.typeCountRange.contains(given.count) {
                c.report(c.path("types"), "expected 1 to 32 reaction ids, got \(given.count)")
                valid = false
            }
            var seen: Set<String> = []
            for (i, type) in given.enumerated() {
                if !Self.isValidType(type) {
                    c.report(c.path("types", i), "invalid reaction id \"\(type)\", expected \(Self.typeRule)")
                    valid = false
                } else if !seen.insert(type).inserted {
                    c.report(c.path("types", i), "duplicate reaction id \"\(type)\"")
                    valid = false
                }
            }
            if valid { types = given }
        }
        intervalMs = try c.int("interval_ms", default: intervalMs, in: 100...60000)
    }
}
