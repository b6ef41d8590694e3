/// The role template roomd runs with (`roomd --config roles.json`): the roles
/// peers can have and the daemon's settings.
public struct RoleTemplate: Sendable, Equatable {
    /// Top-level `name`.
    public var name: String
    /// By role name.
    public var roles: [String: Role] {
        didSet { roleNames = Self.order(roles) }
    }
    /// The keys of `roles` sorted by (priority, name): the order for output.
    public private(set) var roleNames: [String]
    public var settings: Settings

    /// Builds a template without validation; a later role replaces an earlier one of the same name.
    public init(name: String = "roomd", roles: [Role], settings: Settings = Settings()) {
        self.name = name
        self.roles = Dictionary(roles.map { ($0.name, $0) }, uniquingKeysWith: { _, later in later })
        self.roleNames = Self.order(self.roles)
        self.settings = settings
    }

    public func role(_ name: String) -> Role? { roles[name] }

    private static func order(_ roles: [String: Role]) -> [String] {
        roles.sorted { ($0.value.priority, $0.key) < ($1.value.priority, $1.key) }.map(\.key)
    }
}
