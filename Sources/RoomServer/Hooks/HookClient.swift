import Logging
import Metrics
import NIOCore
import RoomConfig
import RoomModel
import Synchronization

/// One hooked call on its way to the app's backend: the ticket the answer
/// comes back with, the event, and the body encoded on the service thread.
struct HookRequest: Sendable {
    let ticket: UInt64
    let event: HookSettings.Event
    let body: [UInt8]
}

/// A hook's answer, handed back to the service thread's inbox.
struct HookResult: Sendable {
    let ticket: UInt64
    let verdict: HookVerdict
}

/// Calls the app's hook (PROTOCOL.md section 30) off the service thread: the
/// service thread calls `ask`, which returns at once; the POST runs on the
/// poster's event loop (`HookConnections` for an `http://` hook, the
/// webhooks' async-http-client for `https://`; `SignedPoster`'s signing
/// either way), and its verdict goes back through `deliver` (the service
/// thread's inbox) from there. Never retried; `timeout_ms` for
/// all of it; at most `HookVerdict.maxBodyBytes` of the answer read.
final class HookClient: Sendable {
    let settings: HookSettings
    private let poster: SignedPoster
    /// An `http://` hook's own client, on the poster's loop (`HookConnections`);
    /// nil for `https://`, which goes through the poster's async-http-client.
    private let connections: HookConnections?
    private let metrics: HookMetrics
    private let deliver: @Sendable ([HookResult]) -> Void
    /// The verdicts of the poster's loop turn so far, delivered together when it ends.
    private let verdicts = Verdicts()
    /// Test mode's injected failures: how many calls still fail, and how
    /// (a status, or nil: a timeout). Set on the service thread, taken here.
    private let injected = Mutex<(count: Int, status: Int?)>((0, nil))

    init(
        settings: HookSettings,
        poster: SignedPoster,
        metrics: HookMetrics,
        deliver: @escaping @Sendable ([HookResult]) -> Void
    ) {
        self.settings = settings
        self.poster = poster
        connections = HookConnections(
            url: settings.url,
            eventLoop: poster.eventLoop,
            maxConnections: HookGate.maxInFlight,
            connectTimeoutMs: settings.timeoutMs
        )
        self.metrics = metrics
        self.deliver = deliver
    }

    /// Service thread: POST `request` off this thread, on the HTTP client's
    /// event loop; its verdict is delivered later, exactly once, from that
    /// loop (no task per call). Handing over a loop turn's requests together
    /// cost less CPU but made the hook's latency jump when timeouts closed
    /// connections (levers.md): one request, one hand-over.
    func ask(_ request: HookRequest) {
        let started = ContinuousClock.now
        poster.eventLoop.execute { [self] in send(request, started: started) }
    }

    /// On the poster's event loop: one request, or test mode's injected failure instead.
    private func send(_ request: HookRequest, started: ContinuousClock.Instant) {
        let answer: @Sendable (HookVerdict) -> Void = { [self] verdict in
            metrics.seconds.recordNanoseconds(Self.nanoseconds(ContinuousClock.now - started))
            collect(HookResult(ticket: request.ticket, verdict: verdict))
        }
        let fault: (count: Int, status: Int?)? = injected.withLock { state in
            guard state.count > 0 else { return nil }
            state.count -= 1
            return state
        }
        if let fault {
            guard let status = fault.status else {
                poster.eventLoop.scheduleTask(in: .milliseconds(Int64(settings.timeoutMs))) {
                    answer(.failed("timed out (test fault)"))
                }
                return
            }
            answer(.failed("HTTP \(status) (test fault)"))
            return
        }
        let event = request.event
        let answered: @Sendable (SignedPoster.Outcome) -> Void = { outcome in
            switch outcome {
            case .failed(let error): answer(.failed(error))
            case .answered(let status, let body): answer(HookVerdict.of(status: status, body: body, event: event))
            }
        }
        if let connections {
            connections.post(
                request.body,
                headers: poster.headers(for: request.body),
                timeoutMs: settings.timeoutMs,
                readingUpTo: HookVerdict.maxBodyBytes,
                then: answered
            )
        } else {
            poster.post(
                request.body,
                to: settings.url,
                timeoutMs: settings.timeoutMs,
                readingUpTo: HookVerdict.maxBodyBytes,
                then: answered
            )
        }
    }

    /// On the poster's event loop: one verdict. The first of a loop turn
    /// queues a task, which runs after the turn's I/O and hands every
    /// verdict the turn read to the service thread's inbox in one post (one
    /// wake-up of the service thread, not one per verdict).
    private func collect(_ result: HookResult) {
        verdicts.results.append(result)
        guard verdicts.results.count == 1 else { return }
        poster.eventLoop.execute { [self] in
            let results = verdicts.results
            verdicts.results.removeAll(keepingCapacity: true)
            deliver(results)
        }
    }

    /// Test mode: the next `count` hook calls fail with `status` (nil: a timeout) without
    /// reaching the hook; 0 clears it.
    func injectFailures(next count: Int, status: Int?) {
        injected.withLock { $0 = (count, status) }
    }

    /// Test mode's fault as `GET /v2/test/faults` lists it, or nil when none is left.
    var injectedFault: (left: Int, status: Int?)? {
        injected.withLock { state in state.count > 0 ? (state.count, state.status) : nil }
    }

    /// Counts one verdict.
    func count(_ event: HookSettings.Event, _ outcome: HookMetrics.Outcome) {
        metrics.count(event, outcome)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// `roomd_hook_requests_total{type,outcome}` and `roomd_hook_seconds`, on the server's registry.
struct HookMetrics: Sendable {
    enum Outcome: String, Sendable, CaseIterable {
        case allow
        case deny
        case failed
    }

    private let counters: [String: Metrics.Counter]
    let seconds: Metrics.Timer

    /// The families exist (at 0) without hooks too: /metrics always lists them.
    init(factory: DescribedMetricsFactory) {
        var counters: [String: Metrics.Counter] = [:]
        for event in HookSettings.Event.allCases {
            for outcome in Outcome.allCases {
                counters[Self.key(event, outcome)] = Metrics.Counter(
                    label: "roomd_hook_requests_total",
                    dimensions: [("type", event.rawValue), ("outcome", outcome.rawValue)],
                    factory: factory
                )
            }
        }
        self.counters = counters
        seconds = Metrics.Timer(label: "roomd_hook_seconds", factory: factory)
    }

    func count(_ event: HookSettings.Event, _ outcome: Outcome) {
        counters[Self.key(event, outcome)]?.increment()
    }

    private static func key(_ event: HookSettings.Event, _ outcome: Outcome) -> String {
        "\(event.rawValue)/\(outcome.rawValue)"
    }
}

/// The verdicts one turn of the poster's event loop read (`HookClient.collect`).
/// Owned by the poster's event loop thread (`SignedPoster.eventLoop`): every
/// verdict is made there, and the task that hands them over runs there.
private final class Verdicts: @unchecked Sendable {
    var results: [HookResult] = []
}
