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
/// The save window (what a `kill -9` of the home may lose) is the 200-ms
/// period plus the time from a snapshot to its save on the bus:
/// `roomd_cluster_state_save_seconds`, from the oldest snapshot a write
/// carries. A save later than 800 ms (a window over the spec's 1 s: a
/// starved machine, a stalled JetStream) is logged, at most once in 10 s.
///
/// Thread-safe: `state` is behind a mutex; the writing runs on the serial
/// queue `roomd-cluster-state`.
final class RoomStateWriter: Sendable {
    enum Write: Sendable {
        case save(RoomSnapshot)
        case delete
    }

    private struct State {
        /// Latest waiting write per room, and when the oldest write it replaced was queued.
        var pending: [RoomID: (write: Write, since: UInt64)] = [:]
        /// The layout of what was saved last, by room (nil: the state on the bus is unknown).
        var saved: [RoomID: StateLayout] = [:]
        /// The encoded size of each room's state as last saved or restored here, and their sum.
        var sizes: [RoomID: Int] = [:]
        var heldBytes = 0
        /// Rooms whose last save failed (logged once until one succeeds).
        var failing: Set<RoomID> = []

        /// `room`'s size is `bytes` now (nil: none held); the new sum.
        mutating func size(_ room: RoomID, _ bytes: Int?) -> Int {
            let old: Int? =
                if let bytes { sizes.updateValue(bytes, forKey: room) } else { sizes.removeValue(forKey: room) }
            heldBytes += (bytes ?? 0) - (old ?? 0)
            return heldBytes
        }
        /// Uptime (ns) of the last "late" warning, and late saves since.
        var lateLogged: UInt64 = 0
        var lateSince = 0
    }

    /// A save this late makes the window (200 ms + this) longer than 1 s.
    static let lateNanoseconds: UInt64 = 800_000_000

    private let cluster: RoomCluster
    private let logger: Logger
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "roomd-cluster-state")
    /// Bytes written to the bucket (chunks and manifests): `roomd_cluster_state_bytes_total`.
    private let bytesWritten: Metrics.Counter
    /// From a write's queueing to its save on the bus: `roomd_cluster_state_save_seconds`.
    private let saveTime: Metrics.Timer
    /// The sum of the rooms' sizes: `roomd_cluster_room_state_bytes`.
    private let heldBytes: Metrics.Gauge

    init(
        cluster: RoomCluster,
        bytesWritten: Metrics.Counter,
        saveTime: Metrics.Timer,
        heldBytes: Metrics.Gauge,
        logger: Logger
    ) {
        self.cluster = cluster
        self.bytesWritten = bytesWritten
        self.saveTime = saveTime
        self.heldBytes = heldBytes
        self.logger = logger
    }

    /// Saves `snapshot` as `room`'s state (when it changed).
    func save(_ room: RoomID, _ snapshot: RoomSnapshot) { enqueue(room, .save(snapshot)) }

    /// Deletes `room`'s saved state (it ended, and its lease goes).
    func delete(_ room: RoomID) { enqueue(room, .delete) }

    /// `room` was restored here from `saved`: the next save goes over its layout.
    func restored(_ room: RoomID, from saved: SavedState) {
        let held = state.withLock { state in
            state.saved[room] = saved.layout
            return state.size(room, saved.bytes.count)
        }
        heldBytes.record(held)
    }

    /// `room` is saved by another node now (this one lost its lease): what
    /// was known of it here is forgotten.
    func released(_ room: RoomID) {
        let held = state.withLock { state in
            state.saved.removeValue(forKey: room)
            return state.size(room, nil)
        }
        heldBytes.record(held)
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
        let now = DispatchTime.now().uptimeNanoseconds
        let schedule = state.withLock { state -> Bool in
            defer { state.pending[room] = (write, state.pending[room]?.since ?? now) }
            return state.pending.isEmpty
        }
        if schedule { queue.async { [self] in drain() } }
    }

    private func drain() {
        while true {
            let batch = state.withLock { state -> [RoomID: (write: Write, since: UInt64)] in
                defer { state.pending.removeAll() }
                return state.pending
            }
            if batch.isEmpty { return }
            for (room, pending) in batch { perform(pending.write, of: room, queuedAt: pending.since) }
        }
    }

    private func perform(_ write: Write, of room: RoomID, queuedAt: UInt64) {
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
                let held = state.withLock { state in
                    state.saved.removeValue(forKey: room)
                    return state.size(room, nil)
                }
                heldBytes.record(held)
                try states.delete(room.rawValue, layout: previous)
            case .save(let snapshot):
                let bytes = snapshot.encodeJSON()
                let (layout, written) = try states.save(room.rawValue, bytes, over: previous)
                bytesWritten.increment(by: written)
                saved(room, queuedAt: queuedAt)
                let (recovered, held) = state.withLock { state in
                    state.saved[room] = layout
                    return (state.failing.remove(room) != nil, state.size(room, bytes.count))
                }
                heldBytes.record(held)
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

    /// A save is on the bus: its time is recorded, and a late one logged.
    private func saved(_ room: RoomID, queuedAt: UInt64) {
        let now = DispatchTime.now().uptimeNanoseconds
        let took = now &- queuedAt
        saveTime.recordNanoseconds(Int64(clamping: took))
        guard took > Self.lateNanoseconds else { return }
        let late = state.withLock { state -> Int? in
            state.lateSince += 1
            guard now &- state.lateLogged >= 10_000_000_000 || state.lateLogged == 0 else { return nil }
            defer { state.lateSince = 0 }
            state.lateLogged = now
            return state.lateSince
        }
        if let late {
            logger.warning(
                "cluster: room state saved late: a kill -9 of this node now loses more than the last second",
                metadata: ["room": "\(room)", "ms": "\(took / 1_000_000)", "late_saves": "\(late)"]
            )
        }
    }
}
