/// `settings.role_change`
public struct RoleChangeSettings: Sendable, Equatable {
    /// `request_ttl_s`, 1...3600: lifetime of a polite role-change request.
    public var requestTTLS: Int = 60

    public init(requestTTLS: Int = 60) {
        self.requestTTLS = requestTTLS
    }
}

extension RoleChangeSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        requestTTLS = try c.int("request_ttl_s", default: requestTTLS, in: 1...3600)
    }
}
