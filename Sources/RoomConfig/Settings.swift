/// The template's `settings` object: daemon tunables, grouped as in the JSON.
public struct Settings: Sendable, Equatable {
    /// `room`
    public var room = RoomSettings()
    /// `active_speakers`
    public var activeSpeakers = ActiveSpeakerSettings()
    /// `role_change`
    public var roleChange = RoleChangeSettings()
    /// `limits`
    public var limits = LimitSettings()
    /// `polls`
    public var polls = PollSettings()
    /// `chat` (1.2, ChatSettings.swift)
    public var chat = ChatSettings()
    /// `qa` (1.2, QASettings.swift)
    public var qa = QASettings()
    /// `reactions` (1.2, ReactionSettings.swift)
    public var reactions = ReactionSettings()
    /// `stage` (1.3, StageSettings.swift)
    public var stage = StageSettings()
    /// `feed` (1.2, FeedSettings.swift)
    public var feed = FeedSettings()
    /// `hls` (1.1, HLSSettings.swift)
    public var hls = HLSSettings()
    /// `webhooks` (1.1, WebhookSettings.swift): nil when absent (no webhooks).
    public var webhooks: WebhookSettings?
    /// `hooks` (1.3, HookSettings.swift): nil when absent (no hooks).
    public var hooks: HookSettings?
    /// `cluster` (1.1, section 18)
    public var cluster = ClusterSettings()
    /// `admin` (1.3, AdminSettings.swift): the console at /admin/.
    public var admin = AdminSettings()

    public init(
        room: RoomSettings = RoomSettings(),
        activeSpeakers: ActiveSpeakerSettings = ActiveSpeakerSettings(),
        roleChange: RoleChangeSettings = RoleChangeSettings(),
        limits: LimitSettings = LimitSettings(),
        polls: PollSettings = PollSettings(),
        cluster: ClusterSettings = ClusterSettings()
    ) {
        self.room = room
        self.activeSpeakers = activeSpeakers
        self.roleChange = roleChange
        self.limits = limits
        self.polls = polls
        self.cluster = cluster
    }
}

// Reading from the template; absent fields keep their defaults.
extension Settings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        room = try c.object("room", RoomSettings.init) ?? room
        activeSpeakers = try c.object("active_speakers", ActiveSpeakerSettings.init) ?? activeSpeakers
        roleChange = try c.object("role_change", RoleChangeSettings.init) ?? roleChange
        limits = try c.object("limits", LimitSettings.init) ?? limits
        polls = try c.object("polls", PollSettings.init) ?? polls
        chat = try c.object("chat", ChatSettings.init) ?? chat
        qa = try c.object("qa", QASettings.init) ?? qa
        reactions = try c.object("reactions", ReactionSettings.init) ?? reactions
        stage = try c.object("stage", StageSettings.init) ?? stage
        feed = try c.object("feed", FeedSettings.init) ?? feed
        hls = try c.object("hls", HLSSettings.init) ?? hls
        webhooks = try c.object("webhooks", WebhookSettings.init)
        hooks = try c.object("hooks", HookSettings.init)
        cluster = try c.object("cluster", ClusterSettings.init) ?? cluster
        admin = try c.object("admin", AdminSettings.init) ?? admin
    }
}
