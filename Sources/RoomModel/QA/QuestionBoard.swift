/// A room session's audience questions (PROTOCOL.md section 21): the
/// questions in the order asked, the one pinned, and what changed since
/// the last `on-questions` push.
///
/// Bounded: at most `settings.qa.max_questions` are ever added in a session
/// (deleted ones count), and at most `maxVotes` votes are kept in a room.
public struct QuestionBoard: Sendable {
    /// Votes kept per room, over every question (a roomd bound: 40907 beyond).
    public static let maxVotes = 1_000_000

    private(set) var byID: [String: Question] = [:]
    /// Ids in the order asked.
    private(set) var order: [String] = []
    /// Questions added in this session, deleted ones included.
    public private(set) var added = 0
    /// Votes kept over every question.
    public private(set) var votes = 0
    /// Changed (added, voted, updated) and deleted since the last push, in order of first change.
    private(set) var changed: [String] = []
    private var changedIDs: Set<String> = []
    private(set) var removed: [String] = []

    public init() {}

    public var count: Int { order.count }
    public func question(_ id: String) -> Question? { byID[id] }
    public var pinnedID: String? { order.first { byID[$0]?.pinned == true } }
    /// Every question, in the order asked.
    public var all: [Question] { order.compactMap { byID[$0] } }
    var hasChanges: Bool { !changed.isEmpty || !removed.isEmpty }

    mutating func add(_ question: Question) {
        byID[question.id] = question
        order.append(question.id)
        added += 1
        touch(question.id)
    }

    /// Applies `change` to question `id` and marks it changed.
    mutating func update(_ id: String, _ change: (inout Question) -> Void) {
        guard var question = byID[id] else { return }
        let before = question.votes.count
        change(&question)
        votes += question.votes.count - before
        byID[id] = question
        touch(id)
    }

    mutating func delete(_ id: String) {
        guard let question = byID.removeValue(forKey: id) else { return }
        votes -= question.votes.count
        order.removeAll { $0 == id }
        if changedIDs.remove(id) != nil { changed.removeAll { $0 == id } }
        removed.append(id)
    }

    private mutating func touch(_ id: String) {
        if changedIDs.insert(id).inserted { changed.append(id) }
    }

    /// What changed since the last push, and forgets it.
    mutating func takeChanges() -> (changed: [Question], removed: [String]) {
        defer {
            changed.removeAll()
            changedIDs.removeAll()
            removed.removeAll()
        }
        return (changed.compactMap { byID[$0] }, removed)
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
