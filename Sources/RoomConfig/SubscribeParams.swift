/// `subscribeParams` of a role: whose tracks its peers see.
public struct SubscribeParams: Sendable, Equatable {
    /// Every entry names a role of the template.
    public var subscribeToRoles: [String]
    public var maxSubsBitRate: Int

    public init(subscribeToRoles: [String] = [], maxSubsBitRate: Int = 3200) {
        self.subscribeToRoles = subscribeToRoles
        self.maxSubsBitRate = maxSubsBitRate
    }
}

extension SubscribeParams {
    init(_ c: TemplateCursor, roleNames: Set<String>) throws(TemplateError) {
        self.init()
        subscribeToRoles = try c.stringArray("subscribeToRoles")
        for (i, role) in subscribeToRoles.enumerated() where !roleNames.contains(role) {
            c.report(c.path("subscribeToRoles", i), "no role named \"\(role)\"")
        }
        maxSubsBitRate = try c.int("maxSubsBitRate", default: maxSubsBitRate, atLeast: 0)
    }
}
