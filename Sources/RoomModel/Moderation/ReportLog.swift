import RoomCollections
import RoomProtocol

/// The reports of a room session (1.2 and 1.3, PROTOCOL.md sections 22 and
/// 32): which user reported which target (one report per user per target,
/// a repeat is accepted and ignored), and the reports themselves with their
/// status, for `GET …/reports` and `report-resolve`. Bounded: the newest
/// `capacity` (user, target) pairs are kept (past it the oldest is
/// forgotten: a repeat of it would be a new report), and the newest
/// `keptCapacity` reports (past it the oldest goes, open or resolved).
/// Saved in the snapshot: the kept reports (and from them the pairs they
/// name); the older pairs are not, so after a takeover a repeat of one of
/// those is a new report.
struct ReportLog: Sendable, Equatable {
    static let capacity = 10_000
    /// The most reports a room session keeps.
    static let keptCapacity = 1000

    /// (user, target) → the report's id.
    private var seen: [String: String] = [:]
    private var order = FIFO<String>()
    /// The kept reports by id, and their ids oldest first.
    private var kept: [String: Report] = [:]
    private var keptOrder: [String] = []

    var count: Int { seen.count }

    /// The id of `user`'s earlier report of `target`, if it made one.
    func earlier(user: UserID, target: ReportTarget) -> String? { seen[Self.key(user, target)] }

    /// Records that `user` reported `target` as report `id`.
    mutating func insert(user: UserID, target: ReportTarget, id: String) {
        let key = Self.key(user, target)
        guard seen.updateValue(id, forKey: key) == nil else { return }
        order.append(key)
        if seen.count > Self.capacity { seen.removeValue(forKey: order.removeFirst()) }
    }

    /// Keeps `report` (and records its user and target when it names a user).
    mutating func add(_ report: Report) {
        if let user = report.reportedBy.userID { insert(user: UserID(user), target: report.target, id: report.id) }
        if kept.updateValue(report, forKey: report.id) == nil { keptOrder.append(report.id) }
        if keptOrder.count > Self.keptCapacity { kept.removeValue(forKey: keptOrder.removeFirst()) }
    }

    /// The kept report `id`.
    func report(_ id: String) -> Report? { kept[id] }

    /// Replaces the kept report of the same id (nothing when it is not kept).
    mutating func update(_ report: Report) {
        if kept[report.id] != nil { kept[report.id] = report }
    }

    /// The kept reports, oldest first.
    var all: [Report] { keptOrder.compactMap { kept[$0] } }

    private static func key(_ user: UserID, _ target: ReportTarget) -> String {
        "\(user)\u{0}\(target.type.rawValue)\u{0}\(target.id)"
    }
}

/// One report as moderators get it (`on-report`, `on-report-update`, REST
/// `GET …/reports`) and the webhook carries it.
public struct Report: Sendable, Equatable {
    public var id: String
    public var target: ReportTarget
    public var reason: String
    public var reportedBy: ActorRef
    public var at: Int64
    public var status: ReportStatus = .open
    /// Who resolved it, when, and the note it left (1.3, `report-resolve`).
    public var resolvedBy: ActorRef? = nil
    public var resolvedAt: Int64? = nil
    public var note: String? = nil
}
