import Metrics
import Prometheus
import RoomModel

/// The daemon's metrics: swift-metrics instruments backed by a Prometheus
/// registry the server owns (no process-global bootstrap, so embedders and
/// tests keep their own). Labels are bounded: method names of the protocol
/// and error codes only, never room or peer ids.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let connections: Metrics.Gauge
    private let peers: Metrics.Gauge
    private let rooms: Metrics.Gauge
    private let calls: [String: Metrics.Counter]
    private let unknownCalls: Metrics.Counter
    private let errors: [ErrorCode: Metrics.Counter]
    let pushes: Metrics.Counter
    let bytesOut: Metrics.Counter
    let slowConsumerCloses: Metrics.Counter
    /// Connections refused at the open-file budget (PROTOCOL.md section 1).
    let acceptErrors: Metrics.Counter
    /// Connections closed with 1008 for not joining in `join_timeout_s`.
    let joinTimeouts: Metrics.Counter
    let joinDuration: Metrics.Timer
    /// Accepted `poll-response` answers (one per question answered or skipped).
    let pollVotes: Metrics.Counter

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets["roomd_join_duration_seconds"] = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        ]
        connections = Metrics.Gauge(label: "roomd_connections", factory: factory)
        peers = Metrics.Gauge(label: "roomd_peers", factory: factory)
        rooms = Metrics.Gauge(label: "roomd_rooms", factory: factory)
        calls = Dictionary(uniqueKeysWithValues: Dispatcher.methodNames.map {  // one label per method the dispatcher serves
            ($0, Metrics.Counter(label: "roomd_calls_total", dimensions: [("method", $0)], factory: factory))
        })
        unknownCalls = Metrics.Counter(label: "roomd_calls_total", dimensions: [("method", "other")], factory: factory)
        errors = Dictionary(uniqueKeysWithValues: ErrorCode.allCases.map {
            ($0, Metrics.Counter(label: "roomd_errors_total", dimensions: [("code", "\($0.rawValue)")], factory: factory))
        })
        pushes = Metrics.Counter(label: "roomd_pushes_total", factory: factory)
        bytesOut = Metrics.Counter(label: "roomd_bytes_out_total", factory: factory)
        slowConsumerCloses = Metrics.Counter(label: "roomd_slow_consumer_closes_total", factory: factory)
        joinDuration = Metrics.Timer(label: "roomd_join_duration_seconds", factory: factory)
        acceptErrors = Metrics.Counter(label: "roomd_accept_errors_total", factory: factory)
        joinTimeouts = Metrics.Counter(label: "roomd_join_timeouts_total", factory: factory)
        pollVotes = Metrics.Counter(label: "roomd_poll_votes_total", factory: factory)
    }

    func called(_ method: String?) {
        (method.flatMap { calls[$0] } ?? unknownCalls).increment()
    }

    func failed(_ code: ErrorCode) { errors[code]?.increment() }

    /// The Prometheus text exposition, with the gauges read from the server now.
    func exposition(server: RoomServer) -> [UInt8] {
        connections.record(server.connections.count)
        peers.record(server.registry.peerCount)
        rooms.record(server.registry.rooms.count)
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return buffer
    }
}
