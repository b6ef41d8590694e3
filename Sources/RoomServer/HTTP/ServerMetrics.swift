import Metrics
import Prometheus
import RoomModel
import Synchronization

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
    /// permessage-deflate: pushes compressed (once each, whatever their recipients), and the bytes that saved per push.
    let deflatedFrames: Metrics.Counter
    let deflateBytesSaved: Metrics.Counter
    let slowConsumerCloses: Metrics.Counter
    /// Connections refused at the open-file budget (PROTOCOL.md section 1).
    let acceptErrors: Metrics.Counter
    /// Connections closed with 1008 for not joining in `join_timeout_s`.
    let joinTimeouts: Metrics.Counter
    /// Unjoined connections refused or closed for another's sake (PROTOCOL.md section 1).
    private let unjoinedRefusedPerAddress: Metrics.Counter
    private let unjoinedClosedAtBudget: Metrics.Counter
    let joinDuration: Metrics.Timer
    /// Accepted `poll-response` answers (one per question answered or skipped).
    let pollVotes: Metrics.Counter
    /// Pushes discarded by test mode's `drop` fault (PROTOCOL.md section 25).
    let testPushesDropped: Metrics.Counter
    /// Test mode's faults applied (section 33's `roomd_test_faults_total{action}`):
    /// calls answered by a method fault, pushes dropped, pushes delayed.
    let testFaultErrors: Metrics.Counter
    let testFaultDrops: Metrics.Counter
    let testFaultDelays: Metrics.Counter
    /// Pushes queued to test mode II's synthetic audience and discarded (section 33).
    let testAudiencePushes: Metrics.Counter
    /// Bytes of rooms' saved state written to the bus (chunks and manifests, docs/CLUSTER.md).
    let clusterStateBytes: Metrics.Counter
    /// From a room's snapshot (taken ≤ 200 ms after its change) to its save on the bus.
    let clusterStateSave: Metrics.Timer
    /// The encoded size of the saved state of the rooms homed here, as last
    /// saved: what a node holds for its rooms, to set its RSS against.
    let clusterRoomStateBytes: Metrics.Gauge
    /// Bytes of pushes held for peers in their reconnect grace
    /// (`HeldPushes`, PROTOCOL.md section 29): kept up to date by them on
    /// the service thread, recorded to `roomd_resume_buffer_bytes` with the
    /// other gauges.
    let resumeBufferBytesHeld = Atomic<Int>(0)
    private let resumeBufferBytes: Metrics.Gauge
    /// The audience feed (PROTOCOL.md section 24): bodies built from a room's
    /// record, answers from the cache, and the cache's size.
    let feedBodiesBuilt: Metrics.Counter
    let feedCacheHits: Metrics.Counter
    /// Feed requests read and answered by roomd itself (RequestHeads.swift), not by libwebsockets.
    let feedAnsweredDirectly: Metrics.Counter
    /// Writes of a long turn's callers before it ended (every 64 calls it read; Sockets.messageHandled).
    let earlyWrites: Metrics.Counter
    /// Builds refused with 429 (`settings.feed.builds_per_second`, `caller_builds_per_second`).
    let feedBuildsRefused: Metrics.Counter
    /// Stored seconds encoded into pieces (each once while kept; bodies are assembled from them).
    let feedSecondsEncoded: Metrics.Counter
    private let feedCacheEntries: Metrics.Gauge
    /// Section 30's hooks (Hooks/HookClient.swift).
    let hooks: HookMetrics
    private let feedCacheBytes: Metrics.Gauge

    init() {
        var factory = DescribedMetricsFactory(registry: registry)
        factory.durationBuckets["roomd_join_duration_seconds"] = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        ]
        factory.durationBuckets["roomd_cluster_state_save_seconds"] = [
            .milliseconds(5), .milliseconds(25), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .milliseconds(800), .seconds(2), .seconds(5),
        ]
        factory.durationBuckets["roomd_hook_seconds"] = DescribedMetricsFactory.hookBuckets
        hooks = HookMetrics(factory: factory)
        connections = Metrics.Gauge(label: "roomd_connections", factory: factory)
        peers = Metrics.Gauge(label: "roomd_peers", factory: factory)
        rooms = Metrics.Gauge(label: "roomd_rooms", factory: factory)
        calls = Dictionary(
            uniqueKeysWithValues: Dispatcher.methodNames.map {  // one label per method the dispatcher serves
                ($0, Metrics.Counter(label: "roomd_calls_total", dimensions: [("method", $0)], factory: factory))
            }
        )
        unknownCalls = Metrics.Counter(label: "roomd_calls_total", dimensions: [("method", "other")], factory: factory)
        errors = Dictionary(
            uniqueKeysWithValues: ErrorCode.allCases.map {
                (
                    $0,
                    Metrics.Counter(
                        label: "roomd_errors_total",
                        dimensions: [("code", "\($0.rawValue)")],
                        factory: factory
                    )
                )
            }
        )
        pushes = Metrics.Counter(label: "roomd_pushes_total", factory: factory)
        clusterStateBytes = Metrics.Counter(label: "roomd_cluster_state_bytes_total", factory: factory)
        clusterStateSave = Metrics.Timer(label: "roomd_cluster_state_save_seconds", factory: factory)
        clusterRoomStateBytes = Metrics.Gauge(label: "roomd_cluster_room_state_bytes", factory: factory)
        resumeBufferBytes = Metrics.Gauge(label: "roomd_resume_buffer_bytes", factory: factory)
        bytesOut = Metrics.Counter(label: "roomd_bytes_out_total", factory: factory)
        deflatedFrames = Metrics.Counter(label: "roomd_deflated_frames_total", factory: factory)
        deflateBytesSaved = Metrics.Counter(label: "roomd_deflate_bytes_saved_total", factory: factory)
        slowConsumerCloses = Metrics.Counter(label: "roomd_slow_consumer_closes_total", factory: factory)
        joinDuration = Metrics.Timer(label: "roomd_join_duration_seconds", factory: factory)
        acceptErrors = Metrics.Counter(label: "roomd_accept_errors_total", factory: factory)
        joinTimeouts = Metrics.Counter(label: "roomd_join_timeouts_total", factory: factory)
        unjoinedRefusedPerAddress = Metrics.Counter(
            label: "roomd_unjoined_dropped_total",
            dimensions: [("reason", UnjoinedDrop.perAddress.rawValue)],
            factory: factory
        )
        unjoinedClosedAtBudget = Metrics.Counter(
            label: "roomd_unjoined_dropped_total",
            dimensions: [("reason", UnjoinedDrop.budget.rawValue)],
            factory: factory
        )
        pollVotes = Metrics.Counter(label: "roomd_poll_votes_total", factory: factory)
        testPushesDropped = Metrics.Counter(label: "roomd_test_pushes_dropped_total", factory: factory)
        let faults = "roomd_test_faults_total"
        testFaultErrors = Metrics.Counter(label: faults, dimensions: [("action", "error")], factory: factory)
        testFaultDrops = Metrics.Counter(label: faults, dimensions: [("action", "drop")], factory: factory)
        testFaultDelays = Metrics.Counter(label: faults, dimensions: [("action", "delay")], factory: factory)
        testAudiencePushes = Metrics.Counter(label: "roomd_test_audience_pushes_total", factory: factory)
        feedBodiesBuilt = Metrics.Counter(label: "roomd_feed_bodies_built_total", factory: factory)
        feedCacheHits = Metrics.Counter(label: "roomd_feed_cache_hits_total", factory: factory)
        feedAnsweredDirectly = Metrics.Counter(label: "roomd_feed_answered_directly_total", factory: factory)
        earlyWrites = Metrics.Counter(label: "roomd_turn_early_writes_total", factory: factory)
        feedBuildsRefused = Metrics.Counter(label: "roomd_feed_builds_refused_total", factory: factory)
        feedSecondsEncoded = Metrics.Counter(label: "roomd_feed_seconds_encoded_total", factory: factory)
        feedCacheEntries = Metrics.Gauge(label: "roomd_feed_cache_entries", factory: factory)
        feedCacheBytes = Metrics.Gauge(label: "roomd_feed_cache_bytes", factory: factory)
    }

    /// The feed cache's size (at a scrape).
    func recordFeedCache(entries: Int, bytes: Int) {
        feedCacheEntries.record(entries)
        feedCacheBytes.record(bytes)
    }

    func called(_ method: String?) {
        (method.flatMap { calls[$0] } ?? unknownCalls).increment()
    }

    func failed(_ code: ErrorCode) { errors[code]?.increment() }

    /// Why an unjoined connection was dropped (`roomd_unjoined_dropped_total{reason}`).
    enum UnjoinedDrop: String {
        /// A new connection refused: its address held `max_unjoined_per_address` unjoined ones.
        case perAddress = "per_address"
        /// The oldest unjoined connection (of the address holding the most) closed to make room at the budget.
        case budget
    }

    func unjoinedDropped(_ reason: UnjoinedDrop) {
        switch reason {
        case .perAddress: unjoinedRefusedPerAddress.increment()
        case .budget: unjoinedClosedAtBudget.increment()
        }
    }

    /// Service thread: the gauges as they are now.
    func recordGauges(connections: Int, peers: Int, rooms: Int) {
        self.connections.record(connections)
        self.peers.record(peers)
        self.rooms.record(rooms)
        resumeBufferBytes.record(resumeBufferBytesHeld.load(ordering: .relaxed))
    }

    /// The Prometheus text exposition. With sibling service threads
    /// (`--threads`) it is the whole process': every thread's series summed
    /// (their gauges as each thread last recorded them, at most a second
    /// ago), so that whichever thread the kernel hands a scrape to answers the same.
    func exposition(siblings: [ServerMetrics]) -> [UInt8] {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        if siblings.isEmpty { return buffer }
        var all = [buffer]
        for sibling in siblings {
            var theirs: [UInt8] = []
            sibling.registry.emit(into: &theirs)  // thread-safe: the registry's own lock, atomic values
            all.append(theirs)
        }
        return Self.sum(all)
    }

    /// Sums Prometheus text expositions of the same metrics: each sample line
    /// (`name{labels} value`) once with the sum of its values, in the order
    /// first seen; `# HELP` / `# TYPE` lines once.
    static func sum(_ expositions: [[UInt8]]) -> [UInt8] {
        var order: [String] = []
        var totals: [String: Double] = [:]
        var comments: Set<String> = []
        for text in expositions {
            for line in String(decoding: text, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true) {
                if line.hasPrefix("#") {
                    let comment = String(line)
                    if comments.insert(comment).inserted { order.append(comment) }
                    continue
                }
                guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                    continue
                }
                let key = String(line[..<space])
                if let total = totals[key] {
                    totals[key] = total + value
                } else {
                    totals[key] = value
                    order.append(key)
                }
            }
        }
        var out = ""
        for key in order {
            if let total = totals[key] {
                out +=
                    key + " " + (total == total.rounded() && abs(total) < 1e15 ? String(Int64(total)) : "\(total)")
                    + "\n"
            } else {
                out += key + "\n"
            }
        }
        return Array(out.utf8)
    }
}
