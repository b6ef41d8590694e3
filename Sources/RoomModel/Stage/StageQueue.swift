import RoomCollections
import RoomWire

/// A room session's call-in queue (PROTOCOL.md section 26): the requests
/// by id, the waiting ones in order, each user's open request, each peer's
/// live one, the requests that ended (the latest `maxEnded`), the blocks,
/// and what changed since the last `on-stage-queue`.
///
/// Every operation is O(log n) or O(touched): a position is a binary
/// search of the waiting order; adding or putting back a waiting request
/// moves at most `max_waiting` (≤ 10,000) ids. Bounded: `max_waiting`
/// waiting requests (the registry checks), `maxEnded` ended ones (oldest
/// out), one open request per user, one live one per peer.
public struct StageQueue: Sendable {
    /// Ended requests kept for `stage-list` (oldest out first).
    public static let maxEnded = 1000
    /// The bytes of encoded requests and removed ids (each with its comma)
    /// one `on-stage-queue` carries at most (at least one item).
    public static let pushBudget = 16 * 1024

    private var byID: [String: StageRequest] = [:]
    /// Waiting ids, by rank (`requested_at`, then order made).
    private var waiting: [String] = []
    /// Invited ids.
    private var invited: Set<String> = []
    /// Each user's waiting or invited request.
    private var open: [UserID: String] = [:]
    /// Each peer's live request.
    private var live: [PeerID: String] = [:]
    /// Ended ids, in the order they ended.
    private var ended = FIFO<String>()
    /// Requests made in this session (orders those of one millisecond).
    private(set) var made = 0
    /// Changed since the last push, in order of first change.
    private var pending: [String] = []
    private var pendingIDs: Set<String> = []
    /// Blocked users: when the block ends (nil: until unblocked or the
    /// session's end) and its deadline.
    private(set) var blocks: [UserID: StageBlock] = [:]
    /// The blocked users by id: a page of blocks is a slice, never a sort
    /// (at most `maxStageBlocks`, so an insertion moves that many at most).
    private var blockOrder: [UserID] = []

    public init() {}

    public var waitingCount: Int { waiting.count }
    public var invitedCount: Int { invited.count }
    public var liveCount: Int { live.count }
    public var endedCount: Int { ended.count }
    var hasChanges: Bool { !pending.isEmpty }

    /// The deadlines of restored invitations (their tokens are gone).
    var invitationEntries: [DeadlineID] { invited.compactMap { byID[$0]?.invitationEntry } }

    /// Request `id` with its position filled in.
    public func request(_ id: String) -> StageRequest? { byID[id].map(withPosition) }

    /// `user`'s waiting or invited request.
    public func openRequest(of user: UserID) -> StageRequest? { open[user].flatMap(request) }

    /// `peer`'s live request.
    func liveRequest(of peer: PeerID) -> StageRequest? { live[peer].flatMap(request) }

    /// The 1-based rank of a waiting request, by binary search.
    public func position(of id: String) -> Int? {
        guard let request = byID[id], request.status == .waiting else { return nil }
        let index = insertionIndex(of: request.rank)
        return index < waiting.count && waiting[index] == id ? index + 1 : nil
    }

    func withPosition(_ request: StageRequest) -> StageRequest {
        var copy = request
        copy.position = position(of: request.id)
        return copy
    }

    /// Requests of one status and their count: waiting ones by position,
    /// the others newest `updated_at` first. O(offset + limit) for waiting,
    /// O(invited or live or ended) for the others.
    func list(_ status: StageRequest.Status, offset: Int, limit: Int) -> (requests: [StageRequest], total: Int) {
        switch status {
        case .waiting:
            let page = waiting.dropFirst(offset).prefix(limit).enumerated().map { i, id in
                var copy = byID[id]!
                copy.position = offset + i + 1
                return copy
            }
            return (page, waiting.count)
        case .invited, .live:
            let ids: [String] = status == .invited ? Array(invited) : Array(live.values)
            let all = ids.compactMap { byID[$0] }.sorted(by: Self.newestFirst)
            return (Array(all.dropFirst(offset).prefix(limit)), all.count)
        case .declined, .withdrawn, .done:
            var all: [StageRequest] = []
            for id in ended.reversed() where byID[id]?.status == status { all.append(byID[id]!) }
            all.sort(by: Self.newestFirst)  // ended order already, but a takeover may have moved a clock
            return (Array(all.dropFirst(offset).prefix(limit)), all.count)
        }
    }

