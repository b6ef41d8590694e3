import RoomModel

/// The server's endpoints: a peer is reached through its `Connection`, or,
/// during its reconnect grace, its `HeldPushes` stand in (`Peer.endpoint`).
extension PeerEndpoint {
    /// This endpoint as a connection, when it is one. These two and the
    /// fan-out loop (FanOut.swift) are the only downcasts of an endpoint: by
    /// its `kind`, never a dynamic cast (`unsafeDowncast` checks the type
    /// in debug builds).
    var connection: Connection? { kind == .connection ? unsafeDowncast(self, to: Connection.self) : nil }

    /// This endpoint as the pushes held during a reconnect grace, when it is that.
    var held: HeldPushes? { kind == .held ? unsafeDowncast(self, to: HeldPushes.self) : nil }
}
