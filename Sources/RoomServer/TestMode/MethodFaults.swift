import RoomModel
import RoomWire

/// Test mode II's method faults (PROTOCOL.md section 33, `POST
/// /v2/test/faults {method, peer_id?, error:{code, message?}, count?}`):
/// the next `count` calls of a method (by one peer, or by anyone) are
/// answered with a scripted error and change nothing. Checked by the
/// dispatcher of the node that handles the call (a room's home), after the
/// method is known and before its handler. In posted order, the first
/// fault that matches is used. Its service thread's only.
struct MethodFaults {
    /// At most this many faults in force (a harness posts a few).
    static let maxFaults = 1000

    struct Fault {
        var method: String
        var peerID: PeerID?
        var code: ErrorCode
        var message: String?
        var left: Int
    }

    private(set) var faults: [Fault] = []

    var isEmpty: Bool { faults.isEmpty }

    mutating func add(_ fault: Fault) throws(RoomError) {
        guard faults.count < Self.maxFaults else {
            throw RoomError(.tooMany, "method: \(Self.maxFaults) method faults are in force already")
        }
        faults.append(fault)
    }

    /// The scripted error of a call of `method` by `peer`, if a fault is in
    /// force for it (one of its count is used).
    mutating func take(_ method: String, by peer: PeerID?) -> RoomError? {
        guard
            let index = faults.firstIndex(where: {
                $0.method == method && ($0.peerID == nil || $0.peerID == peer)
            })
        else { return nil }
        let fault = faults[index]
        faults[index].left -= 1
        if faults[index].left == 0 { faults.remove(at: index) }
        return RoomError(fault.code, fault.message ?? "\(method): a scripted error (test mode)")
    }

    mutating func removeAll() { faults.removeAll() }

    /// `{method, peer_id?, error:{code, message?}, left}`, as posted.
    var listed: [JSON] {
        faults.map { fault in
            var members: [JSON.Member] = [.init("method", .string(fault.method))]
            if let peer = fault.peerID { members.append(.init("peer_id", .string(peer.rawValue))) }
            var error: [JSON.Member] = [.init("code", .int(fault.code.rawValue))]
            if let message = fault.message { error.append(.init("message", .string(message))) }
            members.append(.init("error", .object(error)))
            members.append(.init("left", .int(fault.left)))
            return .object(members)
        }
    }
}
