import Metrics
import Prometheus

/// swift-metrics instruments on a Prometheus registry, each family with its
/// `# HELP` line (`PrometheusMetricsFactory` registers every family with an
/// empty help text, and `promtool check metrics` wants one). The texts are
/// PROTOCOL.md's metrics table, shortened; a label without one is a
/// programming error (`ServerMetricsTests` checks every family has one).
struct DescribedMetricsFactory: MetricsFactory {
    let registry: PrometheusCollectorRegistry
    /// Buckets of a Timer's histogram, by label (else `defaultBuckets`).
    var durationBuckets: [String: [Duration]] = [:]
    /// `roomd_hook_seconds`: hooks answer in milliseconds, and time out at 5 s at most.
    static let hookBuckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5),
    ]
    static let defaultBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    /// Each family's help text.
    static let help: [String: String] = [
        "roomd_connections": "Open WebSocket connections (closing ones included; not HTTP).",
        "roomd_peers": "Peers in rooms, peers in a reconnect grace included.",
        "roomd_rooms": "Rooms served by this node.",
        "roomd_calls_total": "Calls received, by method (\"other\" for unknown names).",
        "roomd_errors_total": "Errors answered or pushed as on-error, by protocol code.",
        "roomd_pushes_total": "Pushes, one per recipient of each push (held pushes included).",
        "roomd_bytes_out_total": "Bytes of WebSocket frames written to sockets (headers included).",
        "roomd_deflated_frames_total":
            "Frames compressed for permessage-deflate clients: once per push, whatever its recipients.",
        "roomd_deflate_bytes_saved_total":
            "Bytes permessage-deflate saved per compressed frame (plain minus compressed), counted once per push.",
        "roomd_slow_consumer_closes_total": "Connections closed with 4008 (slow consumer).",
        "roomd_join_timeouts_total": "Connections closed with 1008 for not joining within join_timeout_s.",
        "roomd_accept_errors_total": "New connections refused at the open-file budget.",
        "roomd_unjoined_dropped_total": "Unjoined connections dropped for others' sake, by reason.",
        "roomd_join_duration_seconds": "Time in the join handler (token check and room join), failed joins included.",
        "roomd_poll_votes_total": "Accepted poll-response answers (one per question answered or skipped).",
        "roomd_test_pushes_dropped_total": "Pushes discarded by test mode's drop fault.",
        "roomd_test_audience_pushes_total":
            "Pushes encoded for test mode's synthetic audience and discarded (0 outside test mode).",
        "roomd_test_faults_total":
            "Test mode's faults applied: calls answered by a method fault, pushes dropped or delayed.",
        "roomd_cluster_state_bytes_total": "Bytes of rooms' saved state written to the bus (chunks and manifests).",
        "roomd_cluster_state_save_seconds": "From a room's snapshot to its save on the bus.",
        "roomd_cluster_room_state_bytes": "Encoded size of the saved state of the rooms homed on this node.",
        "roomd_resume_buffer_bytes": "Bytes of pushes held for peers in their reconnect grace.",
        "roomd_feed_bodies_built_total": "Audience feed bodies built from a room's record.",
        "roomd_feed_cache_hits_total": "Audience feed answers served from the cache.",
        "roomd_feed_answered_directly_total":
            "Audience feed requests roomd read and answered itself on a kept connection, without libwebsockets.",
        "roomd_turn_early_writes_total":
            "Times a service loop turn wrote its callers' answers before it ended (every 64 calls it read: a backlog).",
        "roomd_feed_builds_refused_total": "Audience feed spans refused with 429 (builds a second used up).",
        "roomd_feed_seconds_encoded_total": "Seconds of feed records encoded into pieces.",
        "roomd_feed_cache_entries": "Entries in the audience feed's cache.",
        "roomd_feed_cache_bytes": "Bytes in the audience feed's cache.",
        "roomd_webhook_deliveries_total": "Webhook outcomes: delivered, retried, failed.",
        "roomd_webhook_dropped_total": "Webhook events dropped because the queue was full.",
        "roomd_hook_requests_total": "Hooked calls by type and outcome: allow, deny, failed (section 30).",
        "roomd_hook_seconds": "From a hook request's start to its verdict (answer, failure or timeout).",
    ]

    private func descriptor(_ label: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: label, unitName: "", helpText: Self.help[label] ?? "")
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        registry.makeCounter(descriptor: descriptor(label), labels: dimensions)
    }

    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        // roomd records gauges only (`Metrics.Gauge` is a non-aggregating recorder).
        registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        registry.makeDurationHistogram(
            descriptor: descriptor(label),
            labels: dimensions,
            buckets: durationBuckets[label] ?? Self.defaultBuckets
        )
    }

    func destroyCounter(_ handler: any CounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        if let counter = handler as? Prometheus.Counter { registry.unregisterCounter(counter) }
    }

    func destroyRecorder(_ handler: any RecorderHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
    }

    func destroyMeter(_ handler: any MeterHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
    }

    func destroyTimer(_ handler: any TimerHandler) {
        if let histogram = handler as? DurationHistogram { registry.unregisterDurationHistogram(histogram) }
    }
}
