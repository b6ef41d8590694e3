/// The connections given frames during one turn of the service loop, to be
/// written when the turn ends (`Sockets.writeAfterTurn`). A connection is
/// listed at most once (its `writableRequested`) until it is written, so the
/// list holds at most the service thread's connections. Those the turn read
/// a message of (`callers`) are written every `flushEvery` messages it reads
/// and at its end; of the others at most `budget` are at its end,
/// and the rest stay listed, in order, for the next turn's end: a push to a
/// large audience (a room-state, a broadcast to 10,000) is written over
/// several turns, with the answers to each turn's calls first, instead of
/// holding up every call behind ~80 ms of writes. Owned by the service thread.
final class TurnWrites {
    /// At most this many connections written at the end of a turn beyond
    /// those it read a message of (a turn's fan-out to 1,000 is one turn's).
    static let budget = 1024
    var pending: [Connection] = []
    /// Connections listed after the turn read a message of theirs (its
    /// callers): written every `flushEvery` messages the turn reads, and at
    /// its end, before `pending`. A long turn (a backlog after a stall: 8,000
    /// calls in one turn at 50,000 calls/s) so writes each answer while the
    /// caller's socket and queue are still in the CPU's cache, instead of
    /// coming back to 8,000 cold connections at its end.
    var callers: [Connection] = []
    /// Messages the turn read since its callers were last written.
    var readSinceFlush = 0
    static let flushEvery = 64
    /// `Sockets` is writing the listed connections: a connection with bytes left
    /// after its write asks lws for a writable callback instead of being listed again.
    var isWriting = false
    /// The turns of the service loop so far (wrapping): a connection written
    /// in this turn or the previous one (a stream) waits for its writable
    /// callback, unless the turn read a message of it.
    var turn: UInt64 = 2
    private var spare: [Connection] = []

    /// The list, emptied; `giveBack` returns its storage.
    func take() -> [Connection] {
        var list = spare
        swap(&list, &pending)
        spare = []
        return list
    }

    /// Gives back `list`'s storage and lists `carried` (connections not
    /// written at this turn's end, in order) ahead of the next turn's.
    func giveBack(_ list: [Connection], carrying carried: ArraySlice<Connection>) {
        var list = list
        list.removeAll(keepingCapacity: true)
        spare = list
        pending.insert(contentsOf: carried, at: 0)
    }
}
