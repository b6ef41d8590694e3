import RoomWire

extension RoleTemplate {
    /// Parses and validates a template. Problems throw, naming the JSON path;
    /// when there are several, the first in reading order (object keys sorted)
    /// is reported. Unknown keys do not fail: they come back as warnings
    /// `PATH: unknown key ignored`, sorted.
    public static func decode(_ data: [UInt8]) throws(TemplateError) -> (template: RoleTemplate, warnings: [String]) {
        let root: JSON
        do {
            // A UTF-8 byte order mark is allowed in a file.
            let text = data.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(data.dropFirst(3)) : data
            root = try JSON.parse(text, maxDepth: 256, rejectDuplicateKeys: true)
        } catch {
            throw TemplateError(path: "", problem: "invalid JSON: \(error)")
        }
        guard case .object = root else {
            throw TemplateError(path: "", problem: "the template must be a JSON object, got \(root.templateKind)")
        }
        let c = try TemplateCursor(root, path: "")
        let name = try c.string("name", default: "roomd")
        let roles = try c.object("roles", readRoles) ?? []
        guard !roles.isEmpty else {
            throw TemplateError(path: c.path("roles"), problem: "at least one role is required")
        }
        let settings = try c.object("settings", Settings.init) ?? Settings()
        return (RoleTemplate(name: name, roles: roles, settings: settings), c.finish().sorted())
    }

    /// `decode` of the file at `path`.
    public static func load(path: String) throws(TemplateError) -> (template: RoleTemplate, warnings: [String]) {
        try decode(TemplateFile.read(path))
    }

    /// The `roles` object: names are checked first, then each role in name order.
    private static func readRoles(_ c: TemplateCursor) throws(TemplateError) -> [Role] {
        let names = c.keys
        for name in names where !TemplateIdentifier.isValid(name) {
            throw TemplateError(path: c.path(name),
                                problem: "invalid role name \"\(name)\", expected \(TemplateIdentifier.rule)")
        }
        var roles: [Role] = []
        for name in names {
            let role = try c.object(name) { c throws(TemplateError) in
                try Role(name: name, c, roleNames: Set(names))
            }
            roles.append(role ?? Role(name: name))
        }
        return roles
    }
}
