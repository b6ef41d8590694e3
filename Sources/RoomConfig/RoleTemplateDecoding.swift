import RoomWire

extension RoleTemplate {
    /// Parses and validates a template. Problems throw, naming the JSON path:
    /// the first in reading order (object keys sorted), with every other one
    /// in `more`. Unknown keys do not fail: they come back as warnings
    /// `PATH: unknown key ignored`, sorted — unless `strict`, where they are
    /// problems too (`PATH: unknown key, did you mean KEY?`).
    public static func decode(
        _ data: [UInt8],
        strict: Bool = false
    ) throws(TemplateError)
        -> (template: RoleTemplate, warnings: [String])
    {
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
        let c = try TemplateCursor(root, path: "", strict: strict)
        let name = try c.string("name", default: "roomd")
        let roles = try c.object("roles", readRoles) ?? []
        if roles.isEmpty, !c.problems.errors.contains(where: { $0.path.hasPrefix("roles") }) {
            c.report(c.path("roles"), "at least one role is required")
        }
        let settings = try c.object("settings", Settings.init) ?? Settings()
        if root["settings"]?["stage"]?["guest_role"] != nil { checkGuestRole(settings.stage, roles: roles, c) }
        let warnings = c.finish().sorted()
        if var first = c.problems.errors.first {
            first.more = Array(c.problems.errors.dropFirst())
            throw first
        }
        return (RoleTemplate(name: name, roles: roles, settings: settings), warnings)
    }

    /// A `settings.stage.guest_role` the template gives must name one of its
    /// roles. A template that gives none (the default `"guest"`) and has no
    /// role `guest` runs with the call-in queue off (RoomModel's
    /// `stageIsOn`): a template of before 1.3 starts as it did.
    private static func checkGuestRole(_ stage: StageSettings, roles: [Role], _ c: TemplateCursor) {
        guard stage.enabled, !roles.contains(where: { $0.name == stage.guestRole }) else { return }
        c.report("settings.stage.guest_role", "no role named \"\(stage.guestRole)\" in roles")
    }

    /// `decode` of the file at `path`.
    public static func load(
        path: String,
        strict: Bool = false
    ) throws(TemplateError)
        -> (template: RoleTemplate, warnings: [String])
    {
        try decode(TemplateFile.read(path), strict: strict)
    }

    /// The `roles` object: names are checked first, then each role in name order.
    private static func readRoles(_ c: TemplateCursor) throws(TemplateError) -> [Role] {
        let names = c.keys
        for name in names where !TemplateIdentifier.isValid(name) {
            c.report(c.path(name), "invalid role name \"\(name)\", expected \(TemplateIdentifier.rule)")
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
