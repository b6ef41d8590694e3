/// `settings.feed` (1.2, PROTOCOL.md section 24): the audience feed over HTTP.
public struct FeedSettings: Sendable, Equatable {
    /// `window_s`, 10...3600: how far back the feed answers (older spans are
    /// 410), and how long an ended session's feed is kept.
    public var windowSeconds: Int = 300
    /// `public`: the feed needs no token.
    public var isPublic: Bool = false

    public init(windowSeconds: Int = 300, isPublic: Bool = false) {
        self.windowSeconds = windowSeconds
        self.isPublic = isPublic
    }
}

extension FeedSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        windowSeconds = try c.int("window_s", default: windowSeconds, in: 10...3600)
        isPublic = try c.bool("public", default: isPublic)
    }
}
