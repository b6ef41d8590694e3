import Dispatch
import Logging
import RoomCluster
import RoomModel
import Synchronization

/// Writes the saved states of the rooms homed here to the bus (the KV bucket
/// `roomd-state`), off the service thread: the service thread hands over a
/// room's `RoomSnapshot` (a value); the snapshot is encoded here (RoomWire
/// JSON), skipped when it equals what was saved last, and written — or, over
/// the bucket's value limit, not written and the older saved state deleted
/// (logged once). Only the latest waiting state of each room is written, in
/// order, so a service thread that changes a room faster than the bus takes
/// it costs no more than one encoding per write.
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
        /// What was saved last, by room.
        var lastSaved: [RoomID: [UInt8]] = [:]
        /// Rooms whose state is over the bucket's value limit (logged once).
        var oversized: Set<RoomID> = []
    }

    private let cluster: RoomCluster
    private let logger: Logger
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "roomd-cluster-state")

    init(cluster: RoomCluster, logger: Logger) {
        self.cluster = cluster
        self.logger = logger
    }

    /// Saves `snapshot` as `room`'s state (when it changed).
    func save(_ room: RoomID, _ snapshot: RoomSnapshot) { enqueue(room, .save(snapshot)) }

    /// Deletes `room`'s saved state (it ended, and its lease goes).
    func delete(_ room: RoomID) { enqueue(room, .delete) }

    /// `room` was restored here from `bytes`: that is what is saved.
    func restored(_ room: RoomID, from bytes: [UInt8]) {
        state.withLock { $0.lastSaved[room] = bytes }
    }

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
        switch write {
        case .delete:
            state.withLock { state in
                state.lastSaved.removeValue(forKey: room)
                state.oversized.remove(room)
            }
            store(room, nil)
        case .save(let snapshot):
            let bytes = snapshot.encodeJSON()
            enum Decision {
                case skip, write
                case tooLarge(firstTime: Bool, deleteOlder: Bool)
                case again
            }
            let decision = state.withLock { state -> Decision in
                if bytes == state.lastSaved[room] { return .skip }
                if bytes.count > Int(RoomStates.maxValueBytes) {
                    // An older, smaller state would be restored as if it were current: it goes too.
                    let first = state.oversized.insert(room).inserted
                    return .tooLarge(firstTime: first, deleteOlder: state.lastSaved.removeValue(forKey: room) != nil)
                }
                state.lastSaved[room] = bytes
                return state.oversized.remove(room) != nil ? .again : .write
            }
            switch decision {
            case .skip:
                return
            case .tooLarge(let first, let deleteOlder):
                if first {
                    logger.warning(
                        "cluster: room state too large to save: a takeover would lose it",
                        metadata: ["room": "\(room)", "bytes": "\(bytes.count)"]
                    )
                }
                if deleteOlder { store(room, nil) }
            case .again:
                logger.info(
                    "cluster: room state saved again",
                    metadata: ["room": "\(room)", "bytes": "\(bytes.count)"]
                )
                store(room, bytes)
            case .write:
                store(room, bytes)
            }
        }
    }

    /// Writes (or, nil, deletes) the state on the bus.
    private func store(_ room: RoomID, _ bytes: [UInt8]?) {
        guard let states = cluster.states else { return }
        do throws(ClusterError) {
            if let bytes { try states.save(room.rawValue, bytes) } else { try states.delete(room.rawValue) }
        } catch {
            logger.debug("cluster: room state not saved", metadata: ["room": "\(room)", "error": "\(error)"])
        }
    }
}
