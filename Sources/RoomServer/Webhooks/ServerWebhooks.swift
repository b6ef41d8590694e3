import Logging
import Metrics
import Prometheus
import RoomModel

/// The server's side of webhooks: the model records operator events, the
/// service thread encodes each once and hands it to the sender.
extension RoomServer {
    func setUpWebhooks() {
        let factory = PrometheusMetricsFactory(registry: metrics.registry)
        let label = "roomd_webhook_deliveries_total"
        let webhookMetrics = WebhookMetrics(
            delivered: Metrics.Counter(label: label, dimensions: [("result", "delivered")], factory: factory),
            retried: Metrics.Counter(label: label, dimensions: [("result", "retried")], factory: factory),
            failed: Metrics.Counter(label: label, dimensions: [("result", "failed")], factory: factory),
            dropped: Metrics.Counter(label: "roomd_webhook_dropped_total", factory: factory))
        guard let settings = options.template.settings.webhooks else { return }
        registry.recordsOperatorEvents = true
        webhooks = WebhookSender(settings: settings, secret: options.webhookSecret ?? options.secret,
                                 metrics: webhookMetrics, logger: logger)
        logger.info("webhooks on", metadata: ["events": "\(settings.events.count)"])
    }

    /// Service thread, after each change: the events it recorded go to the queue.
    func forwardOperatorEvents() {
        guard let webhooks else { return }
        for event in registry.takeOperatorEvents() {
            webhooks.enqueue(WebhookEvent(event, id: WebhookEvent.makeID()))
        }
    }

    /// At the end of the process: keep delivering for up to `timeout`.
    public func drainWebhooks(timeout: Duration) {
        guard let webhooks else { return }
        forwardOperatorEvents()
        webhooks.drain(timeout: timeout)
    }
}
