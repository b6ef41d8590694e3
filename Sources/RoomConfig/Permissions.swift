/// `permissions` of a role, with the template's names. Absent means false,
/// except `updateOwnMetadata` (absent means true).
public struct Permissions: Sendable, Equatable {
    public var endRoom, removeOthers, mute, unmute, changeRole: Bool
    public var hlsStreaming, rtmpStreaming, browserRecording, pollRead, pollWrite: Bool
    /// 1.2: delete others' messages, clear and pin the chat, and (with the
    /// sections to come) chat bans, pause, slow mode, Q&A moderation, reports.
    public var moderateChat: Bool
    /// 1.3 (section 27): change one's own peer (`peer-update`,
    /// `peer-attributes-set`; not groups). True when the template omits it.
    public var updateOwnMetadata: Bool

    public init(
        endRoom: Bool = false,
        removeOthers: Bool = false,
        mute: Bool = false,
        unmute: Bool = false,
        changeRole: Bool = false,
        hlsStreaming: Bool = false,
        rtmpStreaming: Bool = false,
        browserRecording: Bool = false,
        pollRead: Bool = false,
        pollWrite: Bool = false,
        moderateChat: Bool = false,
        updateOwnMetadata: Bool = true
    ) {
        self.endRoom = endRoom
        self.removeOthers = removeOthers
        self.mute = mute
        self.unmute = unmute
        self.changeRole = changeRole
        self.hlsStreaming = hlsStreaming
        self.rtmpStreaming = rtmpStreaming
        self.browserRecording = browserRecording
        self.pollRead = pollRead
        self.pollWrite = pollWrite
        self.moderateChat = moderateChat
        self.updateOwnMetadata = updateOwnMetadata
    }

    /// Every permission granted.
    public static let all = Permissions(
        endRoom: true,
        removeOthers: true,
        mute: true,
        unmute: true,
        changeRole: true,
        hlsStreaming: true,
        rtmpStreaming: true,
        browserRecording: true,
        pollRead: true,
        pollWrite: true,
        moderateChat: true,
        updateOwnMetadata: true
    )

    /// The JSON names, in declaration order.
    public static let names: [String] = fields.map(\.name)

    /// The permission called `name` in the template, nil for an unknown name.
    public subscript(name: String) -> Bool? {
        Self.fields.first { $0.name == name }.map { self[keyPath: $0.key] }
    }

    static let fields: [(name: String, key: any WritableKeyPath<Permissions, Bool> & Sendable)] = [
        ("endRoom", \.endRoom), ("removeOthers", \.removeOthers), ("mute", \.mute), ("unmute", \.unmute),
        ("changeRole", \.changeRole), ("hlsStreaming", \.hlsStreaming), ("rtmpStreaming", \.rtmpStreaming),
        ("browserRecording", \.browserRecording), ("pollRead", \.pollRead), ("pollWrite", \.pollWrite),
        ("moderateChat", \.moderateChat), ("updateOwnMetadata", \.updateOwnMetadata),
    ]

    /// The permissions a template that omits them grants.
    static let grantedByDefault: Set<String> = ["updateOwnMetadata"]
}

extension Permissions {
    /// Unknown permission names are left unread, so they become warnings.
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        for (name, key) in Self.fields {
            self[keyPath: key] = try c.bool(name, default: Self.grantedByDefault.contains(name))
        }
    }
}
