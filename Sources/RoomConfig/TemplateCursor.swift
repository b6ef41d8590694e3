import RoomWire

/// Every problem found in a template, in reading order (the reader goes on
/// after a problem, with the default in place of the bad value, so that one
/// run lists them all).
final class TemplateProblems {
    var errors: [TemplateError] = []
}

/// Reads one JSON object of the template: typed accessors that apply defaults
/// and ranges and name the exact path in problems, and a record of the keys
/// read, so that the others can be reported as unknown (with the known key
/// they most look like).
final class TemplateCursor {
    /// Path of this object, e.g. `roles.guest`; empty for the top level.
    let path: String
    private let members: [String: JSON]
    private var read: Set<String> = []
    /// Unknown-key warnings of the objects read through `object(_:_:)`.
    private var warnings: [String] = []
    let problems: TemplateProblems
    /// Unknown keys are problems, not warnings (`--strict`).
    let strict: Bool

    init(
        _ value: JSON,
        path: String,
        problems: TemplateProblems = TemplateProblems(),
        strict: Bool = false
    )
        throws(TemplateError)
    {
        guard case .object(let members) = value else {
            throw TemplateError(path: path, problem: "expected object, got \(value.templateKind)")
        }
        self.path = path
        self.members = Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
        self.problems = problems
        self.strict = strict
    }

    /// Records a problem; reading goes on.
    func report(_ path: String, _ problem: String) {
        problems.errors.append(TemplateError(path: path, problem: problem))
    }

    /// All keys of the object, sorted.
    var keys: [String] { members.keys.sorted() }

    func path(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func path(_ key: String, _ index: Int) -> String { "\(path(key))[\(index)]" }

    func int(_ key: String, default: Int, in range: ClosedRange<Int>) throws(TemplateError) -> Int {
        guard let value = take(key) else { return `default` }
        guard let n = value.templateInteger else { return mismatch(key, "integer", value, `default`) }
        guard range.contains(n) else {
            let bounds =
                range.upperBound == .max
                ? "at least \(range.lowerBound)"
                : "between \(range.lowerBound) and \(range.upperBound)"
            report(path(key), "must be \(bounds), got \(n)")
            return `default`
        }
        return n
    }

    func int(_ key: String, default: Int, atLeast minimum: Int) throws(TemplateError) -> Int {
        try int(key, default: `default`, in: minimum...Int.max)
    }

    func bool(_ key: String, default: Bool) throws(TemplateError) -> Bool {
        guard let value = take(key) else { return `default` }
        guard case .bool(let b) = value else { return mismatch(key, "boolean", value, `default`) }
        return b
    }

    func string(_ key: String, default: String) throws(TemplateError) -> String {
        guard let value = take(key) else { return `default` }
        guard case .string(let s) = value else { return mismatch(key, "string", value, `default`) }
        return s
    }

    /// An array of strings; absent is empty.
    func stringArray(_ key: String) throws(TemplateError) -> [String] {
        guard let value = take(key) else { return [] }
        guard case .array(let elements) = value else { return mismatch(key, "array", value, []) }
        var strings: [String] = []
        for (i, element) in elements.enumerated() {
            guard case .string(let s) = element else {
                report(path(key, i), "expected string, got \(element.templateKind)")
                continue
            }
            strings.append(s)
        }
        return strings
    }

    /// Reads the object at `key` with `body`; nil when absent, or when it is
    /// no object or `body` threw (both recorded as problems).
    func object<T>(_ key: String, _ body: (TemplateCursor) throws(TemplateError) -> T) throws(TemplateError) -> T? {
        guard let value = take(key) else { return nil }
        guard case .object = value else { return mismatch(key, "object", value, nil) }
        let child = try TemplateCursor(value, path: path(key), problems: problems, strict: strict)
        let result: T
        do {
            result = try body(child)
        } catch {
            problems.errors.append(error)
            return nil
        }
        warnings += child.finish()
        return result
    }

    /// The warnings of this object and those read through it: one
    /// `PATH: unknown key ignored` for every key nobody read — or, strict,
    /// one problem `PATH: unknown key` each. Both name the known key of the
    /// same object it most looks like, if one is close.
    func finish() -> [String] {
        var mine: [String] = []
        for key in keys where !read.contains(key) {
            let kind = path.hasSuffix("permissions") ? "unknown permission" : "unknown key"
            let hint = Self.closest(to: key, among: read).map { ", did you mean \($0)?" } ?? ""
            if strict {
                report(path(key), kind + hint)
            } else {
                mine.append("\(path(key)): \(kind) ignored\(hint)")
            }
        }
        return warnings + mine
    }

    /// The known key `key` is a typo of: equal ignoring case, or at most two
    /// edits away (and fewer than half its length).
    static func closest(to key: String, among known: Set<String>) -> String? {
        let lower = Array(key.lowercased())
        var best: (name: String, distance: Int)?
        for name in known.sorted() {
            let distance = editDistance(lower, Array(name.lowercased()))
            if distance <= min(2, (name.count - 1) / 2), distance < (best?.distance ?? .max) { best = (name, distance) }
        }
        return best?.name
    }

    /// Levenshtein distance, iterative, two rows.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    private func take(_ key: String) -> JSON? {
        read.insert(key)
        return members[key]
    }

    private func mismatch<T>(_ key: String, _ expected: String, _ value: JSON, _ fallback: T) -> T {
        report(path(key), "expected \(expected), got \(value.templateKind)")
        return fallback
    }
}
