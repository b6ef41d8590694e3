/// One role of the template (100ms field names).
public struct Role: Sendable, Equatable {
    public var name: String
    /// 1...5; lower sorts first.
    public var priority: Int
    /// 0 = no limit, -1 = nobody may have the role, else the most peers with it in a room.
    public var maxPeerCount: Int
    public var publishParams: PublishParams
    public var subscribeParams: SubscribeParams
    public var permissions: Permissions

    public init(
        name: String,
        priority: Int = 1,
        maxPeerCount: Int = 0,
        publishParams: PublishParams = PublishParams(),
        subscribeParams: SubscribeParams = SubscribeParams(),
        permissions: Permissions = Permissions()
    ) {
        self.name = name
        self.priority = priority
        self.maxPeerCount = maxPeerCount
        self.publishParams = publishParams
        self.subscribeParams = subscribeParams
        self.permissions = permissions
    }

    /// Whether peers of this role see the tracks of peers of `role`.
    public func subscribes(to role: String) -> Bool { subscribeParams.subscribeToRoles.contains(role) }
}

extension Role {
    /// Reads `roles.<name>`; `roleNames` are all roles of the template, for `subscribeToRoles`.
    /// A `name` field (100ms templates repeat the key there) must equal the key.
    init(name: String, _ c: TemplateCursor, roleNames: Set<String>) throws(TemplateError) {
        let written = try c.string("name", default: name)
        if written != name {
            c.report(c.path("name"), "must equal the role's key \"\(name)\", got \"\(written)\"")
        }
        try self.init(
            name: name,
            priority: c.int("priority", default: 1, in: 1...5),
            maxPeerCount: c.int("maxPeerCount", default: 0, atLeast: -1),
            publishParams: c.object("publishParams", PublishParams.init) ?? PublishParams(),
            subscribeParams: c.object("subscribeParams") { c throws(TemplateError) in
                try SubscribeParams(c, roleNames: roleNames)
            } ?? SubscribeParams(),
            permissions: c.object("permissions", Permissions.init) ?? Permissions()
        )
    }
}
