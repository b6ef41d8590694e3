import RoomConfig
import RoomModel
import RoomWire

/// Every role's `Policy` object (PROTOCOL.md section 3), encoded once: the
/// same bytes for every peer of a role in `join`, and one shared
/// `on-policy-change` frame per role. Its service thread's only (`add`
/// checks it in debug builds); the frames are made on the thread that made
/// the server and queued by the one that runs it.
final class Policies {
    private(set) var encoded: [String: [UInt8]] = [:]
    private(set) var changeFrames: [String: Frame] = [:]
    private let thread: ServiceThread

    init(template: RoleTemplate, thread: ServiceThread) {
        self.thread = thread
        add(template)
    }

    /// SIGHUP: the reloaded template's roles from now on. The policies of
    /// roles that vanished stay, for the peers that still have them.
    func add(_ template: RoleTemplate) {
        thread.assertIsCurrent()
        for name in template.roleNames {
            var w = JSONWriter()
            w.object { w in
                w.field("name", name)
                w.key("known_roles")
                w.object { w in
                    for known in template.roleNames {
                        w.key(known)
                        w.role(template.roles[known]!)
                    }
                }
            }
            encoded[name] = w.bytes
            changeFrames[name] = Envelope.notification("on-policy-change", params: w.bytes)
        }
    }
}
