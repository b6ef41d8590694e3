/// The cluster's state of one client connection of this node: where its
/// room lives, and its messages on their way there. Owned by `Edge`.
final class EdgeRoute {
    /// The room's home when it is another node: every message of the
    /// connection goes there; answers and pushes come back.
    var home: (node: String, room: String)?
    /// The room whose home is being looked up, with the messages that wait for the answer.
    var resolvingRoom: String?
    var awaitingRoute: [[UInt8]] = []
    /// A `preview` found that `room` has no home: previews of it are answered here.
    var homelessRoom: String?
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
/// acknowledged yet, oldest first (acknowledgements count messages; the
/// sizes they free are looked up here).
struct InFlight {
    private var sizes: [Int] = []
    private var head = 0
    private(set) var bytes = 0

    var count: Int { sizes.count - head }

    mutating func sent(_ size: Int) {
        sizes.append(size)
        bytes += size
    }

    mutating func acknowledged(_ messages: Int) {
        let end = head + min(messages, count)
        for index in head..<end { bytes -= sizes[index] }
        head = end
        if head == sizes.count {
            sizes.removeAll(keepingCapacity: sizes.count <= 1024)
            head = 0
        } else if head > 1024 {
            sizes.removeFirst(head)
            head = 0
        }
    }
}
