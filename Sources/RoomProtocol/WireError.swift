/// Why a JSON value does not have the shape PROTOCOL.md gives it: the path
/// of the offending value and what is wrong with it, e.g. `join result:
/// peers[2].tracks.t1.mute: expected a boolean, got string`. RoomClient
/// turns it into `RoomClientError.invalidPayload` with the same text.
public struct WireError: Error, Sendable, Equatable, CustomStringConvertible {
    /// e.g. `join result.peers[2].tracks.t1.mute`; empty for the value as a whole.
    public var path: String
    public var problem: String

    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    /// `path: problem`, or the problem alone at the root.
    public var description: String { path.isEmpty ? problem : "\(path): \(problem)" }
}
