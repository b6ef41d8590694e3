import CWebSockets
import Logging

/// libwebsockets' own log lines, routed into roomd's logger at debug level,
/// so that a default run prints only roomd's own lines (one per event),
/// never lws' (e.g. one `accept: errno 24` per refused connection).
final class LWSLog {
    /// The sink of the running server. `nonisolated(unsafe)`: set once by
    /// `RoomServer.start()` before `lws_create_context`, then read only by
    /// lws' log calls, which run on the thread that created the context
    /// and then on the service thread — never two at once.
    nonisolated(unsafe) static var current: LWSLog?

    let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    static func install(_ sink: LWSLog) {
        current = sink
        lws_set_log_level(mask(for: sink.logger.logLevel), lwsLogEmit)
    }

    /// The lws levels worth formatting: every line goes to `debug`, so below
    /// debug none would be printed — and lws formats a line (vsnprintf, then
    /// a String here) before the logger can drop it. NOTICE is the costly
    /// one: Debian's libev plugin logs every socket event at NOTICE
    /// (`elops_io_ev: wsi … flags …`), ~60,000 lines/s in a 3M deliveries/s
    /// fan-out, ~2 % of roomd's CPU (perf). ERR and WARN are rare: kept.
    static func mask(for level: Logger.Level) -> Int32 {
        level <= .debug ? Int32(LLL_ERR | LLL_WARN | LLL_NOTICE) : Int32(LLL_ERR | LLL_WARN)
    }

    func emit(level: Int32, line: String) {
        logger.debug(
            "libwebsockets: \(line.hasSuffix("\n") ? String(line.dropLast()) : line)",
            metadata: ["lws_level": "\(level)"]
        )
    }
}

/// lws' log callback: a plain top-level function (lws calls it from C).
func lwsLogEmit(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line, let sink = LWSLog.current else { return }
    sink.emit(level: level, line: String(cString: line))
}
