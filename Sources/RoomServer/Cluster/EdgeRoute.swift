import RoomCluster
import RoomCollections
import RoomModel

/// The cluster's state of one client connection of this node: where its
/// room lives, and its messages on their way there. Owned by `Edge`.
final class EdgeRoute {
    /// The room's home when it is another node: every message of the
    /// connection goes there; answers and pushes come back.
    var home: (node: NodeID, room: RoomID)?
    /// The room whose home is being looked up, with the messages that wait for the answer.
    var resolvingRoom: RoomID?
    var awaitingRoute: [[UInt8]] = []
    /// A `preview` found that `room` has no home: previews of it are answered here.
    var homelessRoom: RoomID?
    /// Times the room's home sent this connection's join back to be routed again.
    var reroutes = 0
    /// The peer the home joined this connection as (for a takeover).
    var remotePeerID: String?
    /// The room's home died and its new home is being found.
    var takingOver = false
    /// Messages sent to the home and not acknowledged yet; reading stops at
    /// `Edge.maxUnacked` messages or `maxUnackedBytes` until the home catches up.
    var unacked = InFlight()
    var pausedForHome = false
}

extension Connection {
    /// The cluster's state of this client, made on first use.
    var route: EdgeRoute {
        if let edge { return edge }
        let made = EdgeRoute()
        edge = made
        return made
    }
}

/// On the edge: the messages of one client sent to its room's home and not
/// acknowledged yet, oldest first. The home acknowledges a message in the
/// same node message as its answer (Home.swift), so these are exactly the
/// calls whose answers have not come: when the home is lost they are
/// answered here (5003) or, a `join` not answered yet, routed again.
struct InFlight {
    private var messages = FIFO<[UInt8]>()
    private(set) var bytes = 0

    var count: Int { messages.count }

    mutating func sent(_ message: [UInt8]) {
        messages.append(message)
        bytes += message.count
    }

    mutating func acknowledged(_ count: Int) {
        for _ in 0..<min(max(count, 0), messages.count) { bytes -= messages.removeFirst().count }
    }

    /// Every message not acknowledged, oldest first; none afterwards.
    mutating func takeAll() -> [[UInt8]] {
        defer { self = InFlight() }
        return Array(messages)
    }
}
