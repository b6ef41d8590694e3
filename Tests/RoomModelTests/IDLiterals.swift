import RoomModel

// Tests write ids as literals; roomd's own code makes them from the strings
// it reads at the wire edge (params, REST paths, tokens, saved states).
extension RoomID: ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) { self.init(value) }
}

extension PeerID: ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) { self.init(value) }
}

extension UserID: ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) { self.init(value) }
}
