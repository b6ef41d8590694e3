import Logging
import Metrics
import RoomConfig
import RoomModel
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Delivers webhooks (PROTOCOL.md section 17) off the service thread: the
/// service thread calls `enqueue`, which only appends to the bounded queue
/// and wakes the sender task; POSTs, timeouts and retries happen on that
/// task and AsyncHTTPClient's event loop, never on the service thread.
final class WebhookSender: Sendable {
    let settings: WebhookSettings
    let queue: WebhookQueue
    private let poster: SignedPoster
    private let logger: Logger
    private let metrics: WebhookMetrics
    private let wake: AsyncStream<Void>.Continuation
    private let enabled: Set<String>
    /// Test mode's injected failures: how many attempts still fail, and how
    /// (a status, or nil: a timeout). Set on the service thread, taken here.
    private let injected = Mutex<(count: Int, status: Int?)>((0, nil))

    init(settings: WebhookSettings, poster: SignedPoster, metrics: WebhookMetrics, logger: Logger) {
        self.settings = settings
        queue = WebhookQueue(limit: settings.queueLimit)
        self.poster = poster
        self.logger = logger
        self.metrics = metrics
        enabled = Set(settings.events.map(\.rawValue))
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        wake = continuation
        Task.detached { [self] in await run(stream) }
    }

    /// Whether events of `type` are delivered (`settings.webhooks.events`).
    func delivers(_ type: String) -> Bool { enabled.contains(type) }

    /// Service thread: queue the event (when its kind is enabled). Never blocks on the network.
    func enqueue(_ event: WebhookEvent) {
        guard enabled.contains(event.type) else { return }
        if let dropped = queue.append(event) {
            metrics.dropped.increment()
            if dropped % 1000 == 1 {  // the first, then every 1000th
                logger.warning(
                    "webhook queue full: oldest event dropped",
                    metadata: ["limit": "\(settings.queueLimit)", "dropped": "\(dropped)"]
                )
            }
        }
        wake.yield()
    }

    /// Blocks the calling thread until every queued event is delivered (or
    /// given up), or `timeout` passed. For the end of the process.
    func drain(timeout: Duration) {
        let deadline = ContinuousClock.now + timeout
        while !queue.isIdle, ContinuousClock.now < deadline { usleep(10_000) }
        if !queue.isIdle { logger.notice("webhooks still queued at exit") }
    }

    // MARK: sender task

    private func run(_ stream: AsyncStream<Void>) async {
        await withDiscardingTaskGroup { group in
            for await _ in stream {
                while let event = queue.takeReady() {
                    group.addTask { [self] in
                        await deliver(event)
                        queue.finished(event.roomID)
                        wake.yield()
                    }
                }
            }
        }
    }

    /// Attempts until a 2xx or `max_attempts`: backoff 1 s, 2 s, 4 s… ± 10 %, at most 5 minutes.
    private func deliver(_ event: WebhookEvent) async {
        for attempt in 1...settings.maxAttempts {
            let failure = await post(event)
            guard let failure else {
                metrics.delivered.increment()
                logger.debug(
                    "webhook delivered",
                    metadata: [
                        "room": "\(event.roomID)", "event": "\(event.type)",
                        "id": "\(event.id)", "attempt": "\(attempt)",
                    ]
                )
                return
            }
            if attempt == settings.maxAttempts {
                metrics.failed.increment()
                logger.warning(
                    "webhook failed, giving up",
                    metadata: [
                        "room": "\(event.roomID)", "event": "\(event.type)", "id": "\(event.id)",
                        "attempts": "\(attempt)", "error": "\(failure)",
                    ]
                )
                return
            }
            metrics.retried.increment()
            let delay = Self.backoff(afterAttempt: attempt)
            logger.info(
                "webhook attempt failed, retrying",
                metadata: [
                    "room": "\(event.roomID)", "event": "\(event.type)", "id": "\(event.id)", "attempt": "\(attempt)",
                    "error": "\(failure)",
                    "retry_in_ms":
                        "\(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000)",
                ]
            )
            try? await Task.sleep(for: delay)
        }
    }

    /// The longest wait between two attempts of an event (reached after the 9th:
    /// `WebhookSettings.maxAttemptsRange` is chosen with it).
    static let maxBackoff = Duration.seconds(300)

    /// 1 s · 2^(attempt-1), ± 10 % jitter, at most `maxBackoff`.
    static func backoff(afterAttempt attempt: Int) -> Duration {
        backoff(afterAttempt: attempt, jitter: Double.random(in: 0.9...1.1))
    }

    /// `backoff(afterAttempt:)` with the jitter factor given (0.9...1.1).
    static func backoff(afterAttempt attempt: Int, jitter: Double) -> Duration {
        let cap = Double(maxBackoff.components.seconds) * 1000
        let base = min(1000.0 * Double(1 << min(max(attempt - 1, 0), 20)), cap)
        return .milliseconds(Int64(min(base * jitter, cap)))
    }

    /// The most of an answer's body an attempt reads (and drops): roomd needs only
    /// the status. A body read to its end keeps the connection for the next event;
    /// a longer one, or one still coming at the attempt's deadline, closes it.
    static let maxBodyRead = 4096

    /// Test mode: the next `count` attempts fail with `status` (nil: a timeout).
    func injectFailures(next count: Int, status: Int?) {
        injected.withLock { $0 = (count, status) }
    }

    /// One POST (`SignedPoster`), `timeout_ms` for all of it. Nil on a 2xx, else
    /// what went wrong. The status decides: a 2xx whose body is long or slow is
    /// delivered, its connection closed.
    private func post(_ event: WebhookEvent) async -> String? {
        let fault: (count: Int, status: Int?)? = injected.withLock { state in
            guard state.count > 0 else { return nil }
            state.count -= 1
            return state
        }
        if let fault {
            guard let status = fault.status else {
                try? await Task.sleep(for: .milliseconds(settings.timeoutMs))
                return "timed out (test fault)"
            }
            return "HTTP \(status) (test fault)"
        }
        switch await poster.post(
            event.body,
            to: settings.url,
            timeoutMs: settings.timeoutMs,
            readingUpTo: Self.maxBodyRead
        ) {
        case .failed(let error):
            return error
        case .answered(let status, let body):
            if body == nil {
                logger.debug(
                    "webhook answer's body not read to its end: connection closed",
                    metadata: ["id": "\(event.id)", "status": "\(status)"]
                )
            }
            if (200..<300).contains(status) { return nil }
            return "HTTP \(status)"
        }
    }
}

/// `roomd_webhook_deliveries_total{result}` (delivered, retried, failed) and
/// `roomd_webhook_dropped_total`, on the server's registry.
struct WebhookMetrics: Sendable {
    let delivered: Metrics.Counter
    let retried: Metrics.Counter
    let failed: Metrics.Counter
    let dropped: Metrics.Counter
}
