/// `settings.admin` (1.3, PROTOCOL.md section 32): the console at `/admin/`.
public struct AdminSettings: Sendable, Equatable {
    /// `enabled`: roomd serves the console's files; false answers /admin/ with 404.
    public var enabled: Bool = true

    public init(enabled: Bool = true) {
        self.enabled = enabled
    }
}

extension AdminSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        enabled = try c.bool("enabled", default: enabled)
    }
}
