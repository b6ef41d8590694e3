/// How the server reaches a peer: its connection, or what holds its pushes
/// during a reconnect grace. The model stores it on the `Peer` and never
/// looks inside; the server's types subclass it (RoomServer's `Connection`
/// and `HeldPushes`), each with its `kind`, so that the fan-out tells them
/// apart by a switch instead of a dynamic cast.
open class PeerEndpoint {
    /// Which of the server's types this endpoint is.
    public enum Kind: UInt8, Sendable {
        /// A client connection (a socket, another node's client, or a harness').
        case connection
        /// The pushes held for a peer in its reconnect grace.
        case held
    }

    /// Fixed at init: a load at a fixed offset from any module (`final`).
    public final let kind: Kind

    /// Only roomd's server makes endpoints, each kind by its one type.
    /// `public`, not `package`: Swift 6.3 warns "function call causes an
    /// infinite recursion" on a subclass in another module of an `open`
    /// class whose designated init is `package` (a false positive).
    public init(kind: Kind) { self.kind = kind }
}
