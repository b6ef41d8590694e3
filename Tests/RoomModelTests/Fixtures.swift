@testable import RoomModel

/// The guest call-in template, built in code so model tests don't read files.
enum Fixtures {
    static func template(settings: Settings = Settings(), guestLimit: Int = 0, banned: Bool = false) -> RoleTemplate {
        let stage = SubscribeParams(subscribeToRoles: ["host", "guest"])
        var roles = [
            Role(name: "host", priority: 1, publishParams: PublishParams(allowed: [.audio, .video, .screen]),
                 subscribeParams: stage,
                 permissions: Permissions(endRoom: true, removeOthers: true, mute: true, unmute: true, changeRole: true)),
            Role(name: "guest", priority: 2, maxPeerCount: guestLimit,
                 publishParams: PublishParams(allowed: [.audio, .video]), subscribeParams: stage),
            Role(name: "viewer", priority: 4, subscribeParams: stage),
            Role(name: "moderator", priority: 3,
                 subscribeParams: SubscribeParams(subscribeToRoles: ["host", "guest", "moderator"]),
                 permissions: Permissions(removeOthers: true, mute: true, unmute: true, changeRole: true)),
        ]
        if banned { roles.append(Role(name: "banned", priority: 5, maxPeerCount: -1)) }
        return RoleTemplate(name: "test", roles: roles, settings: settings)
    }

    static func registry(settings: Settings = Settings(), guestLimit: Int = 0, banned: Bool = false)
        -> (RoomRegistry, ManualClock)
    {
        let clock = ManualClock()
        let registry = RoomRegistry(template: template(settings: settings, guestLimit: guestLimit, banned: banned),
                                    clock: clock, ids: SequentialIDGenerator())
        return (registry, clock)
    }

    static func request(_ user: String, role: String, room: String = "r1", name: String? = nil,
                        viewOnly: Bool = false) -> JoinRequest {
        JoinRequest(roomID: room, userID: user, roleName: role, name: name ?? user, viewOnly: viewOnly)
    }
}

extension Delivery {
    /// Recipient peer ids, for assertions.
    var to: [String] { recipients.map(\.id) }
}
