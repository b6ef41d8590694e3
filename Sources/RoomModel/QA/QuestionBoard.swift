import RoomWire

/// A room session's audience questions (PROTOCOL.md section 21): the
/// questions in the order asked, the one pinned, and what changed since
/// the last `on-questions` push.
///
/// Bounded: at most `settings.qa.max_questions` are ever added in a session
/// (deleted ones count), and at most `maxVotes` votes are kept in a room.
///
/// One push carries at most `pushBudget` bytes of encoded JSON (JSON
/// escapes included): deletions first, then additions, state and pin
/// changes, then questions whose votes changed, oldest change first; what
/// does not fit waits for the next push. Every viewer's Q&A traffic is so
/// bounded (16 KiB per interval) however many questions are being voted on
/// or deleted; a count may lag a few intervals then.
public struct QuestionBoard: Sendable {
    /// Votes kept per room, over every question (a roomd bound: 40907 beyond).
    public static let maxVotes = 1_000_000
    /// The bytes of encoded questions and removed ids (each with its comma)
    /// one `on-questions` carries at most (at least one item).
    public static let pushBudget = 16 * 1024

    private(set) var byID: [String: Question] = [:]
    /// Ids in the order asked.
    private(set) var order: [String] = []
    /// Questions added in this session, deleted ones included.
    public private(set) var added = 0
    /// Votes kept over every question.
    public private(set) var votes = 0
    /// Added or updated (state, pin) since the last push, in order of first change.
    private(set) var changed: [String] = []
    private var changedIDs: Set<String> = []
    /// Only voted on since the last push (not in `changed`), in order of first vote.
    private(set) var voted: [String] = []
    private var votedIDs: Set<String> = []
    /// Deleted since the last push.
    private(set) var removed: [String] = []

    public init() {}

    public var count: Int { order.count }
    public func question(_ id: String) -> Question? { byID[id] }
    public var pinnedID: String? { order.first { byID[$0]?.pinned == true } }
    /// Every question, in the order asked.
    public var all: [Question] { order.compactMap { byID[$0] } }
    var hasChanges: Bool { !changed.isEmpty || !voted.isEmpty || !removed.isEmpty }

    mutating func add(_ question: Question) {
        byID[question.id] = question
        order.append(question.id)
        added += 1
        touch(question.id, votesOnly: false)
    }

    /// Applies `change` to question `id` and marks it changed (`votesOnly`:
    /// a vote, which gives way to additions, state and pin changes in a full push).
    mutating func update(_ id: String, votesOnly: Bool = false, _ change: (inout Question) -> Void) {
        guard var question = byID[id] else { return }
        let before = question.votes.count
        change(&question)
        votes += question.votes.count - before
        byID[id] = question
        touch(id, votesOnly: votesOnly)
    }

    mutating func delete(_ id: String) {
        guard let question = byID.removeValue(forKey: id) else { return }
        votes -= question.votes.count
        order.removeAll { $0 == id }
        if changedIDs.remove(id) != nil { changed.removeAll { $0 == id } }
        if votedIDs.remove(id) != nil { voted.removeAll { $0 == id } }
        removed.append(id)
    }

    private mutating func touch(_ id: String, votesOnly: Bool) {
        if votesOnly {
            if !changedIDs.contains(id), votedIDs.insert(id).inserted { voted.append(id) }
            return
        }
        if votedIDs.remove(id) != nil { voted.removeAll { $0 == id } }  // at most max_questions long
        if changedIDs.insert(id).inserted { changed.append(id) }
    }

    /// What the next push carries, and forgets it: deletions, then additions
    /// and updates, then vote changes, up to `budget` bytes of encoded JSON
    /// (`[` `]` and commas included; at least one item); the rest stays for
    /// the next push (`hasChanges`).
    mutating func takeChanges(budget: Int = pushBudget) -> (changed: [Question], removed: [String]) {
        var used = 4  // [] []
        var taken: [Question] = []
        var gone = 0
        for id in removed {
            let size = Self.encodedSize(id) + 1
            if gone > 0, used + size > budget { break }
            used += size
            gone += 1
        }
        let ids = Array(removed.prefix(gone))
        removed.removeFirst(gone)
        if removed.isEmpty {
            Self.take(from: &changed, &changedIDs, byID, into: &taken, used: &used, budget: budget, first: ids.isEmpty)
            if changed.isEmpty {
                let first = ids.isEmpty && taken.isEmpty
                Self.take(from: &voted, &votedIDs, byID, into: &taken, used: &used, budget: budget, first: first)
            }
        }
        return (taken, ids)
    }

    /// The bytes of `id` as a JSON string.
    static func encodedSize(_ id: String) -> Int {
        var w = JSONWriter(reserving: id.utf8.count + 8)
        w.string(id)
        return w.bytes.count
    }

    private static func take(
        from ids: inout [String],
        _ pending: inout Set<String>,
        _ byID: [String: Question],
        into taken: inout [Question],
        used: inout Int,
        budget: Int,
        first: Bool
    ) {
        var count = 0
        var isFirst = first
        for id in ids {
            guard let question = byID[id] else {
                count += 1
                continue
            }
            let size = question.encodedSize + 1
            if !isFirst, used + size > budget { break }
            isFirst = false
            taken.append(question)
            used += size
            count += 1
        }
        for id in ids.prefix(count) { pending.remove(id) }
        ids.removeFirst(count)
    }

    /// A board as a snapshot saved it.
    init(questions: [Question], added: Int) {
        for question in questions {
            byID[question.id] = question
            order.append(question.id)
            votes += question.votes.count
        }
        self.added = added
    }
}
