import RoomCluster

/// Tests write node ids as literals; roomd's own code makes them from the
/// strings it reads (`--node-id`, subjects, lease values, node messages).
extension NodeID: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self.init(value) }
}
