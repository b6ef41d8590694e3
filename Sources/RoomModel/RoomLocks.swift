/// Room ids ended with `end-room {lock: true}` (PROTOCOL.md section 6):
/// joins to them fail with 40003 until REST `unlock`. A lock outlives its
/// room, and a snapshot carries it to the node that takes the room over.
struct RoomLocks {
    private(set) var ids: Set<RoomID> = []

    func contains(_ roomID: RoomID) -> Bool { ids.contains(roomID) }

    mutating func lock(_ roomID: RoomID) { ids.insert(roomID) }

    /// A room id that is not locked is fine too.
    mutating func unlock(_ roomID: RoomID) { ids.remove(roomID) }
}
