import Dispatch
import Logging
import Metrics
import RoomCluster
import RoomModel
import Synchronization

/// Writes the saved states of the rooms homed here to the bus (the KV bucket
/// `roomd-state`), off the service thread: the service thread hands over a
/// room's `RoomSnapshot` (a value); the snapshot is encoded here (RoomWire
/// JSON) and saved in chunks (`RoomStates`, `StateLayout`): only the chunks
/// that changed since the last save are written, then the manifest. Nothing
/// is cut: a room's whole state is saved, however large its settings let it
/// grow. Only the latest waiting state of each room is written, in order, so
/// a service thread that changes a room faster than the bus takes it costs
/// no more than one encoding per write.
///
/// Thread-safe: `state` is behind a mutex; the writing runs on the serial
/// queue `roomd-cluster-state`.
final class RoomStateWriter: Sendable {
    enum Write: Sendable {
        case save(RoomSnapshot)
        case delete
    }

    private struct State {
        /// Latest waiting write per room.
        var pending: [RoomID: Write] = [:]
        /// The layout of what was saved last, by room (nil: the state on the bus is unknown).
        var saved: [RoomID: StateLayout] = [:]
        /// Rooms whose last save failed (logged once until one succeeds).
        var failing: Set<RoomID> = []
    }

    private let cluster: RoomCluster
    private let logger: Logger
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "roomd-cluster-state")
    /// Bytes written to the bucket (chunks and manifests): `roomd_cluster_state_bytes_total`.
    private let bytesWritten: Metrics.Counter

    init(cluster: RoomCluster, bytesWritten: Metrics.Counter, logger: Logger) {
        self.cluster = cluster
        self.bytesWritten = bytesWritten
        self.logger = logger
    }

    /// Saves `snapshot` as `room`'s state (when it changed).
    func save(_ room: RoomID, _ snapshot: RoomSnapshot) { enqueue(room, .save(snapshot)) }

    /// Deletes `room`'s saved state (it ended, and its lease goes).
    func delete(_ room: RoomID) { enqueue(room, .delete) }

    /// `room` was restored here from `saved`: the next save goes over its layout.
    func restored(_ room: RoomID, from saved: SavedState) {
        state.withLock { $0.saved[room] = saved.layout }
    }

    /// Blocks until every write queued so far is on the bus (a drain's last save).
    func flush() {
        queue.sync {}
        // A write enqueued while the drain ran may have scheduled one more pass.
        while state.withLock({ !$0.pending.isEmpty }) { queue.sync {} }
    }

    /// After `flush()`: whether `room`'s last write reached the bus.
    func isSaved(_ room: RoomID) -> Bool { state.withLock { !$0.failing.contains(room) } }

    private func enqueue(_ room: RoomID, _ write: Write) {
        let schedule = state.withLock { state -> Bool in
            defer { state.pending[room] = write }
            return state.pending.isEmpty
        }
        if schedule { queue.async { [self] in drain() } }
    }

    private func drain() {
        while true {
            let batch = state.withLock { state -> [RoomID: Write] in
                defer { state.pending.removeAll() }
                return state.pending
            }
            if batch.isEmpty { return }
            for (room, write) in batch { perform(write, of: room) }
        }
    }

    private func perform(_ write: Write, of room: RoomID) {
        guard let states = cluster.states else {
            // The bus is down: not saved (a drain keeps the room's lease then).
            state.withLock { state in
                state.saved.removeValue(forKey: room)
                state.failing.insert(room)
            }
            return
        }
        let previous = state.withLock { $0.saved[room] }
        do throws(ClusterError) {
            switch write {
            case .delete:
                state.withLock { _ = $0.saved.removeValue(forKey: room) }
                try states.delete(room.rawValue, layout: previous)
            case .save(let snapshot):
                let bytes = snapshot.encodeJSON()
                let (layout, written) = try states.save(room.rawValue, bytes, over: previous)
                bytesWritten.increment(by: written)
                let recovered = state.withLock { state in
                    state.saved[room] = layout
                    return state.failing.remove(room) != nil
                }
                if recovered {
                    logger.info(
                        "cluster: room state saved again",
                        metadata: ["room": "\(room)", "bytes": "\(bytes.count)"]
                    )
                }
            }
        } catch {
            // The layout on the bus is unknown now: the next save writes every chunk again.
            let first = state.withLock { state in
                state.saved.removeValue(forKey: room)
                return state.failing.insert(room).inserted
            }
            if first {
                logger.warning("cluster: room state not saved", metadata: ["room": "\(room)", "error": "\(error)"])
            }
        }
    }
}
