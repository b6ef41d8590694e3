import RoomCluster
import RoomModel

/// The cluster as the calls and the REST API see it: whether this node may
/// serve a room (it holds the room's lease), and which of its rooms changed
/// since their state was last saved for a takeover. Shared by the
/// dispatcher, the REST API and the timers (which only read and touch) and
/// the cluster router (which keeps it current). Without a cluster every
/// room is served here and nothing is tracked.
///
/// Its service thread's only (checked in debug builds).
final class RoomHomes {
    /// The cluster's status as the service thread last heard it; nil for a single daemon.
    private(set) var status: ClusterStatus?
    /// Rooms this node is the home of.
    private(set) var homed: Set<RoomID> = []
    /// Rooms homed here that changed since their state was last saved.
    private var changed: Set<RoomID> = []
    private let clustered: Bool
    private let thread: ServiceThread

    init(clustered: Bool, thread: ServiceThread) {
        self.clustered = clustered
        self.thread = thread
    }

    /// This node serves `room` now: always without a cluster.
    func serves(_ room: RoomID) -> Bool { !clustered || homed.contains(room) }

    /// A join may be served here: the bus is up and this node holds the
    /// room's lease (the edge looked the room up, or it is homed here).
    func admitJoin(_ room: RoomID) throws(RoomError) {
        thread.assertIsCurrent()
        guard clustered else { return }
        if status?.connected != true {
            throw RoomError(
                .clusterUnavailable,
                "cluster unavailable: the message bus (NATS) is unreachable, try again later"
            )
        }
        if !homed.contains(room) {
            // The lookup of the room's home failed, or the room moved meanwhile.
            throw RoomError(
                .clusterUnavailable,
                "cluster unavailable: the room's home node cannot be reached, try again"
            )
        }
    }

    /// Something may have changed in `room` (a call, a REST request, a leave).
    func touch(_ room: RoomID?) {
        thread.assertIsCurrent()
        if clustered, let room, homed.contains(room) { changed.insert(room) }
    }

    /// A timer changed something somewhere (graces, polls, requests, cues).
    func touchAll() {
        thread.assertIsCurrent()
        if clustered { changed.formUnion(homed) }
    }

    // MARK: the cluster router's side

    func statusChanged(_ status: ClusterStatus) {
        thread.assertIsCurrent()
        self.status = status
    }

    func isHome(of room: RoomID) -> Bool { homed.contains(room) }

    func claimed(_ room: RoomID) {
        thread.assertIsCurrent()
        homed.insert(room)
    }

    /// The room is no longer homed here; returns whether it was.
    @discardableResult
    func released(_ room: RoomID) -> Bool {
        thread.assertIsCurrent()
        return homed.remove(room) != nil
    }

    /// The rooms changed since the last call (homed here still), and forgets them.
    func takeChanged() -> Set<RoomID> {
        thread.assertIsCurrent()
        defer { changed.removeAll(keepingCapacity: true) }
        return changed.intersection(homed)
    }
}
