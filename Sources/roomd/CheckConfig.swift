import ArgumentParser
import RoomConfig
import RoomModel

struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate a role template and print its roles."
    )

    @Argument(help: "The role template (JSON).") var file: String
    @Flag(help: "Unknown keys and permission names are errors, not warnings.") var strict = false

    func run() throws {
        let template = loadTemplate(file, strict: strict)
        print("template \"\(template.name)\": \(template.roleNames.count) roles")
        for name in template.roleNames {
            let role = template.roles[name]!
            let publishes = role.publishParams.allowed.map(\.rawValue).joined(separator: ",")
            let permissions = Permissions.names.filter { role.permissions[$0] == true }.joined(separator: ",")
            print(
                "  \(name): priority \(role.priority), maxPeerCount \(role.maxPeerCount), "
                    + "publishes [\(publishes)], subscribes [\(role.subscribeParams.subscribeToRoles.joined(separator: ","))], "
                    + "permissions [\(permissions)]"
            )
        }
    }
}
