/// `settings.feed` (1.2, PROTOCOL.md section 24): the audience feed over HTTP.
public struct FeedSettings: Sendable, Equatable {
    /// `window_s`, 10...3600: how far back the feed answers (older spans are
    /// 410), and how long an ended session's feed is kept.
    public var windowSeconds: Int = 300
    /// `public`: the feed needs no token.
    public var isPublic: Bool = false
    /// `builds_per_second`, 1...10000: bodies not yet cached built per room
    /// and second (a bucket of one second's worth); past it 429.
    public var buildsPerSecond: Int = 20
    /// `caller_builds_per_second`, 1...10000: the same per caller (a token's
    /// user, or the address when the feed is public); past it 429.
    public var callerBuildsPerSecond: Int = 4

    public init(
        windowSeconds: Int = 300,
        isPublic: Bool = false,
        buildsPerSecond: Int = 20,
        callerBuildsPerSecond: Int = 4
    ) {
        self.windowSeconds = windowSeconds
        self.isPublic = isPublic
        self.buildsPerSecond = buildsPerSecond
        self.callerBuildsPerSecond = callerBuildsPerSecond
    }
}

extension FeedSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        windowSeconds = try c.int("window_s", default: windowSeconds, in: 10...3600)
        isPublic = try c.bool("public", default: isPublic)
        buildsPerSecond = try c.int("builds_per_second", default: buildsPerSecond, in: 1...10000)
        callerBuildsPerSecond = try c.int("caller_builds_per_second", default: callerBuildsPerSecond, in: 1...10000)
    }
}
