import Foundation
import Synchronization

/// A process a test stops (SIGSTOP) and continues (SIGCONT) itself, and that
/// a thread of its own continues after `atMost` seconds if the test has not
/// by then: however late the test's task runs (the cooperative pool has two
/// threads on the CI machine, shared by every test that runs at once), the
/// process is never stopped past what the test allows, e.g. a room home's
/// lease (3 s, renewed every second, so one stopped 2 s can lose it).
final class StoppedProcess: Sendable {
    private let pid: pid_t
    private let continued = Atomic<Bool>(false)

    init(_ pid: pid_t, atMost seconds: Double) {
        self.pid = pid
        kill(pid, SIGSTOP)
        resume(after: seconds)
    }

    /// Continues the process now; later calls, and the thread's, do nothing.
    func resume() {
        if !continued.exchange(true, ordering: .acquiringAndReleasing) { kill(pid, SIGCONT) }
    }

    /// Continues the process `seconds` from now, timed by a thread of its own
    /// (not a `Task.sleep`, which a busy pool resumes late).
    func resume(after seconds: Double) {
        Thread { [self] in
            usleep(UInt32(seconds * 1_000_000))
            resume()
        }.start()
    }
}
