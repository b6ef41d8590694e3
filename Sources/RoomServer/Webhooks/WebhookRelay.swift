import Logging
import Metrics
import Prometheus
import RoomConfig
import RoomModel

/// The server's side of webhooks: after each change the events the model
/// recorded are encoded once and handed to the sender (which delivers them
/// off the service thread). Without `settings.webhooks` nothing is recorded
/// and `forward` does nothing. Its service thread's only (checked in debug
/// builds).
final class WebhookRelay {
    private let thread: ServiceThread
    private let registry: RoomRegistry
    private let sender: WebhookSender?
    /// Webhook ids: the registry's generator (random, or test mode's seeded one).
    private let ids: IDGenerator
    /// Test mode's journal; nil otherwise.
    var journal: TestJournal?

    init(
        thread: ServiceThread,
        registry: RoomRegistry,
        settings: WebhookSettings?,
        poster: SignedPoster?,
        ids: IDGenerator,
        metrics: ServerMetrics,
        logger: Logger
    ) {
        self.thread = thread
        self.registry = registry
        self.ids = ids
        // The counters exist (at 0) without webhooks too: /metrics always lists them.
        let factory = DescribedMetricsFactory(registry: metrics.registry)
        let label = "roomd_webhook_deliveries_total"
        let webhookMetrics = WebhookMetrics(
            delivered: Metrics.Counter(label: label, dimensions: [("result", "delivered")], factory: factory),
            retried: Metrics.Counter(label: label, dimensions: [("result", "retried")], factory: factory),
            failed: Metrics.Counter(label: label, dimensions: [("result", "failed")], factory: factory),
            dropped: Metrics.Counter(label: "roomd_webhook_dropped_total", factory: factory)
        )
        guard let settings, let poster else {
            sender = nil
            return
        }
        registry.recordsOperatorEvents = true
        sender = WebhookSender(settings: settings, poster: poster, metrics: webhookMetrics, logger: logger)
        logger.info("webhooks on", metadata: ["events": "\(settings.events.count)"])
    }

    /// After each change: the events it recorded go to the queue.
    func forward() {
        thread.assertIsCurrent()
        guard let sender else { return }
        for event in registry.takeOperatorEvents() {
            let hook = WebhookEvent(event, id: ids.next(.webhook))
            if let journal, sender.delivers(hook.type) { journal.webhook(type: hook.type, room: event.event.room) }
            sender.enqueue(hook)
        }
    }

    /// Test mode (PROTOCOL.md section 25): the next `count` delivery attempts
    /// fail with `status` (nil: a timeout) without reaching the receiver;
    /// 0 clears it. False without webhooks.
    @discardableResult
    func injectFailures(next count: Int, status: Int?) -> Bool {
        thread.assertIsCurrent()
        guard let sender else { return false }
        sender.injectFailures(next: count, status: status)
        return true
    }

    /// At the end of the process: keep delivering for up to `timeout`.
    func drain(timeout: Duration) {
        guard let sender else { return }
        forward()
        sender.drain(timeout: timeout)
    }
}
