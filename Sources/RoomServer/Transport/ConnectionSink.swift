/// Where a connection's frames go.
enum ConnectionSink {
    /// A client's WebSocket on this node (lws' handle).
    case socket(OpaquePointer)
    /// A client of another node, served here because its room's home is
    /// this node: frames go back to the client's node (Cluster/Home.swift).
    case remote(any RemoteSink)
    /// Nowhere: harnesses that read or empty the queue themselves
    /// (`roombench micro`, the dispatcher fuzzer). roomd never makes one.
    case discard
    /// A peer of test mode II's synthetic audience (section 33): each frame
    /// is counted and dropped as it is queued, as a socket would have taken it.
    case audience(AudienceSink)
}

/// The way back to a client of another node (the cluster's `RemoteLink`).
/// That node queues the frames and applies the slow-consumer rule.
protocol RemoteSink: AnyObject {
    func send(_ frame: Frame, enforcingLimit: Bool)
    func close(code: UInt16)
    /// The client's `join` succeeded here: its node remembers the peer (for a takeover).
    func joined(peerID: String)
}
