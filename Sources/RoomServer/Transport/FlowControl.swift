import RoomModel

/// Flow control instead of collapse (PROTOCOL.md section 1): when roomd's
/// own output cannot keep up with a room — at least a tenth of its peers
/// have queues above the high watermark while the kernel takes every byte
/// roomd writes them (so the clients are reading: roomd is what is slow) —
/// roomd stops reading from every connection of that room
/// (`lws_rx_flow_control`). The room degrades to "calls are answered later"
/// and nobody is dropped; reading resumes once at most half that many are
/// still above the low watermark. A client that stops taking bytes (the
/// kernel's buffer for it is full) never counts: its queue grows to
/// `max_outbound_bytes` and it is closed with 4008 (the slow-consumer rule).
/// A room paused for `stallMillis` without draining stops waiting for the
/// connections still behind: they no longer count (until they catch up),
/// the room resumes, and they are held to the slow-consumer rule like any
/// other client — so a stuck client cannot keep its room paused, and a slow
/// one still gets all of `max_outbound_bytes` before 4008.
///
/// Its service thread's, like the connections it counts (checked in debug
/// builds).
final class FlowControl {
    /// Queued bytes at which a connection counts as congested, and below
    /// which it counts as drained.
    let highWatermark: Int
    let lowWatermark: Int
    /// A room pauses when at least this share of its peers are congested
    /// (and at least one), and resumes when at most half of that is.
    static let pauseShare = 0.1
    /// A paused room whose queues have not drained by then is not waiting
    /// for roomd (its input is stopped; a 64 KiB queue drains in well under
    /// a millisecond) but for slow clients: those are excused.
    static let stallMillis: Int64 = 1000

    private struct RoomFlow {
        var congested = 0
        var pausedSince: Int64?
        /// Resume once `congested` is at most this (half the pause threshold).
        var resumeAt = 0
        var paused: [Connection] = []
    }

    private var rooms: [RoomID: RoomFlow] = [:]
    /// Rooms paused so far (for tests and metrics).
    private(set) var pauses = 0

    private let thread: ServiceThread

    init(maxOutboundBytes: Int, thread: ServiceThread) {
        self.thread = thread
        highWatermark = max(1, min(maxOutboundBytes / 4, 64 * 1024))
        lowWatermark = highWatermark / 4
    }

    /// Cluster (Cluster/): tells the home of a client's room that the client's
    /// queue here is congested (true) or drained (false); set with a cluster.
    var report: ((Connection, Bool) -> Void)?

    /// `connection`'s queue passed the high watermark.
    func congested(_ connection: Connection, now: Int64) {
        thread.assertIsCurrent()
        if let home = connection.edge?.home {
            // Its room lives on another node: the home counts it (a `congested` record).
            connection.flowState.congestedRoom = home.room
            report?(connection, true)
            return
        }
        guard let room = connection.peer?.room else { return }
        connection.flowState.congestedRoom = room.id
        var flow = rooms[room.id, default: RoomFlow()]
        flow.congested += 1
        let threshold = max(1, Int((Self.pauseShare * Double(room.peerCount)).rounded(.up)))
        if flow.pausedSince == nil, flow.congested >= threshold {
            flow.pausedSince = now
            flow.resumeAt = threshold / 2
            pauses += 1
            for peer in room.peersInJoinOrder {
                guard let member = peer.endpoint?.connection, !member.isClosing else { continue }
                // Another node's client: its node stops reading once acknowledgements stop (Cluster/).
                member.pauseReading()
                member.flowState.pausedRoom = room.id
                flow.paused.append(member)
            }
        }
        rooms[room.id] = flow
    }

    /// `connection` drained below the low watermark.
    func drained(_ connection: Connection) {
        thread.assertIsCurrent()
        if connection.edge?.home != nil, connection.flowState.congestedRoom != nil {
            connection.flowState.congestedRoom = nil
            report?(connection, false)
            return
        }
        guard let id = connection.flowState.congestedRoom, var flow = rooms[id] else { return }
        connection.flowState.congestedRoom = nil
        flow.congested -= 1
        if flow.pausedSince != nil, flow.congested <= flow.resumeAt {
            for member in flow.paused {
                member.flowState.pausedRoom = nil
                member.resumeReading()
            }
            flow.paused = []
            flow.pausedSince = nil
        }
        rooms[id] = flow.congested == 0 && flow.pausedSince == nil ? nil : flow
    }

    /// `connection` is closed: it counts no more, and is never touched again.
    func forget(_ connection: Connection) {
        thread.assertIsCurrent()
        if let id = connection.flowState.pausedRoom {
            rooms[id]?.paused.removeAll { $0 === connection }
            connection.flowState.pausedRoom = nil
        }
        drained(connection)
    }

    /// Once a second: in rooms paused for too long, the connections still
    /// congested are slow clients, not roomd: they stop counting (until they
    /// drain below the low watermark), which resumes their room. Returns them.
    @discardableResult
    func excuseStalled<Connections: Sequence<Connection>>(now: Int64, among connections: Connections) -> [Connection] {
        thread.assertIsCurrent()
        let stalledRooms = Set(rooms.filter { ($0.value.pausedSince ?? now) <= now - Self.stallMillis }.keys)
        if stalledRooms.isEmpty { return [] }
        let laggards = connections.filter { connection in
            guard let id = connection.flowState.congestedRoom else { return false }
            return stalledRooms.contains(id)
        }
        for connection in laggards {
            drained(connection)
            connection.flowState.excused = true
        }
        return laggards
    }
}

/// What flow control counts a connection as.
struct FlowState {
    /// The room this connection's queue counts as congested in.
    var congestedRoom: RoomID?
    /// The room whose pause stopped this connection's reads.
    var pausedRoom: RoomID?
    /// Stayed behind while its room was paused: a slow client, which no
    /// longer counts towards pausing until it catches up.
    var excused = false
}
