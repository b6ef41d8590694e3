import RoomModel
import RoomWire

/// Test mode II's push faults (PROTOCOL.md section 33, `POST
/// /v2/test/faults {push, peer_id?, action:"drop"|"delay", ms?, count?}`):
/// the next `count` pushes of one name are dropped or delayed. With a
/// `peer_id` a push counts once per delivery to that peer; without, once
/// per push encoded, and it is dropped or delayed for every recipient
/// connected to this node (so "drop the next `on-peer-update`" means no
/// peer sees it). A delay starts section 25's `delay` on each recipient's
/// connection: that push and the ones behind it are held, in order, for
/// `ms`. Checked by the fan-out's cold path (FanOut.swift), which test mode
/// takes while any fault is in force. Its service thread's only.
struct PushFaults {
    /// At most this many push faults in force (a harness posts a few).
    static let maxFaults = 1000

    enum Action: String {
        case drop, delay
    }

    struct Fault {
        var push: String
        var peerID: PeerID?
        var action: Action
        /// How long a delay holds the pushes (ms on the daemon's clock).
        var ms: Int
        var left: Int

        var verdict: Verdict { action == .drop ? .drop : .delay(ms: ms) }
    }

    /// What one recipient's copy of a push meets.
    enum Verdict: Equatable {
        case deliver, drop
        case delay(ms: Int)
    }

    private(set) var faults: [Fault] = []

    var isEmpty: Bool { faults.isEmpty }

    mutating func add(_ fault: Fault) throws(RoomError) {
        guard faults.count < Self.maxFaults else {
            throw RoomError(.tooMany, "push: \(Self.maxFaults) push faults are in force already")
        }
        faults.append(fault)
    }

    /// The faults that name `push`, for one delivery: the first fault
    /// without a peer that matches is used (one count of it, for every
    /// recipient); faults naming a peer are used per recipient by
    /// `verdict`. `removeSpent()` after the delivery.
    mutating func plan(for push: String) -> Plan {
        var plan = Plan()
        for index in faults.indices where faults[index].push == push && faults[index].left > 0 {
            if faults[index].peerID != nil {
                plan.byPeer.append(index)
            } else if plan.everyone == nil {
                plan.everyone = faults[index].verdict
                faults[index].left -= 1
            }
        }
        return plan
    }

    /// One delivery's faults: one for every recipient, else those naming peers.
    struct Plan {
        var everyone: Verdict?
        var byPeer: [Int] = []
        var isEmpty: Bool { everyone == nil && byPeer.isEmpty }
    }

    /// What `peer`'s copy of the push meets under `plan` (one count of the
    /// first fault naming it is used).
    mutating func verdict(for peer: PeerID, in plan: Plan) -> Verdict {
        if let everyone = plan.everyone { return everyone }
        for index in plan.byPeer where faults[index].peerID == peer && faults[index].left > 0 {
            faults[index].left -= 1
            return faults[index].verdict
        }
        return .deliver
    }

    /// Forgets the faults whose count is used up (after a delivery).
    mutating func removeSpent() { faults.removeAll { $0.left <= 0 } }

    mutating func removeAll() { faults.removeAll() }

    /// `{push, peer_id?, action, ms?, left}`, as posted.
    var listed: [JSON] {
        faults.map { fault in
            var members: [JSON.Member] = [.init("push", .string(fault.push))]
            if let peer = fault.peerID { members.append(.init("peer_id", .string(peer.rawValue))) }
            members.append(.init("action", .string(fault.action.rawValue)))
            if fault.action == .delay { members.append(.init("ms", .int(fault.ms))) }
            members.append(.init("left", .int(fault.left)))
            return .object(members)
        }
    }
}
