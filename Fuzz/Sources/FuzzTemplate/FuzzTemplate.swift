import FuzzSupport
import Logging
import RoomConfig
import RoomModel
import RoomServer
import RoomWire

/// The role-template loader (`RoleTemplate.decode`, what `--config` and
/// `check-config` read). For every input: decoding returns a template or
/// throws `TemplateError`, never traps; an accepted template builds a daemon
/// (`RoomServer.init` encodes every role's policy) and a registry in which
/// one peer of each role can join (or is refused with a `RoomError`).
@_cdecl("FuzzTemplate_main")
public func fuzzTemplateMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzTemplate)
}

private let quiet: Logger = {
    var logger = Logger(label: "fuzz.template")
    logger.logLevel = .critical
    return logger
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTemplate(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzBytes(data, size)
    guard let template = try? RoleTemplate.decode(input).template else { return 0 }
    guard !template.roleNames.isEmpty, template.roleNames.allSatisfy({ template.role($0) != nil }) else {
        fuzzFinding("an accepted template without roles, or a role name without a role", input: input)
    }
    _ = RoomServer(
        options: ServerOptions(port: 0, template: template, secret: [UInt8](repeating: 7, count: 32)),
        logger: quiet
    )
    let registry = RoomRegistry(template: template)
    for (index, role) in template.roleNames.prefix(8).enumerated() {
        _ = try? registry.join(
            JoinRequest(roomID: RoomID("fuzz"), userID: UserID("user-\(index)"), roleName: role, name: "peer \(index)")
        )
    }
    return 0
}
