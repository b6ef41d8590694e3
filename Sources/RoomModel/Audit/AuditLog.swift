import RoomCollections
import RoomProtocol
import RoomWire

/// What a moderation act was (PROTOCOL.md section 32): an audit entry's `action`.
public enum AuditAction: String, Sendable, CaseIterable {
    case peerBan = "peer.ban"
    case peerUnban = "peer.unban"
    case chatBan = "chat.ban"
    case chatUnban = "chat.unban"
    case messageDelete = "message.delete"
    case chatClear = "chat.clear"
    case messagePin = "message.pin"
    case chatState = "chat.state"
    case messageApprove = "message.approve"
    case messageReject = "message.reject"
    case reportResolve = "report.resolve"
    case peerRemove = "peer.remove"
    case roleForce = "role.force"
    case trackMute = "track.mute"
    case roomEnd = "room.end"
    case roomLock = "room.lock"
    case roomUnlock = "room.unlock"
    case stageInvite = "stage.invite"
    case stageDecline = "stage.decline"
    case stageBlock = "stage.block"
    case stageUnblock = "stage.unblock"
    case hookDeny = "hook.deny"
}

/// Who did it: a peer as it was at that moment, the REST API, or a hook.
public enum AuditActor: Sendable, Equatable {
    case peer(PeerRef)
    case rest
    case hook
}

/// One entry, encoded once when it is recorded: `{seq, at, actor, action,
/// target, details}` (its bytes are what every read and the saved state carry).
public struct AuditEntry: Sendable, Equatable {
    public let seq: Int
    public let at: Int64
    public let bytes: [UInt8]
}

/// A page of a session's audit log: entries oldest first; `next` is the
/// `seq` to pass as `after` for the rest, nil at the end.
public struct AuditPage: Sendable {
    public let entries: [AuditEntry]
    public let next: Int?
}

/// A room session's audit log (PROTOCOL.md section 32): at most
/// `maxEntries` entries, oldest out first; `seq` grows by 1 per entry
/// within the session. Each entry is bounded: a string in `target` or
/// `details` keeps its first `maxStringCharacters` characters, an array its
/// first `maxArrayItems` items, a nested object becomes its compact text cut
/// the same way; an entry still over `maxEntryBytes` loses its `details`
/// (replaced by `{"cut": true}`). Kept with the session like its feed's
/// record (`FeedRecorders`): readable after the session ended, for as long.
public final class AuditLog {
    public static let maxEntries = 10_000
    public static let maxEntryBytes = 2048
    public static let maxStringCharacters = 256
    public static let maxArrayItems = 16

    private var entries = FIFO<AuditEntry>()
    /// The seq of the newest entry (0 before the first).
    public private(set) var lastSeq = 0
    let capacity: Int

    public init(capacity: Int = AuditLog.maxEntries) {
        self.capacity = max(1, capacity)
    }

    public var count: Int { entries.count }
    /// The oldest entry's seq, nil when empty.
    public var firstSeq: Int? { entries.first?.seq }

    /// Records one entry; returns it.
    @discardableResult
    public func record(
        at: Int64,
        actor: AuditActor,
        action: AuditAction,
        target: [JSON.Member],
        details: [JSON.Member]
    ) -> AuditEntry {
        lastSeq += 1
        var bytes = Self.encode(
            seq: lastSeq,
            at: at,
            actor: actor,
            action: action,
            target: target.map(Self.bounded),
            details: details.map(Self.bounded)
        )
        if bytes.count > Self.maxEntryBytes {
            bytes = Self.encode(
                seq: lastSeq,
                at: at,
                actor: actor,
                action: action,
                target: target.map(Self.bounded),
                details: [JSON.Member("cut", .bool(true))]
            )
        }
        let entry = AuditEntry(seq: lastSeq, at: at, bytes: bytes)
        append(entry)
        return entry
    }

    private func append(_ entry: AuditEntry) {
        entries.append(entry)
        if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
    }

    /// The entries after seq `after` (nil: from the oldest), at most `limit`,
    /// and within `maxBytes` of entry bytes (at least one entry). O(page).
    public func page(after: Int?, limit: Int, maxBytes: Int) -> AuditPage {
        guard let first = entries.first?.seq else { return AuditPage(entries: [], next: nil) }
        var index = max(0, (after ?? 0) - first + 1)
        var out: [AuditEntry] = []
        var bytes = 0
        while index < entries.count, out.count < max(1, limit) {
            let entry = entries[index]
            if !out.isEmpty, bytes + entry.bytes.count > maxBytes { break }
            bytes += entry.bytes.count
            out.append(entry)
            index += 1
        }
        let next = index < entries.count ? out.last?.seq ?? after : nil
        return AuditPage(entries: out, next: next)
    }

    /// Every entry, oldest first (the saved state).
    public var all: [AuditEntry] { Array(entries) }

    /// A log restored from the saved state (`AuditSnapshot`).
    init(restoring saved: AuditSnapshot, capacity: Int = AuditLog.maxEntries) {
        self.capacity = max(1, capacity)
        lastSeq = saved.lastSeq
        for entry in saved.entries { append(entry) }
    }

