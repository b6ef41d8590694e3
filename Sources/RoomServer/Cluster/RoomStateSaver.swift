import Logging
import RoomCluster
import RoomModel

/// Saves the state of the rooms homed here on the bus (a KV bucket) after
/// they change, at most every 200 ms each, so that a node taking a room
/// over when its home died can restore it (RoomSnapshot). Service thread
/// only; the writes happen on `ClusterJobs`' queue.
final class RoomStateSaver {
    private let registry: RoomRegistry
    private let homes: RoomHomes
    private let jobs: ClusterJobs
    private let logger: Logger
    /// What was saved last, by room.
    private var lastSaved: [String: [UInt8]] = [:]
    /// Rooms whose state is over the bucket's value limit (logged once).
    private var oversized: Set<String> = []

    init(registry: RoomRegistry, homes: RoomHomes, jobs: ClusterJobs, logger: Logger) {
        self.registry = registry
        self.homes = homes
        self.jobs = jobs
        self.logger = logger
    }

    /// Every 200 ms: the rooms homed here that changed are saved.
    func saveChanged() {
        for roomID in homes.takeChanged() {
            let snapshot: RoomSnapshot
            if let room = registry.room(roomID) {
                snapshot = registry.snapshot(of: room)
            } else if registry.lockedRoomIDs.contains(roomID) {
                snapshot = .lockedOnly(roomID)
            } else {
                continue  // ended: its state goes with its lease (`forget`)
            }
            let bytes = snapshot.encodeJSON()
            if bytes == lastSaved[roomID] { continue }
            if bytes.count > Int(RoomStates.maxValueBytes) {
                // An older, smaller state would be restored as if it were current: it goes too.
                if oversized.insert(roomID).inserted {
                    logger.warning(
                        "cluster: room state too large to save: a takeover would lose it",
                        metadata: ["room": "\(roomID)", "bytes": "\(bytes.count)"]
                    )
                }
                if lastSaved.removeValue(forKey: roomID) != nil { jobs.saveState(roomID, nil) }
                continue
            }
            if oversized.remove(roomID) != nil {
                logger.info(
                    "cluster: room state saved again",
                    metadata: ["room": "\(roomID)", "bytes": "\(bytes.count)"]
                )
            }
            lastSaved[roomID] = bytes
            jobs.saveState(roomID, bytes)
        }
    }

    /// A room restored here from `bytes`: that is what is saved.
    func restored(_ room: String, from bytes: [UInt8]) { lastSaved[room] = bytes }

    /// The room ended and its lease goes: its saved state is deleted.
    func forget(_ room: String) {
        lastSaved.removeValue(forKey: room)
        oversized.remove(room)
        jobs.saveState(room, nil)
    }

}
