import RoomProtocol
import RoomWire

/// A request to come on stage (PROTOCOL.md section 26): the wire's
/// StageRequest `{request_id, peer, user_id, note, status, requested_at,
/// updated_at, position, invited_by, role}`, and what the server keeps
/// beside it (the peer's id, the open invitation's token and end, the
/// request's rank among those made in the same millisecond).
public struct StageRequest: Sendable, Equatable {
    public typealias Status = StageStatus

    public let id: String
    /// The peer that made the latest `stage-request` call of the user, as it
    /// is at the request's latest change.
    public internal(set) var peer: ActorRef
    public internal(set) var peerID: PeerID
    public let userID: UserID
    public internal(set) var note: String
    public internal(set) var status: Status
    public let requestedAt: Int64
    public internal(set) var updatedAt: Int64
    public internal(set) var invitedBy: ActorRef?
    /// The role it was invited to (nil until invited).
    public internal(set) var role: String?
    /// The 1-based rank among waiting requests, filled in on the copies the
    /// queue hands out (`StageQueue.withPosition`); nil when not waiting.
    public internal(set) var position: Int?
    /// Orders requests made in the same millisecond (the queue's counter).
    let sequence: Int
    /// The open invitation's polite role-change token (never saved: a
    /// token may be lost with its home) and when it expires.
    var token: String?
    var invitationEndsAt: Int64?
    /// A restored invitation's `StageInvitationEnd` (its token is gone).
    var invitationEntry: DeadlineID?

    init(
        id: String,
        peer: ActorRef,
        peerID: PeerID,
        userID: UserID,
        note: String,
        status: Status = .waiting,
        requestedAt: Int64,
        updatedAt: Int64,
        sequence: Int
    ) {
        self.id = id
        self.peer = peer
        self.peerID = peerID
        self.userID = userID
        self.note = note
        self.status = status
        self.requestedAt = requestedAt
        self.updatedAt = updatedAt
        self.sequence = sequence
    }

    /// Equal as saved and sent: the token and deadline of an open
    /// invitation (never saved) do not count.
    public static func == (a: StageRequest, b: StageRequest) -> Bool {
        a.id == b.id && a.peer == b.peer && a.peerID == b.peerID && a.userID == b.userID && a.note == b.note
            && a.status == b.status && a.requestedAt == b.requestedAt && a.updatedAt == b.updatedAt
            && a.invitedBy == b.invitedBy && a.role == b.role && a.position == b.position && a.sequence == b.sequence
            && a.invitationEndsAt == b.invitationEndsAt
    }

    /// Its place in the waiting order: `requested_at`, then the order made.
    var rank: StageRank { StageRank(requestedAt: requestedAt, sequence: sequence) }

    /// The wire's StageRequest (`position` as filled in).
    public func encode(into w: inout JSONWriter) {
        w.object { w in
            w.field("request_id", id)
            w.key("peer")
            PeerRef.encode(peer, into: &w)
            w.field("user_id", userID)
            w.field("note", note)
            w.field("status", status.rawValue)
            w.field("requested_at", requestedAt)
            w.field("updated_at", updatedAt)
            w.key("position")
            if let position { w.int(position) } else { w.null() }
            w.key("invited_by")
            PeerRef.encode(invitedBy, into: &w)
            w.key("role")
            if let role { w.string(role) } else { w.null() }
        }
    }

    /// The bytes of its JSON, escapes included (`encode(into:)`).
    public var encodedSize: Int {
        var w = JSONWriter(reserving: note.utf8.count + 384)
        encode(into: &w)
        return w.bytes.count
    }
}

/// A waiting request's sort key.
struct StageRank: Comparable, Hashable, Sendable {
    var requestedAt: Int64
    var sequence: Int

    static func < (a: StageRank, b: StageRank) -> Bool {
        (a.requestedAt, a.sequence) < (b.requestedAt, b.sequence)
    }
}
