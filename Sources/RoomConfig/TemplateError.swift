/// Why a role template was rejected: the JSON path of the offending value and
/// what is wrong with it, printed by the daemon as `PATH: PROBLEM`.
public struct TemplateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Dotted JSON path, e.g. `roles.guest.subscribeParams.subscribeToRoles[1]`;
    /// empty for problems with the file as a whole.
    public var path: String
    /// e.g. `no role named "hots"`.
    public var problem: String

    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    /// The problems after this one, when a template has several (each is
    /// one more `PATH: PROBLEM` line of `description`).
    public var more: [TemplateError] = []

    /// This problem and the ones after it.
    public var all: [TemplateError] {
        var first = self
        first.more = []
        return [first] + more
    }

    public var description: String {
        ([path.isEmpty ? problem : "\(path): \(problem)"] + more.map(\.description)).joined(separator: "\n")
    }
}
