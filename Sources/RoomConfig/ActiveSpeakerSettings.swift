/// `settings.active_speakers`
public struct ActiveSpeakerSettings: Sendable, Equatable {
    /// `interval_ms`, 100...60000.
    public var intervalMs: Int = 1000
    /// `threshold`, 0...100.
    public var threshold: Int = 35
    /// `max_speakers`, 1...100.
    public var maxSpeakers: Int = 5

    public init(intervalMs: Int = 1000, threshold: Int = 35, maxSpeakers: Int = 5) {
        self.intervalMs = intervalMs
        self.threshold = threshold
        self.maxSpeakers = maxSpeakers
    }
}

extension ActiveSpeakerSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        intervalMs = try c.int("interval_ms", default: intervalMs, in: 100...60000)
        threshold = try c.int("threshold", default: threshold, in: 0...100)
        maxSpeakers = try c.int("max_speakers", default: maxSpeakers, in: 1...100)
    }
}
