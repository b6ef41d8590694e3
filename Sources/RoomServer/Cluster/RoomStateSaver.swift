import RoomCluster
import RoomModel

/// Saves the state of the rooms homed here after they change, at most every
/// 200 ms each, so that a node taking a room over when its home died can
/// restore it (RoomSnapshot). On the service thread it takes each changed
/// room's snapshot (a value); encoding and writing happen on
/// `RoomStateWriter`'s queue, so a large room costs its home's loop the copy
/// of its state, not its encoding.
final class RoomStateSaver {
    private let registry: RoomRegistry
    private let homes: RoomHomes
    let writer: RoomStateWriter

    init(registry: RoomRegistry, homes: RoomHomes, writer: RoomStateWriter) {
        self.registry = registry
        self.homes = homes
        self.writer = writer
    }

    /// Every 200 ms: the rooms homed here that changed are saved.
    func saveChanged() {
        for roomID in homes.takeChanged() {
            if let room = registry.room(roomID) {
                writer.save(roomID, registry.snapshot(of: room))
            } else if registry.lockedRoomIDs.contains(roomID) {
                writer.save(roomID, .lockedOnly(roomID))
            }  // else it ended: its state goes with its lease (`forget`)
        }
    }

    /// A room restored here from `saved`: the next save goes over it.
    func restored(_ room: RoomID, from saved: SavedState) { writer.restored(room, from: saved) }

    /// The room ended and its lease goes: its saved state is deleted.
    func forget(_ room: RoomID) { writer.delete(room) }
}
