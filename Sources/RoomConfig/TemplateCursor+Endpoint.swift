/// What `settings.webhooks` and `settings.hooks` read alike: the backend's
/// URL and the list of events it gets.
extension TemplateCursor {
    /// The required `url`: an http(s) URL of at most 2048 bytes (`what` names
    /// it in the "required" problem). Problems are reported and reading goes on.
    func endpointURL(what: String) throws(TemplateError) -> String {
        let given = keys.contains("url")
        let reported = problems.errors.count
        let url = try string("url", default: "")
        let wrongType = problems.errors.count > reported  // already reported by the cursor
        if !given {
            report(path("url"), "required: \(what)")
        } else if !wrongType, url.utf8.count > 2048 || WebURL(url) == nil {
            report(path("url"), "expected an http(s) URL of at most 2048 bytes, got \"\(url)\"")
        }
        return url
    }

    /// `events` when given: each a known name (an unknown one is reported),
    /// repeats dropped; nil when absent (the setting's default).
    func eventList<Event: RawRepresentable & CaseIterable & Equatable>(
        _ type: Event.Type
    ) throws(TemplateError) -> [Event]? where Event.RawValue == String {
        guard keys.contains("events") else { return nil }
        var kinds: [Event] = []
        for (i, name) in try stringArray("events").enumerated() {
            guard let kind = Event(rawValue: name) else {
                report(
                    path("events", i),
                    "unknown event \"\(name)\", expected one of "
                        + Event.allCases.map(\.rawValue).joined(separator: ", ")
                )
                continue
            }
            if !kinds.contains(kind) { kinds.append(kind) }
        }
        return kinds
    }
}
