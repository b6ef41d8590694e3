/// `publishParams` of a role: which kinds of track it may add, and encoding hints.
public struct PublishParams: Sendable, Equatable {
    /// In the template's order, without duplicates.
    public var allowed: [PublishKind]
    public var audio: AudioParams
    public var video: VideoParams
    public var screen: VideoParams

    public init(
        allowed: [PublishKind] = [],
        audio: AudioParams = AudioParams(),
        video: VideoParams = .defaultVideo,
        screen: VideoParams = .defaultScreen
    ) {
        self.allowed = allowed
        self.audio = audio
        self.video = video
        self.screen = screen
    }

    public func allows(_ kind: PublishKind) -> Bool { allowed.contains(kind) }

    public var canPublish: Bool { !allowed.isEmpty }
}

extension PublishParams {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        for (i, word) in try c.stringArray("allowed").enumerated() {
            guard let kind = PublishKind(rawValue: word) else {
                c.report(c.path("allowed", i), "unknown kind \"\(word)\", expected audio, video or screen")
                continue
            }
            guard !allowed.contains(kind) else {
                c.report(c.path("allowed", i), "duplicate kind \"\(word)\"")
                continue
            }
            allowed.append(kind)
        }
        audio = try c.object("audio", AudioParams.init) ?? audio
        video =
            try c.object("video") { c throws(TemplateError) in try VideoParams(c, defaults: .defaultVideo) } ?? video
        screen =
            try c.object("screen") { c throws(TemplateError) in try VideoParams(c, defaults: .defaultScreen) } ?? screen
    }
}
