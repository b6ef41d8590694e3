import RoomConfig

/// `preview` (PROTOCOL.md section 13): the token and room checks of `join`,
/// without joining. Nothing changes and nothing is pushed.
extension RoomRegistry {
    /// What `preview` answers: the room's session now (nil when there is none).
    public struct PreviewOutcome {
        public var room: Room?
        public var role: Role
    }

    /// The checks `join` makes before it adds a peer, in the same order and
    /// with the same codes (40002, 40108, 40003, 40001, 40901, 40900): the
    /// same function (Admission.swift).
    public func preview(_ request: JoinRequest) throws(RoomError) -> PreviewOutcome {
        let (role, room) = try admit(request, for: .preview)
        return PreviewOutcome(room: room, role: role)
    }
}
