/// `settings.webhooks` (1.1, PROTOCOL.md section 17). Absent: no webhooks.
public struct WebhookSettings: Sendable, Equatable {
    /// `url` (required): where each event is POSTed, an http(s) URL.
    public var url: String
    /// `events`: the event names sent (default all of them).
    public var events: [WebhookEventKind] = WebhookEventKind.allCases
    /// `timeout_ms`, 100...600000: one attempt's deadline, for all of it (connect, send,
    /// the answer's head and body).
    public var timeoutMs: Int = 5000
    /// `max_attempts`, in `maxAttemptsRange`.
    public var maxAttempts: Int = 6
    /// `queue_limit`, 1...1000000: waiting events; a full queue drops the oldest.
    public var queueLimit: Int = 10000

    /// What `max_attempts` may be: 1...12. The waits between attempts double from
    /// 1 s and are capped at 5 minutes (PROTOCOL.md section 17), so 12 attempts wait
    /// at most 1 + 2 + … + 256 + 300 + 300 s ≈ 18.5 minutes in all (± 10 %), holding
    /// back the room's later events that long; more attempts would add 5 minutes
    /// each (20 used to wait 2^18 s before the last).
    public static let maxAttemptsRange = 1...12

    public init(
        url: String,
        events: [WebhookEventKind] = WebhookEventKind.allCases,
        timeoutMs: Int = 5000,
        maxAttempts: Int = 6,
        queueLimit: Int = 10000
    ) {
        self.url = url
        self.events = events
        self.timeoutMs = timeoutMs
        self.maxAttempts = maxAttempts
        self.queueLimit = queueLimit
    }
}

extension WebhookSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        // Problems are reported and reading goes on, so that one run lists them all.
        self.init(url: try c.endpointURL(what: "the receiver's http(s) URL"))
        if let events = try c.eventList(WebhookEventKind.self) { self.events = events }
        timeoutMs = try c.int("timeout_ms", default: timeoutMs, in: 100...600_000)
        maxAttempts = try c.int("max_attempts", default: maxAttempts, in: Self.maxAttemptsRange)
        queueLimit = try c.int("queue_limit", default: queueLimit, in: 1...1_000_000)
    }
}
