import RoomConfig

/// Names the server owns (PROTOCOL.md section 27): every name is trimmed of
/// surrounding white space; the user's own word (`join`'s `name` param,
/// `peer-update`) also passes the word filter (40302, `checkName`) and may
/// not be the name of a moderating peer now in the room (40908). The app's
/// word (a token's `name` claim, the `user_id` default, REST) is trimmed only.
extension RoomRegistry {
    /// `name` without surrounding white space; empty after trimming is -32602 naming `field`.
    public static func trimmedName(_ name: String, field: String = "name") throws(RoomError) -> String {
        let trimmed = name.trimmedOfWhiteSpace
        if trimmed.isEmpty { throw .invalidParams("\(field): empty after trimming white space") }
        return trimmed
    }

    /// 40908: `name` equals, Unicode lower-cased, the name of a peer of a
    /// moderating role (section 28's `moderates`) in `room` other than
    /// `peer`. Only for a caller whose `role` does not moderate; the
    /// moderating peers are found through the room's per-role index, as
    /// `quietRecipients` finds them, never a scan of the room.
    func checkReserved(_ name: String, in room: Room, role: Role, excluding peer: Peer? = nil) throws(RoomError) {
        if Self.moderates(role) { return }
        let lowered = name.lowercased()
        for roleName in template.roleNames {
            guard let moderating = template.roles[roleName], Self.moderates(moderating) else { continue }
            for other in room.peers(withRole: roleName) where other !== peer && other.name.lowercased() == lowered {
                throw RoomError(.nameReserved, "name: \"\(name)\" is the name of a moderating peer in this room")
            }
        }
    }
}

extension String {
    /// Without leading and trailing white space (Unicode's `isWhitespace`).
    public var trimmedOfWhiteSpace: String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
            let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(self[first...last])
    }
}
