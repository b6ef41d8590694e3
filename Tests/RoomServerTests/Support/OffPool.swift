import Foundation

/// Runs blocking work (starting processes and waiting for a line, polling
/// for an exit) on a thread of its own, not on one of Swift concurrency's
/// cooperative threads: on a 2-core machine there are only two of those,
/// and a test that blocks them stalls every other test in the process.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
        thread.start()
    }
}

extension WebhookReceiver {
    /// Starts a receiver without blocking a cooperative thread.
    static func start(mode: Mode = .ok, delayMillis: Int = 0, secret: [UInt8] = Daemon.defaultSecret) async throws
        -> WebhookReceiver
    {
        try await offPool { try WebhookReceiver(mode: mode, delayMillis: delayMillis, secret: secret) }
    }
}

extension Daemon {
    /// `start(settings:environment:)` without blocking a cooperative thread.
    static func launch(settings: String? = nil, environment: [String: String] = [:]) async throws -> Daemon {
        try await offPool { try Daemon.start(settings: settings, environment: environment) }
    }

    /// `start(webhooksTo:extra:settings:)` without blocking a cooperative thread.
    static func launch(webhooksTo url: String, extra: String = "", settings: String? = nil) async throws -> Daemon {
        try await offPool { try Daemon.start(webhooksTo: url, extra: extra, settings: settings) }
    }

    /// `stop(signal:timeout:)` without blocking a cooperative thread.
    func stopping(signal: Int32 = SIGTERM, timeout: Double = 5) async throws -> (status: Int32, seconds: Double) {
        try await offPool { self.stop(signal: signal, timeout: timeout) }
    }
}
