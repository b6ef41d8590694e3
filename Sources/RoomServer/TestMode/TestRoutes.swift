import Logging
import RoomModel
import RoomWire

/// `/v2/test/*` (PROTOCOL.md section 25): routes that exist only in test
/// mode, each behind a management token. Service thread only.
final class TestRoutes {
    static let prefix = "/v2/test/"

    private let rest: RestAPI
    private let schedule: Schedule
    private let logger: Logger

    init(rest: RestAPI, schedule: Schedule, logger: Logger) {
        self.rest = rest
        self.schedule = schedule
        self.logger = logger
    }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        do throws(RoomError) {
            try rest.authorize(request)
            switch (request.method, request.path) {
            case (.post, Self.prefix + "clock"): return try moveClock(try rest.body(request))
            case (.get, Self.prefix + "clock"):
                guard let clock = schedule.manual else { throw Self.noManualClock }
                return .json(200, ["now": .int(clock.now)])
            default:
                return .error(404, code: 404, "no route for \(request.method.rawValue) \(request.path)")
            }
        } catch {
            return .error(RestAPI.status(for: error.code), code: error.code.rawValue, error.message)
        }
    }

    static let noManualClock = RoomError(
        .wrongState,
        "the clock is the system's: start roomd with --test-mode --clock manual"
    )

    /// `{advance_ms}` or `{set_ms}` → `{now}`: every timer passed fires, in
    /// time order, before the answer.
    private func moveClock(_ body: Params) throws(RoomError) -> HTTPResponse {
        guard let clock = schedule.manual else { throw Self.noManualClock }
        let from = clock.now
        let target: Int64
        switch (body.has("advance_ms"), body.has("set_ms")) {
        case (true, false):
            let advance = try body.int("advance_ms", in: 0...TestMode.maxAdvanceMillis)!
            target = from + Int64(advance)
        case (false, true):
            let set = try body.int("set_ms", in: 0...Int(Int64.max / 2))!
            guard Int64(set) >= from else {
                throw .invalidParams("set_ms: the clock does not go back (now \(from), got \(set))")
            }
            guard Int64(set) - from <= Int64(TestMode.maxAdvanceMillis) else {
                throw .invalidParams("set_ms: at most \(TestMode.maxAdvanceMillis) ms ahead of now (\(from))")
            }
            target = Int64(set)
        case (true, true): throw .invalidParams("advance_ms, set_ms: give one, not both")
        case (false, false): throw .invalidParams("advance_ms or set_ms: required")
        }
        let ran = schedule.advance(to: target)
        logger.info(
            "test clock moved",
            metadata: ["from": "\(from)", "to": "\(target)", "timers": "\(ran)"]
        )
        return .json(200, ["now": .int(clock.now)])
    }
}
