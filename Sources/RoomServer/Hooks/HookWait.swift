import RoomCollections
import RoomWire

/// One client message whose calls run in order, and may stop at a hooked
/// call until its hook answers (section 30): the calls, the next to run, and
/// the answer written so far. The dispatcher's; its service thread's only.
final class MessageRun {
    /// The message as received.
    var raw: [UInt8] = []
    var calls: [JSON] = []
    var isBatch = false
    /// The next call to run.
    var next = 0
    /// The answer (a batch's array) as written so far.
    var out = Frame.writer(reserving: 128)
    /// What the message's calls leave for after its answer (Call.swift).
    var after = AfterReply()
    var replied = false
    /// The hook's verdict on the call at `next`, once it answered.
    var verdict: HookVerdict?
}

/// A connection whose call waits for its hook: that call's message, and the
/// client's later messages, which are handled after it, in order. The
/// socket is not read meanwhile (as flow control does), so the backlog holds
/// only what was read before; it is bounded by the edge's window of a
/// cluster's remote client (`Edge.maxUnacked` messages, `Edge.maxUnackedBytes`),
/// and a client past it is closed with 1008.
final class HookWait {
    let ticket: UInt64
    let message: MessageRun
    private(set) var backlog = FIFO<[UInt8]>()
    private(set) var backlogBytes = 0

    init(ticket: UInt64, message: MessageRun) {
        self.ticket = ticket
        self.message = message
    }

    /// Keeps a later message; false when the backlog is full.
    func hold(_ bytes: [UInt8]) -> Bool {
        guard backlog.count < Edge.maxUnacked, backlogBytes + bytes.count <= Edge.maxUnackedBytes else {
            return false
        }
        backlog.append(bytes)
        backlogBytes += bytes.count
        return true
    }

    /// What is not answered yet, as messages to send again (a cluster node's drain hands
    /// them to the room's new home): the waiting message — its calls from the waiting one
    /// on, when a batch answered some already — then the later messages.
    func unanswered() -> [[UInt8]] {
        let waiting =
            message.next == 0
            ? message.raw : JSON.array(Array(message.calls[message.next...])).bytes
        return [waiting] + takeBacklog()
    }

    /// The later messages, oldest first (the wait is over).
    func takeBacklog() -> [[UInt8]] {
        var messages: [[UInt8]] = []
        messages.reserveCapacity(backlog.count)
        while let bytes = backlog.popFirst() { messages.append(bytes) }
        backlogBytes = 0
        return messages
    }
}
