import RoomWire

/// Reads one JSON object of the template: typed accessors that apply defaults
/// and ranges and name the exact path in problems, and a record of the keys
/// read, so that the others can be reported as unknown.
final class TemplateCursor {
    /// Path of this object, e.g. `roles.guest`; empty for the top level.
    let path: String
    private let members: [String: JSON]
    private var read: Set<String> = []
    /// Unknown-key warnings of the objects read through `object(_:_:)`.
    private var warnings: [String] = []

    init(_ value: JSON, path: String) throws(TemplateError) {
        guard case .object(let members) = value else {
            throw TemplateError(path: path, problem: "expected object, got \(value.templateKind)")
        }
        self.path = path
        self.members = Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
    }

    /// All keys of the object, sorted.
    var keys: [String] { members.keys.sorted() }

    func path(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func path(_ key: String, _ index: Int) -> String { "\(path(key))[\(index)]" }

    func int(_ key: String, default: Int, in range: ClosedRange<Int>) throws(TemplateError) -> Int {
        guard let value = take(key) else { return `default` }
        guard let n = value.templateInteger else { throw mismatch(key, "integer", value) }
        guard range.contains(n) else {
            let bounds = range.upperBound == .max ? "at least \(range.lowerBound)"
                : "between \(range.lowerBound) and \(range.upperBound)"
            throw TemplateError(path: path(key), problem: "must be \(bounds), got \(n)")
        }
        return n
    }

    func int(_ key: String, default: Int, atLeast minimum: Int) throws(TemplateError) -> Int {
        try int(key, default: `default`, in: minimum...Int.max)
    }

    func bool(_ key: String, default: Bool) throws(TemplateError) -> Bool {
        guard let value = take(key) else { return `default` }
        guard case .bool(let b) = value else { throw mismatch(key, "boolean", value) }
        return b
    }

    func string(_ key: String, default: String) throws(TemplateError) -> String {
        guard let value = take(key) else { return `default` }
        guard case .string(let s) = value else { throw mismatch(key, "string", value) }
        return s
    }

    /// An array of strings; absent is empty.
    func stringArray(_ key: String) throws(TemplateError) -> [String] {
        guard let value = take(key) else { return [] }
        guard case .array(let elements) = value else { throw mismatch(key, "array", value) }
        var strings: [String] = []
        for (i, element) in elements.enumerated() {
            guard case .string(let s) = element else {
                throw TemplateError(path: path(key, i), problem: "expected string, got \(element.templateKind)")
            }
            strings.append(s)
        }
        return strings
    }

    /// Reads the object at `key` with `body`; nil when absent.
    func object<T>(_ key: String, _ body: (TemplateCursor) throws(TemplateError) -> T) throws(TemplateError) -> T? {
        guard let value = take(key) else { return nil }
        let child = try TemplateCursor(value, path: path(key))
        let result = try body(child)
        warnings += child.finish()
        return result
    }

    /// The warnings of this object and those read through it: one
    /// `PATH: unknown key ignored` for every key nobody read.
    func finish() -> [String] {
        warnings + keys.filter { !read.contains($0) }.map { "\(path($0)): unknown key ignored" }
    }

    private func take(_ key: String) -> JSON? {
        read.insert(key)
        return members[key]
    }

    private func mismatch(_ key: String, _ expected: String, _ value: JSON) -> TemplateError {
        TemplateError(path: path(key), problem: "expected \(expected), got \(value.templateKind)")
    }
}