    private static func newestFirst(_ a: StageRequest, _ b: StageRequest) -> Bool {
        (a.updatedAt, a.sequence) > (b.updatedAt, b.sequence)
    }

    // MARK: changes

    /// A new waiting request of a user without an open one.
    mutating func add(_ request: StageRequest) {
        precondition(open[request.userID] == nil && request.status == .waiting)
        byID[request.id] = request
        made = max(made, request.sequence)
        open[request.userID] = request.id
        insertWaiting(request)
        touch(request.id)
    }

    /// The next request's `sequence`.
    mutating func nextSequence() -> Int {
        made += 1
        return made
    }

    /// Replaces an open request's note and peer (the latest caller).
    mutating func renew(_ id: String, note: String?, peer: ActorRef, peerID: PeerID, at now: Int64) {
        guard var request = byID[id], request.status.isOpen else { return }
        if let note { request.note = note }
        request.peer = peer
        request.peerID = peerID
        request.updatedAt = now
        byID[id] = request
        touch(id)
    }

    /// A waiting request is invited to `role`.
    mutating func invite(_ id: String, role: String, by inviter: ActorRef?, token: String, endsAt: Int64, at now: Int64)
    {
        guard var request = byID[id], request.status == .waiting else { return }
        removeWaiting(request)
        request.status = .invited
        request.role = role
        request.invitedBy = inviter
        request.token = token
        request.invitationEndsAt = endsAt
        request.updatedAt = now
        byID[id] = request
        invited.insert(id)
        touch(id)
    }

    /// An invited request whose invitation expired waits again, at its old place.
    mutating func putBack(_ id: String, at now: Int64) {
        guard var request = byID[id], request.status == .invited else { return }
        invited.remove(id)
        request.status = .waiting
        request.role = nil
        request.invitedBy = nil
        request.token = nil
        request.invitationEndsAt = nil
        request.invitationEntry = nil
        request.updatedAt = now
        byID[id] = request
        insertWaiting(request)
        touch(id)
    }

    /// An invited request was accepted: its peer (as it is now) is live.
    mutating func goLive(_ id: String, peer: ActorRef, at now: Int64) {
        guard var request = byID[id], request.status == .invited else { return }
        invited.remove(id)
        open[request.userID] = nil
        if let other = live[request.peerID], other != id { end(other, as: .done, at: now) }
        request.status = .live
        request.peer = peer
        request.token = nil
        request.invitationEndsAt = nil
        request.invitationEntry = nil
        request.updatedAt = now
        byID[id] = request
        live[request.peerID] = id
        touch(id)
    }

    /// A request ends (`declined`, `withdrawn`, `done`); returns it as it
    /// was (its open invitation's token with it). The oldest ended request
    /// goes beyond `maxEnded`.
    @discardableResult
    mutating func end(_ id: String, as status: StageRequest.Status, at now: Int64) -> StageRequest? {
        precondition(status.hasEnded)
        guard var request = byID[id], !request.status.hasEnded else { return nil }
        let before = request
        switch request.status {
        case .waiting: removeWaiting(request)
        case .invited: invited.remove(id)
        case .live: live[request.peerID] = nil
        case .declined, .withdrawn, .done: break
        }
        if open[request.userID] == id { open[request.userID] = nil }
        request.status = status
        request.token = nil
        request.invitationEndsAt = nil
        request.invitationEntry = nil
        request.updatedAt = now
        byID[id] = request
        ended.append(id)
        while ended.count > Self.maxEnded { byID[ended.removeFirst()] = nil }
        touch(id)
        return before
    }

    private mutating func touch(_ id: String) {
        if pendingIDs.insert(id).inserted { pending.append(id) }
    }

    private func insertionIndex(of rank: StageRank) -> Int {
        var low = 0
        var high = waiting.count
        while low < high {
            let mid = (low + high) / 2
            if byID[waiting[mid]]!.rank < rank { low = mid + 1 } else { high = mid }
        }
        return low
    }

    private mutating func insertWaiting(_ request: StageRequest) {
        waiting.insert(request.id, at: insertionIndex(of: request.rank))
    }

    private mutating func removeWaiting(_ request: StageRequest) {
        let index = insertionIndex(of: request.rank)
        if index < waiting.count, waiting[index] == request.id { waiting.remove(at: index) }
    }

    // MARK: the push

