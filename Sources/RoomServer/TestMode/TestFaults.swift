import RoomModel
import RoomWire

/// Test mode's faults (PROTOCOL.md section 25): the connections that carry
/// one, and when the next timed one (a stall, a delay) ends — a deadline of
/// the `Schedule` (`.faultEnd`), so it follows the manual clock like every
/// other timer. Its service thread's only (checked in debug builds), the
/// faults it tracks too.
final class TestFaults {
    private var faulted: [ObjectIdentifier: Connection] = [:]
    /// Scripted errors of methods (section 33).
    var methods = MethodFaults()
    /// Pushes dropped or delayed by name (section 33).
    var pushes = PushFaults()
    private let clock: RoomClock
    private let thread: ServiceThread

    init(clock: RoomClock, thread: ServiceThread) {
        self.clock = clock
        self.thread = thread
    }

    /// When the earliest stall or delay ends, on the daemon's clock.
    var nextEnd: Int64? {
        faulted.values.compactMap { $0.fault?.nextEnd }.min()
    }

    func track(_ connection: Connection) {
        thread.assertIsCurrent()
        faulted[ObjectIdentifier(connection)] = connection
    }

    /// Some connection has a fault (the fan-out then takes its cold path).
    /// Connections whose fault is spent (a `drop` count used up) or that
    /// close are forgotten here, so the hot path comes back.
    var isActive: Bool {
        if !pushes.isEmpty { return true }
        if faulted.values.contains(where: { $0.fault == nil || $0.isClosing }) {
            faulted = faulted.filter { $0.value.fault != nil && !$0.value.isClosing }
        }
        return !faulted.isEmpty
    }

    /// The connection faults in force, one entry per peer and action:
    /// `{peer_id, action:"drop", left}`, `{peer_id, action:"stall"|"delay", until}`.
    var connectionFaults: [JSON] {
        var listed: [JSON] = []
        for connection in faulted.values where !connection.isClosing {
            guard let fault = connection.fault, let peer = connection.peer?.id.rawValue else { continue }
            if fault.dropNext > 0 {
                listed.append(["peer_id": .string(peer), "action": "drop", "left": .int(fault.dropNext)])
            }
            if let until = fault.stalledUntil {
                listed.append(["peer_id": .string(peer), "action": "stall", "until": .int(Int(until))])
            }
            if let until = fault.delayedUntil {
                listed.append(["peer_id": .string(peer), "action": "delay", "until": .int(Int(until))])
            }
        }
        return listed.sorted { ($0["peer_id"]?.stringValue ?? "") < ($1["peer_id"]?.stringValue ?? "") }
    }

    /// A push fault's delay on `connection`: section 25's `delay` starts
    /// (or lasts longer) so that this push and the ones behind it are held
    /// for `ms`, in order.
    func delay(_ connection: Connection, ms: Int) {
        let until = clock.nowMillis() + Int64(ms)
        if (connection.fault?.delayedUntil ?? .min) < until { connection.delayPushes(until: until) }
        track(connection)
    }

    /// Ends what is due (the `.faultEnd` deadline).
    func expire() {
        thread.assertIsCurrent()
        let now = clock.nowMillis()
        for (key, connection) in faulted {
            connection.endFault(now: now)
            if connection.fault == nil || connection.isClosing { faulted.removeValue(forKey: key) }
        }
    }

    /// `DELETE /v2/test/faults`: every fault ends now; returns how many connections had one.
    func clear() -> Int {
        thread.assertIsCurrent()
        methods.removeAll()
        pushes.removeAll()
        let count = faulted.count
        for connection in faulted.values { connection.endFault(now: clock.nowMillis(), all: true) }
        faulted.removeAll()
        return count
    }
}
