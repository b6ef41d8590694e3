/// `settings.hooks` (1.3, PROTOCOL.md section 30). Absent: no hooks.
public struct HookSettings: Sendable, Equatable {
    /// The calls a hook decides on: `join`, `message` (`broadcast`), `question`
    /// (`question-add`), `stage-request`.
    public enum Event: String, Sendable, CaseIterable {
        case join
        case message
        case question
        case stageRequest = "stage-request"
    }

    /// What a failed hook does: go on as without a hook, or answer 5004.
    public enum OnError: String, Sendable {
        case allow
        case deny
    }

    /// `url` (required): where each hooked call is POSTed, an http(s) URL.
    public var url: String
    /// `events` (default all four).
    public var events: [Event] = Event.allCases
    /// `timeout_ms`, in `timeoutRange`: the whole exchange, connecting to the last byte of the answer.
    public var timeoutMs: Int = 1000
    /// `on_error` (default `allow`).
    public var onError: OnError = .allow

    /// What `timeout_ms` may be: 50...5000.
    public static let timeoutRange = 50...5000

    public init(url: String, events: [Event] = Event.allCases, timeoutMs: Int = 1000, onError: OnError = .allow) {
        self.url = url
        self.events = events
        self.timeoutMs = timeoutMs
        self.onError = onError
    }

    /// Whether calls of `event` go through the hook.
    public func covers(_ event: Event) -> Bool { events.contains(event) }
}

extension HookSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        // Problems are reported and reading goes on, so that one run lists them all.
        self.init(url: try c.endpointURL(what: "the hook's http(s) URL"))
        if let events = try c.eventList(Event.self) { self.events = events }
        timeoutMs = try c.int("timeout_ms", default: timeoutMs, in: Self.timeoutRange)
        let onError = try c.string("on_error", default: self.onError.rawValue)
        if let value = OnError(rawValue: onError) {
            self.onError = value
        } else {
            c.report(c.path("on_error"), "expected \"allow\" or \"deny\", got \"\(onError)\"")
        }
    }
}
