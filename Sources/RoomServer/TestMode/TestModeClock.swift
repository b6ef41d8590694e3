import Foundation
import RoomModel
import Synchronization

/// Test mode's manual clock (PROTOCOL.md section 25, `--clock manual`):
/// wall-clock milliseconds that move only when `POST /v2/test/clock`
/// advances them (`Schedule.advance(to:)`). The model, the join deadline
/// and token expiry read it. Written by its service thread only (checked
/// in debug builds); atomic so the token verifier's `now` closure may read
/// it from any thread.
final class TestModeClock: RoomClock, Sendable {
    private let millis: Atomic<Int64>
    private let thread: ServiceThread

    init(start: Int64, thread: ServiceThread) {
        millis = Atomic(start)
        self.thread = thread
    }

    var now: Int64 {
        get { millis.load(ordering: .relaxed) }
        set {
            thread.assertIsCurrent()
            millis.store(newValue, ordering: .relaxed)
        }
    }

    func nowMillis() -> Int64 { now }

    /// For `TokenVerifier`: the same time as a `Date`.
    var date: Date { Date(timeIntervalSince1970: Double(now) / 1000) }
}
