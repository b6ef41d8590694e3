/// How a node joins the cluster (PROTOCOL.md section 18).
public struct ClusterConfig: Sendable, Equatable {
    /// `nats://HOST:PORT` (validated by the caller: `ClusterSettings.natsURLProblem`).
    public var natsURL: String
    /// This node's id: `[A-Za-z0-9_-]{1,64}` (a NATS subject token and a KV key).
    public var nodeID: NodeID
    /// How often the node announces itself on `roomd.nodes.<node-id>`.
    public var heartbeatMillis: Int64
    /// A node not heard for this long is no longer counted (3½ heartbeats).
    public var aliveWindowMillis: Int64
    /// Lifetime of a room home lease (the `roomd-rooms` bucket's TTL); a home renews at a third of it.
    public var leaseTTLMillis: Int64
    /// Wait for one NATS request (a KV operation, the JetStream API) before giving up.
    public var requestTimeoutMillis: Int64
    /// Wait between reconnect attempts while the bus is unreachable.
    public var reconnectWaitMillis: Int64

    public init(
        natsURL: String,
        nodeID: NodeID,
        heartbeatMillis: Int64 = 1000,
        leaseTTLMillis: Int64 = 3000,
        requestTimeoutMillis: Int64 = 2000,
        reconnectWaitMillis: Int64 = 250
    ) {
        self.natsURL = natsURL
        self.nodeID = nodeID
        self.heartbeatMillis = heartbeatMillis
        self.aliveWindowMillis = heartbeatMillis * 7 / 2
        self.leaseTTLMillis = leaseTTLMillis
        self.requestTimeoutMillis = requestTimeoutMillis
        self.reconnectWaitMillis = reconnectWaitMillis
    }

    public static let nodeIDRule = "1 to 64 characters from A-Z, a-z, 0-9, _ and -"

    public static func isValidNodeID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count) && id.utf8.allSatisfy(isIdentifierByte)
    }

    /// The node id of service thread `thread` of a process whose node id is
    /// `base` (`roomd --threads`): `base-tN`, `base` cut to fit 64 characters.
    public static func threadNodeID(_ base: NodeID, thread: Int) -> NodeID {
        let suffix = "-t\(thread)"
        return NodeID(String(base.rawValue.prefix(64 - suffix.utf8.count)) + suffix)
    }

    /// The default node id: `HOST-PORT` (the host name with every character
    /// outside `[A-Za-z0-9_-]` replaced by `-`, cut to fit), stable across
    /// restarts on the same machine and port.
    public static func defaultNodeID(hostName: String, port: Int) -> NodeID {
        let suffix = "-\(port)"
        var host = String(decoding: hostName.utf8.map { isIdentifierByte($0) ? $0 : UInt8(ascii: "-") }, as: UTF8.self)
        if host.isEmpty { host = "roomd" }
        return NodeID(String(host.prefix(64 - suffix.utf8.count)) + suffix)
    }

    static func isIdentifierByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }
}

/// What a node knows of the cluster, as `/healthz` shows it.
public struct ClusterStatus: Sendable, Equatable {
    public var nodeID: NodeID
    /// Nodes alive, this one included (heard within the alive window).
    public var nodes: Int
    /// The bus is usable: connected to NATS and the `roomd-rooms` bucket bound.
    public var connected: Bool
    /// The ids of the nodes alive, this one included, sorted.
    public var alive: [NodeID]
    /// The run (incarnation) of each node alive, as its heartbeats say: a node
    /// restarted within the alive window keeps its id but not its run.
    public var runs: [NodeID: String]
    /// The nodes alive that are draining (SIGTERM: their heartbeats say
    /// `drain`), this one included: they hand their rooms over and take none.
    public var draining: Set<NodeID>

    public init(
        nodeID: NodeID,
        nodes: Int,
        connected: Bool,
        alive: [NodeID]? = nil,
        runs: [NodeID: String] = [:],
        draining: Set<NodeID> = []
    ) {
        self.nodeID = nodeID
        self.nodes = nodes
        self.connected = connected
        self.alive = alive ?? [nodeID]
        self.runs = runs
        self.draining = draining
    }

    /// The other nodes alive that may take rooms over (not draining).
    public var takers: [NodeID] { alive.filter { $0 != nodeID && !draining.contains($0) } }
}

/// A NATS call that failed: the C client's status and its last error text.
public struct ClusterError: Error, Sendable, CustomStringConvertible {
    public var operation: String
    public var status: String
    public var detail: String

    public var description: String {
        detail.isEmpty || detail == status ? "\(operation): \(status)" : "\(operation): \(status): \(detail)"
    }
}