    /// What the next `on-stage-queue` carries, and forgets it: the changed
    /// requests in order of first change, each as it is now — a waiting,
    /// invited or live one in `changed` (with its position), an ended one
    /// (or one gone beyond `maxEnded`) by id in `removed` — up to `budget`
    /// bytes of encoded JSON (brackets and commas included; at least one
    /// item); the rest stays for the next push (`hasChanges`).
    mutating func takeChanges(budget: Int = pushBudget) -> (changed: [StageRequest], removed: [String]) {
        var used = 4  // [] []
        var changed: [StageRequest] = []
        var removed: [String] = []
        var taken = 0
        for id in pending {
            let request = byID[id]
            let size: Int
            if let request, !request.status.hasEnded {
                size = withPosition(request).encodedSize + 1
            } else {
                size = Self.encodedSize(id) + 1
            }
            if taken > 0, used + size > budget { break }
            used += size
            taken += 1
            if let request, !request.status.hasEnded {
                changed.append(withPosition(request))
            } else {
                removed.append(id)
            }
        }
        for id in pending.prefix(taken) { pendingIDs.remove(id) }
        pending.removeFirst(taken)
        return (changed, removed)
    }

    /// The bytes of `id` as a JSON string.
    static func encodedSize(_ id: String) -> Int {
        var w = JSONWriter(reserving: id.utf8.count + 8)
        w.string(id)
        return w.bytes.count
    }

    // MARK: blocks

    /// Whether `user` is blocked at `now`.
    func isBlocked(_ user: UserID, at now: Int64) -> Bool {
        guard let block = blocks[user] else { return false }
        return block.until.map { $0 > now } ?? true
    }

    /// Sets `user`'s block; returns the one it replaces (its deadline to cancel).
    @discardableResult
    mutating func block(_ user: UserID, _ block: StageBlock) -> StageBlock? {
        let old = blocks.updateValue(block, forKey: user)
        if old == nil { blockOrder.insert(user, at: blockIndex(user)) }
        return old
    }

    @discardableResult
    mutating func unblock(_ user: UserID) -> StageBlock? {
        guard let old = blocks.removeValue(forKey: user) else { return nil }
        blockOrder.remove(at: blockIndex(user))
        return old
    }

    /// The blocks from `offset` (by user id), at most `limit` of them.
    func blocks(from offset: Int, limit: Int) -> [(userID: UserID, until: Int64?)] {
        let start = min(max(0, offset), blockOrder.count)
        let end = start + min(max(0, limit), blockOrder.count - start)
        return blockOrder[start..<end].map { ($0, blocks[$0]?.until) }
    }

    /// Where `user` is or would go in `blockOrder` (binary search).
    private func blockIndex(_ user: UserID) -> Int {
        var low = 0
        var high = blockOrder.count
        while low < high {
            let mid = (low + high) / 2
            if blockOrder[mid] < user { low = mid + 1 } else { high = mid }
        }
        return low
    }

    // MARK: saved state

    /// Every request kept: the open and live ones, then the ended ones in
    /// the order they ended.
    var savedRequests: [StageRequest] {
        let current = byID.values.filter { !$0.status.hasEnded }.sorted { $0.sequence < $1.sequence }
        return current + ended.compactMap { byID[$0] }
    }

    /// A queue as a snapshot saved it (blocks without their deadlines: the
    /// registry schedules them).
    init(requests: [StageRequest], made: Int, blocks: [UserID: StageBlock]) {
        for request in requests {
            byID[request.id] = request
            switch request.status {
            case .waiting:
                open[request.userID] = request.id
                insertWaiting(request)
            case .invited:
                open[request.userID] = request.id
                invited.insert(request.id)
            case .live: live[request.peerID] = request.id
            case .declined, .withdrawn, .done: ended.append(request.id)
            }
        }
        self.made = max(made, requests.map(\.sequence).max() ?? 0)
        self.blocks = blocks
        blockOrder = blocks.keys.sorted()
    }

    /// A restored invited request's end (its token is gone) and its deadline.
    mutating func setInvitationEnd(_ id: String, endsAt: Int64, entry: DeadlineID) {
        byID[id]?.invitationEndsAt = endsAt
        byID[id]?.invitationEntry = entry
    }
}

/// A user's block from the call-in queue.
public struct StageBlock: Sendable, Equatable {
    /// When it ends (ms); nil until unblocked or the session's end.
    public var until: Int64?
    /// Its `StageBlockEnd` in the registry's deadlines (timed blocks).
    var entry: DeadlineID?
}
