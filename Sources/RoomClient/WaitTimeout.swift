import RoomWire
import Synchronization

/// What a wait that ran out of time was waiting for, and what was queued
/// instead: the payload of ``RoomClientError/timeout(_:)``.
///
/// Its ``description`` is the line a failing test shows, e.g.
///
/// ```text
/// GuestTests.swift:42: timed out after 5 s waiting for on-role-change-request;
/// 2 pushes queued: on-peer-update {"peer":{"peer_id":"p2","name":"Ada",…}, on-broadcast {…}
/// ```
public struct WaitTimeout: Sendable, Equatable, CustomStringConvertible {
    /// What was awaited, e.g. `on-peer-join`, `on-peer-update where <description>`,
    /// `the answer to join`, `a push (any)`, `the connection to close`.
    public var waitedFor: String
    /// How long the wait lasted.
    public var timeout: Duration
    /// The pushes (and other inbox entries) still queued when it gave up, oldest
    /// first, each as its method and a short excerpt of its params
    /// (``summary(of:)``); at most ``queuedLimit``, `queuedCount` says how many there were.
    public var queued: [String]
    /// How many entries the inbox held.
    public var queuedCount: Int
    /// Where the waiting call was made (`#fileID`, `#filePath`, `#line`,
    /// `#column` of the caller); nil for waits inside the typed methods.
    public var fileID: String?
    public var filePath: String?
    public var line: Int?
    public var column: Int?

    /// At most this many queued entries are listed.
    public static let queuedLimit = 10

    public init(
        waitedFor: String,
        timeout: Duration,
        queued: [String] = [],
        queuedCount: Int? = nil,
        fileID: String? = nil,
        filePath: String? = nil,
        line: Int? = nil,
        column: Int? = nil
    ) {
        self.waitedFor = waitedFor
        self.timeout = timeout
        self.queued = queued
        self.queuedCount = queuedCount ?? queued.count
        self.fileID = fileID
        self.filePath = filePath
        self.line = line
        self.column = column
    }

    public var description: String {
        var text = ""
        if let fileID, let line { text += "\(fileID.split(separator: "/").last ?? Substring(fileID)):\(line): " }
        text += "timed out after \(Self.format(timeout)) waiting for \(waitedFor); "
        if queuedCount == 0 {
            text += "nothing queued"
        } else {
            text += "\(queuedCount) \(queuedCount == 1 ? "entry" : "entries") queued: " + queued.joined(separator: ", ")
            if queuedCount > queued.count { text += ", … \(queuedCount - queued.count) more" }
        }
        return text
    }

    /// One inbox entry in a line: a push as `method {params excerpt}`, a
    /// response as `response id=N {…}`, anything else as its JSON excerpt.
    /// Excerpts are cut at 80 characters.
    public static func summary(of entry: JSON) -> String {
        if case .object = entry, let method = entry["method"]?.stringValue {
            return method + " " + excerpt(entry["params"] ?? .object([]))
        }
        if case .object = entry, let id = entry["id"] {
            return "response id=\(id.text) " + excerpt(entry)
        }
        if case .string(let text) = entry { return "text " + excerpt(.string(text)) }
        return excerpt(entry)
    }

    static func excerpt(_ json: JSON) -> String {
        let text = json.text
        return text.count <= 80 ? text : String(text.prefix(79)) + "…"
    }

    static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let ms = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return ms % 1000 == 0 ? "\(ms / 1000) s" : "\(ms) ms"
    }

    // MARK: - Reporting

    private static let reporter = Mutex<(@Sendable (WaitTimeout) -> Void)?>(nil)

    /// Installs a function that sees every ``WaitTimeout`` just before it is
    /// thrown, on the task that waited (its task-local values, such as Swift
    /// Testing's current test, are those of the waiting task). RoomdTesting
    /// installs one that records a Swift Testing warning at the waiting line
    /// (``fileID``/``line``); nil removes it.
    public static func setReporter(_ reporter: (@Sendable (WaitTimeout) -> Void)?) {
        self.reporter.withLock { $0 = reporter }
    }

    static func report(_ timeout: WaitTimeout) {
        reporter.withLock { $0 }?(timeout)
    }
}

/// Where a wait was called from (the caller's `#fileID`, `#filePath`, `#line`, `#column`).
struct WaitSite: Sendable {
    var what: String
    var fileID: String?
    var filePath: String?
    var line: Int?
    var column: Int?

    init(_ what: String, fileID: String? = nil, filePath: String? = nil, line: Int? = nil, column: Int? = nil) {
        self.what = what
        self.fileID = fileID
        self.filePath = filePath
        self.line = line
        self.column = column
    }
}
