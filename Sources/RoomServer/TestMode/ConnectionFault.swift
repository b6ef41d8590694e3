/// Test mode's faults on one connection (PROTOCOL.md section 25, `POST
/// /v2/test/faults`), hung on the `Connection` (a reference: one pointer
/// per connection, nil in production). Times are on the daemon's clock
/// (test mode's manual one, or the system's). Its connection's service
/// thread only (`TestFaults` checks it).
final class ConnectionFault {
    /// `stall`: roomd neither reads nor writes the socket until then; its
    /// queue grows, and the slow-consumer rule applies as for a peer that
    /// stopped reading.
    var stalledUntil: Int64?
    /// `delay`: pushes are held aside until then, then queued in order.
    var delayedUntil: Int64?
    var held: [Frame] = []
    var heldBytes = 0
    /// `drop`: the next this many pushes are discarded.
    var dropNext = 0

    var isEmpty: Bool { stalledUntil == nil && delayedUntil == nil && dropNext == 0 }
    /// When the earliest timed part ends.
    var nextEnd: Int64? { [stalledUntil, delayedUntil].compactMap { $0 }.min() }
}

/// What a push met on a connection with a fault.
enum FaultedPush {
    case queued, held, dropped
    /// The connection was closed by the slow-consumer rule (or was closing).
    case refused
}

extension Connection {
    /// A push on a connection with a fault (`fault != nil`; FanOut checks
    /// first): test mode's `drop` and `delay` apply, else it is queued.
    func faultedPush(_ frame: Frame) -> FaultedPush {
        guard let fault, !isClosing else { return enqueue(frame) ? .queued : .refused }
        if fault.dropNext > 0 {
            fault.dropNext -= 1
            if fault.isEmpty { self.fault = nil }
            return .dropped
        }
        if fault.delayedUntil != nil {
            // Held pushes count against the outbound limit as queued ones do.
            if fault.heldBytes + queuedBytes + frame.count > maxQueuedBytes {
                fault.held.removeAll()
                fault.heldBytes = 0
                dropAsSlowConsumer()
                return .refused
            }
            fault.held.append(frame)
            fault.heldBytes += frame.count
            return .held
        }
        return enqueue(frame) ? .queued : .refused
    }

    private var currentFault: ConnectionFault {
        if let fault { return fault }
        let fault = ConnectionFault()
        self.fault = fault
        return fault
    }

    /// Starts a stall until `until`: nothing read or written meanwhile.
    func stall(until: Int64) {
        currentFault.stalledUntil = until
        pauseReading()
    }

    func delayPushes(until: Int64) { currentFault.delayedUntil = until }

    func dropPushes(_ count: Int) { currentFault.dropNext += count }

    /// Ends what of the fault is due at `now` (`all`: everything, as `DELETE
    /// /v2/test/faults` does): a stalled socket is read and written again,
    /// delayed pushes are queued in order.
    func endFault(now: Int64, all: Bool = false) {
        guard let fault else { return }
        let endStall = fault.stalledUntil.map { all || $0 <= now } ?? false
        let endDelay = fault.delayedUntil.map { all || $0 <= now } ?? false
        if all { fault.dropNext = 0 }
        if endStall { fault.stalledUntil = nil }
        var release: [Frame] = []
        if endDelay {
            fault.delayedUntil = nil
            release = fault.held
            fault.held = []
            fault.heldBytes = 0
        }
        if fault.isEmpty { self.fault = nil }
        if endStall {
            resumeReading()
            wakeWriter()
        }
        for frame in release where !enqueue(frame) { break }
    }

    /// Writes wait while a stall lasts; a close still goes out (the
    /// slow-consumer rule's 4008 is what a harness watches for).
    var isStalled: Bool { fault?.stalledUntil != nil && !isClosing }
}
