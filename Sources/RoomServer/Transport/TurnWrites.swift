/// The connections given frames during one turn of the service loop, to be
/// written when the turn ends (`Sockets.writeAfterTurn`). A connection is
/// listed at most once a turn (its `writableRequested`), so the list holds
/// at most the service thread's connections. Owned by the service thread.
final class TurnWrites {
    var pending: [Connection] = []
    /// `Sockets.writeAfterTurn` is writing: a connection with bytes left after its
    /// write asks lws for a writable callback instead of waiting for the next turn.
    var isWriting = false
    /// The turns of the service loop so far (wrapping): a connection written
    /// in this turn or the previous one waits for its writable callback.
    var turn: UInt64 = 2
    private var spare: [Connection] = []

    /// The list, emptied; `giveBack` returns its storage.
    func take() -> [Connection] {
        var list = spare
        swap(&list, &pending)
        spare = []
        return list
    }

    func giveBack(_ list: [Connection]) {
        var list = list
        list.removeAll(keepingCapacity: true)
        spare = list
    }
}
