/// `settings.stage` (1.3, PROTOCOL.md section 26): the call-in queue.
public struct StageSettings: Sendable, Equatable {
    /// `enabled`: false makes every stage call 40300.
    public var enabled = true
    /// `guest_role`: the role `stage-invite` invites to by default; must be a
    /// role of the template (a startup error otherwise, when given).
    public var guestRole = "guest"
    /// `max_waiting`, 1...10000: waiting requests a room takes (40907 beyond).
    public var maxWaiting = 1000
    /// `note_bytes`, 0...4096: the longest note (41300 beyond).
    public var noteBytes = 280
    /// `interval_ms`, 100...60000: at most one `on-stage-queue` per interval per room.
    public var intervalMs = 1000

    public init(
        enabled: Bool = true,
        guestRole: String = "guest",
        maxWaiting: Int = 1000,
        noteBytes: Int = 280,
        intervalMs: Int = 1000
    ) {
        self.enabled = enabled
        self.guestRole = guestRole
        self.maxWaiting = maxWaiting
        self.noteBytes = noteBytes
        self.intervalMs = intervalMs
    }
}

extension StageSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        enabled = try c.bool("enabled", default: enabled)
        guestRole = try c.string("guest_role", default: guestRole)
        maxWaiting = try c.int("max_waiting", default: maxWaiting, in: 1...10000)
        noteBytes = try c.int("note_bytes", default: noteBytes, in: 0...4096)
        intervalMs = try c.int("interval_ms", default: intervalMs, in: 100...60000)
    }
}