    // MARK: encoding

    static func encode(
        seq: Int,
        at: Int64,
        actor: AuditActor,
        action: AuditAction,
        target: [JSON.Member],
        details: [JSON.Member]
    ) -> [UInt8] {
        var w = JSONWriter(reserving: 256)
        w.beginObject()
        w.field("seq", seq)
        w.field("at", at)
        w.key("actor")
        switch actor {
        case .peer(let ref): ref.encode(into: &w)
        case .rest: w.value(["type": "rest"])
        case .hook: w.value(["type": "hook"])
        }
        w.field("action", action.rawValue)
        w.key("target")
        w.value(.object(target))
        w.key("details")
        w.value(.object(details))
        w.endObject()
        return w.bytes
    }

    /// A member with its value bounded (strings, arrays, nested objects).
    static func bounded(_ member: JSON.Member) -> JSON.Member {
        JSON.Member(String(member.key.prefix(64)), bounded(member.value))
    }

    static func bounded(_ value: JSON) -> JSON {
        switch value {
        case .string(let s): .string(String(s.prefix(maxStringCharacters)))
        case .array(let items): .array(items.prefix(maxArrayItems).map(bounded))
        case .object: .string(String(value.text.prefix(maxStringCharacters)))
        default: value
        }
    }
}

/// What `auditPage(_:session:after:limit:maxBytes:)` finds.
public enum AuditLookup: Sendable {
    case page(sessionID: String, AuditPage)
    /// No such session held (404, 40001).
    case noSession
}

/// The audit log (PROTOCOL.md section 32): the registry's side. The server
/// records the acts (one table per side, RoomServer/Audit/); a hook's
/// denial comes through `auditHookDenial`.
extension RoomRegistry {
    /// Records an entry in a session's log (also after that session ended:
    /// the caller took the log before the act).
    @discardableResult
    public func recordAudit(
        in log: AuditLog,
        actor: AuditActor,
        action: AuditAction,
        target: [JSON.Member],
        details: [JSON.Member] = []
    ) -> AuditEntry {
        log.record(at: clock.nowMillis(), actor: actor, action: action, target: target, details: details)
    }

    /// The log an act on `roomID` goes to: its live session's, else its
    /// latest ended session's still held (an unlock after the end), else nil.
    public func auditLog(of roomID: RoomID) -> AuditLog? {
        if let live = rooms[roomID] { return live.audit }
        return feeds.byRoom[roomID]?.last?.audit
    }

    /// A synchronous hook denied something (section 30): actor `{"type":"hook"}`,
    /// `target` the peer and/or user it was about, `details` `{type, reason}`.
    /// Recorded only while the room has a session (a denied first join has none).
    public func auditHookDenial(
        in roomID: RoomID,
        peerID: PeerID?,
        userID: UserID?,
        type: String,
        reason: String
    ) {
        guard let room = rooms[roomID] else { return }
        var target: [JSON.Member] = []
        if let peerID { target.append(JSON.Member("peer_id", .string(peerID.rawValue))) }
        if let userID { target.append(JSON.Member("user_id", .string(userID.rawValue))) }
        recordAudit(
            in: room.audit,
            actor: .hook,
            action: .hookDeny,
            target: target,
            details: [JSON.Member("type", .string(type)), JSON.Member("reason", .string(reason))]
        )
    }

    /// A page of the audit log of `roomID`'s session `sessionID`; without
    /// one, the current session, else the latest ended one still held.
    public func auditPage(
        _ roomID: RoomID,
        session sessionID: String?,
        after: Int?,
        limit: Int,
        maxBytes: Int
    ) -> AuditLookup {
        feeds.sweep(now: clock.nowMillis())
        let log: (String, AuditLog)?
        if let sessionID {
            if let live = rooms[roomID], live.sessionID == sessionID {
                log = (sessionID, live.audit)
            } else {
                log = feeds.byRoom[roomID]?.last { $0.sessionID == sessionID }.flatMap { r in
                    r.audit.map { (r.sessionID, $0) }
                }
            }
        } else if let live = rooms[roomID] {
            log = (live.sessionID, live.audit)
        } else {
            log = feeds.byRoom[roomID]?.last.flatMap { r in r.audit.map { (r.sessionID, $0) } }
        }
        guard let (id, audit) = log else { return .noSession }
        return .page(sessionID: id, audit.page(after: after, limit: limit, maxBytes: maxBytes))
    }
}

extension RoomRegistry {
    /// `audit-list`: the caller's session log; needs a moderating role
    /// (`changeRole` or `removeOthers`) or `moderateChat` (else 40300).
    public func auditPage(by peer: Peer, after: Int?, limit: Int, maxBytes: Int) throws(RoomError) -> AuditPage {
        let permissions = peer.role.permissions
        guard Self.moderates(peer.role) || permissions.moderateChat else {
            throw RoomError(
                .permissionDenied,
                "permission denied: audit-list needs a moderating role (changeRole or removeOthers) or moderateChat"
            )
        }
        return peer.room.audit.page(after: after, limit: limit, maxBytes: maxBytes)
    }
}
