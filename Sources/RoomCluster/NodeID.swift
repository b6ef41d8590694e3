/// A node's id (`--node-id`, `[A-Za-z0-9_-]{1,64}`: a NATS subject token and
/// a KV key). A type of its own everywhere inside roomd; a string only where
/// it is written or read: subjects, lease values, node messages, `/healthz`,
/// logs (`description` is the id itself, so log lines do not change).
/// Holds whatever string it was made from: `ClusterConfig.isValidNodeID`
/// checks the ids that come from outside.
public struct NodeID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    @inlinable public init(_ rawValue: String) { self.rawValue = rawValue }

    @inlinable public var description: String { rawValue }

    /// String order: `/healthz` lists the nodes sorted.
    @inlinable public static func < (a: NodeID, b: NodeID) -> Bool { a.rawValue < b.rawValue }
}
