/// A room session's audience questions (PROTOCOL.md section 21): the
/// questions in the order asked, the one pinned, and what changed since
/// the last `on-questions` push.
///
/// Bounded: at most `settings.qa.max_questions` are ever added in a session
/// (deleted ones count), and at most `maxVotes` votes are kept in a room.
///
/// One push carries at most `pushBudget` bytes of questions: additions,
/// state and pin changes first, then questions whose votes changed, oldest
/// change first; what does not fit waits for the next push. Every viewer's
/// Q&A traffic is so bounded (~16 KiB per interval) however many of 500
/// questions are being voted on; a count may lag a few intervals then.
public struct QuestionBoard: Sendable {
    /// Votes kept per room, over every question (a roomd bound: 40907 beyond).
    public static let maxVotes = 1_000_000
    /// The estimated bytes of questions one `on-questions` carries at most (at least one question).
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

    /// What the next push carries, and forgets it: every deletion, then
    /// additions and updates, then vote changes, up to `budget` estimated
    /// bytes of questions (at least one); the rest stays for the next push.
    mutating func takeChanges(budget: Int = pushBudget) -> (changed: [Question], removed: [String]) {
        var taken: [Question] = []
        var bytes = 0
        Self.take(from: &changed, &changedIDs, byID, into: &taken, bytes: &bytes, budget: budget)
        Self.take(from: &voted, &votedIDs, byID, into: &taken, bytes: &bytes, budget: budget)
        defer { removed.removeAll() }
        return (taken, removed)
    }

    private static func take(
        from ids: inout [String],
        _ pending: inout Set<String>,
        _ byID: [String: Question],
        into taken: inout [Question],
        bytes: inout Int,
        budget: Int
    ) {
        var count = 0
        for id in ids {
            guard let question = byID[id] else {
                count += 1
                continue
            }
            let size = question.estimatedBytes
            if !taken.isEmpty, bytes + size > budget { break }
            taken.append(question)
            bytes += size
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
