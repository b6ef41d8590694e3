/// Rooms whose coalesced state changed since their last push, in the
/// order they first changed: the questions' `on-questions` and the call-in
/// queue's `on-stage-queue` each keep one. A room is listed once however
/// often it changes between two ticks.
struct ChangedRooms {
    private var pending: [RoomID] = []
    private var pendingIDs: Set<RoomID> = []

    var isEmpty: Bool { pending.isEmpty }

    mutating func changed(_ room: Room) {
        if pendingIDs.insert(room.id).inserted { pending.append(room.id) }
    }

    /// The rooms still live that `hasChanges` says are due a push, in
    /// order; forgets every room listed.
    mutating func takeRooms(from rooms: [RoomID: Room], where hasChanges: (Room) -> Bool) -> [Room] {
        defer {
            pending.removeAll()
            pendingIDs.removeAll()
        }
        return pending.compactMap { rooms[$0] }.filter(hasChanges)
    }
}
