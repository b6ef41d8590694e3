/// The rooms with reaction totals that changed since their last
/// `on-reactions` (PROTOCOL.md section 20): what the reactions tick visits.
/// A room that ended meanwhile is skipped when met.
struct ReactionSchedule {
    private(set) var roomIDs: Set<RoomID> = []

    mutating func schedule(_ room: Room) { roomIDs.insert(room.id) }

    /// The rooms due this tick, in id order; they leave the schedule.
    mutating func take() -> [RoomID] {
        defer { roomIDs.removeAll(keepingCapacity: true) }
        return roomIDs.sorted()
    }
}
