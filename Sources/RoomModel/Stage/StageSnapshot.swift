import RoomProtocol
import RoomWire

// The `stage` section of a `RoomSnapshot` (format 2, 1.3 section 26):
//
//     {"made", "requests":[{"id", "sequence", "peer": ActorRef, "peer_id",
//       "user_id", "note", "status", "requested_at", "updated_at",
//       "invited_by": ActorRef|null, "role": string|null,
//       "invitation_ends_at": ms|null}],
//      "blocks":[{"user_id", "until": ms|null}]}
//
// Every request kept (waiting, invited and live in the order made, then the
// ended ones in the order they ended) and every block: nothing is cut
// (`max_waiting`, `StageQueue.maxEnded` and `maxStageBlocks` bound them).
// An open invitation's token is not saved (a token may be lost with its
// home): an invited request waits for `invitation_ends_at`, then goes back
// to waiting. A room whose session never used the queue has no `stage`
// key (so it saves the bytes it saved before 1.3), and a snapshot without
// one restores an empty queue.

/// The `stage` section, as saved.
public struct StageSnapshot: Sendable, Equatable {
    public var made = 0
    public var requests: [StageRequest] = []
    public var blocks: [(userID: UserID, until: Int64?)] = []

    public init() {}

    /// Nothing to save: the session never used the queue.
    public var isEmpty: Bool { made == 0 && requests.isEmpty && blocks.isEmpty }

    public static func == (a: StageSnapshot, b: StageSnapshot) -> Bool {
        a.made == b.made && a.requests == b.requests
            && a.blocks.map(\.userID) == b.blocks.map(\.userID) && a.blocks.map(\.until) == b.blocks.map(\.until)
    }
}

extension StageQueue {
    /// The queue as its section saves it.
    var snapshot: StageSnapshot {
        var saved = StageSnapshot()
        saved.made = made
        saved.requests = savedRequests
        saved.blocks = Array(blocks(from: 0, limit: blocks.count))
        return saved
    }
}

extension JSONWriter {
    /// The `stage` section.
    mutating func stageSection(_ stage: StageSnapshot) {
        beginObject()
        field("made", stage.made)
        key("requests")
        beginArray()
        for request in stage.requests {
            beginObject()
            field("id", request.id)
            field("sequence", request.sequence)
            key("peer")
            actor(request.peer)
            field("peer_id", request.peerID)
            field("user_id", request.userID)
            field("note", request.note)
            field("status", request.status.rawValue)
            field("requested_at", request.requestedAt)
            field("updated_at", request.updatedAt)
            key("invited_by")
            actor(request.invitedBy)
            nullable("role", request.role)
            nullable("invitation_ends_at", request.invitationEndsAt)
            endObject()
        }
        endArray()
        key("blocks")
        beginArray()
        for block in stage.blocks {
            beginObject()
            field("user_id", block.userID)
            nullable("until", block.until)
            endObject()
        }
        endArray()
        endObject()
    }
}

extension StageSnapshot {
    init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        made = try r.int("made")
        var ids: Set<String> = []
        var open: Set<UserID> = []
        requests = try r.objects("requests") { q throws(RoomSnapshotError) in
            let id = try q.string("id")
            if !ids.insert(id).inserted { throw q.failure("id", "duplicate stage request \"\(id)\"") }
            let user: UserID = try q.id("user_id")
            let status = try q.oneOf("status", StageStatus.self)
            if status.isOpen, !open.insert(user).inserted {
                throw q.failure("user_id", "a second open stage request of \"\(user)\"")
            }
            var request = StageRequest(
                id: id,
                peer: try q.object("peer", ActorRef.init),
                peerID: try q.id("peer_id"),
                userID: user,
                note: try q.string("note"),
                status: status,
                requestedAt: try q.int64("requested_at"),
                updatedAt: try q.int64("updated_at"),
                sequence: try q.int("sequence")
            )
            request.invitedBy = try q.nullable("invited_by") { k throws(RoomSnapshotError) in
                try q.object(k, ActorRef.init)
            }
            request.role = try q.nullable("role", q.string)
            request.invitationEndsAt = try q.nullable("invitation_ends_at", q.int64)
            return request
        }
        blocks = try r.objects("blocks") { b throws(RoomSnapshotError) in
            (try b.id("user_id"), try b.nullable("until", b.int64))
        }
    }
}

extension RoomRegistry {
    /// A restored room's queue: its blocks timed again, its invited requests
    /// (whose tokens are gone) back to waiting at their invitation's end.
    func restoreStage(_ saved: StageSnapshot, in room: Room) {
        var blocks: [UserID: StageBlock] = [:]
        for (user, until) in saved.blocks {
            var block = StageBlock(until: until)
            if let until { block.entry = schedule(StageBlockEnd(room: room, userID: user, until: until), at: until) }
            blocks[user] = block
        }
        room.stage = StageQueue(requests: saved.requests, made: saved.made, blocks: blocks)
        for request in saved.requests where request.status == .invited {
            let end = request.invitationEndsAt ?? clock.nowMillis()
            room.stage.setInvitationEnd(
                request.id,
                endsAt: end,
                entry: schedule(StageInvitationEnd(room: room, requestID: request.id), at: end)
            )
        }
    }
}

/// The end of a restored invitation (its token was lost with its old
/// home): the request waits again at its place.
struct StageInvitationEnd: ModelDeadline {
    static let rank = 8
    let room: Room
    let requestID: String

    func expire(in registry: RoomRegistry, at now: Int64) -> Expired {
        guard registry.rooms[room.id] === room, let request = room.stage.request(requestID),
            request.status == .invited, request.token == nil
        else { return Expired() }
        return Expired(registry.putBackInQueue(requestID, in: room))
    }
}
