import RoomProtocol
import RoomWire

/// The `moderation` section of a `RoomSnapshot` (format 2, 1.2 section 22):
///
///     {"paused", "slow_mode_s",
///      "bans":[{"user_id", "until": ms|null, "reason", "banned_by": ActorRef}],
///      "chat_bans":[{"user_id", "until": ms|null, "shadow"?: true, "banned_by"?: ActorRef}],
///      "reports"?: [Report…]}
///
/// Bans and chat bans in the order they were made, all of them (1.3: nothing
/// is cut; `RoomBans.capacity` bounds them).
/// `reports` (1.3, absent when none): the kept reports, oldest first, as
/// `{"report_id", "target":{"type","id"}, "reason", "reported_by": ActorRef,
/// "at", "status", "resolved_by": ActorRef|null, "resolved_at", "note"}`.
/// Slow-mode clocks and the older (user, target) pairs of the report log are
/// not saved: after a takeover each user may send one message to everyone
/// at once, and a repeat of such a report is a new one. A snapshot without `moderation` (saved before it) restores a
/// room without bans.
public struct ModerationSnapshot: Sendable, Equatable {
    public var paused = false
    public var slowModeSeconds = 0
    public var bans: [RoomBans.Ban] = []
    public var chatBans: [ChatControls.ChatBan] = []
    public var reports: [Report] = []

    public init() {}
}

extension JSONWriter {
    /// The `moderation` section.
    mutating func moderationSection(_ m: ModerationSnapshot) {
        beginObject()
        field("paused", m.paused)
        field("slow_mode_s", m.slowModeSeconds)
        key("bans")
        beginArray()
        for ban in m.bans {
            beginObject()
            field("user_id", ban.userID)
            nullable("until", ban.until)
            field("reason", ban.reason)
            key("banned_by")
            actor(ban.bannedBy)
            endObject()
        }
        endArray()
        key("chat_bans")
        beginArray()
        for ban in m.chatBans {
            beginObject()
            field("user_id", ban.userID)
            nullable("until", ban.until)
            if ban.shadow { field("shadow", true) }  // absent: false (1.3)
            if ban.bannedBy != .server {  // absent: the server (REST, and every chat ban saved before 1.3)
                key("banned_by")
                actor(ban.bannedBy)
            }
            endObject()
        }
        endArray()
        if !m.reports.isEmpty {
            key("reports")
            beginArray()
            for report in m.reports {
                beginObject()
                field("report_id", report.id)
                key("target")
                report.target.encode(into: &self)
                field("reason", report.reason)
                key("reported_by")
                actor(report.reportedBy)
                field("at", report.at)
                field("status", report.status.rawValue)
                key("resolved_by")
                actor(report.resolvedBy)
                nullable("resolved_at", report.resolvedAt)
                nullable("note", report.note)
                endObject()
            }
            endArray()
        }
        endObject()
    }
}

extension ModerationSnapshot {
    init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        paused = try r.bool("paused")
        slowModeSeconds = try r.int("slow_mode_s")
        if !ChatControls.slowModeRange.contains(slowModeSeconds) {
            throw r.failure("slow_mode_s", "expected 0 to 3600, got \(slowModeSeconds)")
        }
        var users: Set<UserID> = []
        bans = try r.objects("bans") { b throws(RoomSnapshotError) in
            let user: UserID = try b.id("user_id")
            if !users.insert(user).inserted { throw b.failure("user_id", "duplicate ban of \"\(user)\"") }
            return RoomBans.Ban(
                userID: user,
                until: try b.nullable("until", b.int64),
                reason: try b.string("reason"),
                bannedBy: try b.object("banned_by", ActorRef.init),
                serial: 0
            )
        }
        users = []
        chatBans = try r.objects("chat_bans") { b throws(RoomSnapshotError) in
            let user: UserID = try b.id("user_id")
            if !users.insert(user).inserted { throw b.failure("user_id", "duplicate chat ban of \"\(user)\"") }
            return ChatControls.ChatBan(
                userID: user,
                until: try b.nullable("until", b.int64),
                shadow: b.has("shadow") ? try b.bool("shadow") : false,
                bannedBy: b.has("banned_by") ? try b.object("banned_by", ActorRef.init) : .server,
                serial: 0
            )
        }
        if r.has("reports") {
            reports = try r.objects("reports") { b throws(RoomSnapshotError) in
                let target = try b.object("target") { t throws(RoomSnapshotError) in
                    let kind = try t.string("type")
                    guard let type = ReportTarget.Kind(rawValue: kind) else {
                        throw t.failure("type", "expected message, question or peer, got \"\(kind)\"")
                    }
                    return ReportTarget(type, try t.string("id"))
                }
                let status = try b.string("status")
                guard let parsed = ReportStatus(rawValue: status) else {
                    throw b.failure("status", "expected open or resolved, got \"\(status)\"")
                }
                return Report(
                    id: try b.string("report_id"),
                    target: target,
                    reason: try b.string("reason"),
                    reportedBy: try b.object("reported_by", ActorRef.init),
                    at: try b.int64("at"),
                    status: parsed,
                    resolvedBy: try b.nullable("resolved_by") { k throws(RoomSnapshotError) in
                        try b.object(k, ActorRef.init)
                    },
                    resolvedAt: try b.nullable("resolved_at", b.int64),
                    note: try b.nullable("note", b.string)
                )
            }
            if reports.count > ReportLog.keptCapacity {
                throw r.failure("reports", "at most \(ReportLog.keptCapacity), got \(reports.count)")
            }
        }
    }
}

extension RoomRegistry {
    /// A room's moderation state as saved: what is in force now, oldest first.
    func moderationSnapshot(_ room: Room) -> ModerationSnapshot {
        let now = clock.nowMillis()
        var m = ModerationSnapshot()
        m.paused = room.chatControls.paused
        m.slowModeSeconds = room.chatControls.slowModeSeconds
        m.bans = room.bans.all(now: now)
        m.chatBans = room.chatControls.allChatBans.filter { ($0.until ?? .max) > now }
        m.reports = room.reports.all
        return m
    }
}
