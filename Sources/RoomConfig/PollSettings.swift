/// `settings.polls`
public struct PollSettings: Sendable, Equatable {
    /// `max_polls`, 1...10000: polls per room session.
    public var maxPolls: Int = 100
    /// `stats_interval_ms`, 100...60000: at most one `on-poll-stats` per poll per interval.
    public var statsIntervalMs: Int = 1000

    public init(maxPolls: Int = 100, statsIntervalMs: Int = 1000) {
        self.maxPolls = maxPolls
        self.statsIntervalMs = statsIntervalMs
    }
}

extension PollSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        maxPolls = try c.int("max_polls", default: maxPolls, in: 1...10000)
        statsIntervalMs = try c.int("stats_interval_ms", default: statsIntervalMs, in: 100...60000)
    }
}
