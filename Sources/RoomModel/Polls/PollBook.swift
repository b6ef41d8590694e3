/// The polls of one room session, in creation order.
public struct PollBook {
    public private(set) var byID: [String: Poll] = [:]
    public private(set) var ordered: [Poll] = []
    private var serial = 0

    public var count: Int { ordered.count }

    public subscript(id: String) -> Poll? { byID[id] }

    mutating func nextSequence() -> Int {
        serial += 1
        return serial
    }

    /// Creation counter (a snapshot carries it, Takeover.swift).
    var serialCounter: Int {
        get { serial }
        set { serial = newValue }
    }

    mutating func add(_ poll: Poll) {
        byID[poll.id] = poll
        ordered.append(poll)
    }
}
