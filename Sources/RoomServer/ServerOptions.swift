import RoomCluster
import RoomConfig
import RoomModel

/// How the daemon is configured at start.
public struct ServerOptions: Sendable {
    public var host: String
    public var port: Int
    public var template: RoleTemplate
    /// HS256 secret, at least 32 bytes.
    public var secret: [UInt8]
    /// When set, app tokens must carry this `access_key`.
    public var accessKey: String?
    /// Signs webhooks (`ROOMD_WEBHOOK_SECRET`); nil: the HS256 `secret`.
    public var webhookSecret: [UInt8]?
    /// `nats://HOST:PORT` (validated): run as a node of a cluster (section
    /// 18). Nil: a single daemon, and nothing of NATS is touched.
    public var clusterURL: String?
    /// This node's id (`ClusterConfig.isValidNodeID`); nil: `HOSTNAME-PORT`
    /// with the bound port (`ClusterConfig.defaultNodeID`).
    public var nodeID: NodeID?
    /// Listen with `SO_REUSEPORT`: other roomd service threads or processes
    /// (nodes of the same cluster) may listen on the same port, and the
    /// kernel spreads new connections among them (`roomd --threads`,
    /// `--reuse-port`). Needs the libev loop.
    public var reusePort = false
    /// permessage-deflate (RFC 7692) for the clients that offer it: each
    /// push compressed once (`roomd --no-permessage-deflate` turns it off).
    public var permessageDeflate = true
    /// Servers in this process that share its open-file limit (`--threads`):
    /// each may hold its share of sockets.
    public var serversInProcess = 1
    /// This server's number among the process' service threads (`--threads`):
    /// its cluster node id gets `-tN` appended.
    public var serviceThread: Int?
    /// `--test-mode` (PROTOCOL.md section 25); nil in production.
    public var testMode: TestMode?
    /// With a cluster: how long a drain (SIGTERM) may take before the node
    /// exits anyway, in ms (`--drain-timeout`, 1..300 s).
    public var drainTimeoutMillis = 10_000

    public init(
        host: String = "127.0.0.1",
        port: Int = 7880,
        template: RoleTemplate,
        secret: [UInt8],
        accessKey: String? = nil,
        clusterURL: String? = nil,
        nodeID: NodeID? = nil
    ) {
        self.host = host
        self.port = port
        self.template = template
        self.secret = secret
        self.accessKey = accessKey
        self.clusterURL = clusterURL
        self.nodeID = nodeID
    }
}

public struct ServerError: Error, CustomStringConvertible {
    public var description: String
}
