import RoomCollections
import RoomProtocol

/// Which user reported which target in a room session (1.2, PROTOCOL.md
/// section 22): one report per user per target, a repeat is accepted and
/// ignored. Bounded: the newest `capacity` (user, target) pairs are kept;
/// past it the oldest is forgotten (a repeat of it would be a new report).
/// Not in the snapshot: after a takeover a repeat is a new report.
struct ReportLog: Sendable, Equatable {
    static let capacity = 10_000

    /// (user, target) → the report's id.
    private var seen: [String: String] = [:]
    private var order = FIFO<String>()

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

    private static func key(_ user: UserID, _ target: ReportTarget) -> String {
        "\(user)\u{0}\(target.type.rawValue)\u{0}\(target.id)"
    }
}

/// One report as moderators get it (`on-report`) and the webhook carries it.
public struct Report: Sendable, Equatable {
    public var id: String
    public var target: ReportTarget
    public var reason: String
    public var reportedBy: ActorRef
    public var at: Int64
}
