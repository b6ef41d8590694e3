import CWebSockets

#if canImport(Glibc)
import Glibc
#endif

/// An lws_sul timer on the service thread: one-shot (armed with `schedule`),
/// or periodic (`every:`, re-armed after each run). The sul is the first
/// field of the allocation, followed by the owning timer, so the C callback
/// can find its way back without globals. Debug builds check, each time one
/// fires, that it runs on its server's service thread.
final class LoopTimer {
    private let storage: UnsafeMutableRawPointer
    private let context: OpaquePointer
    private let action: () -> Void
    /// Set for a periodic timer.
    private let period: Int?

    /// `every`: run `action` every that many milliseconds, starting that long from now.
    init(context: OpaquePointer, every period: Int? = nil, action: @escaping () -> Void) {
        self.context = context
        self.action = action
        self.period = period
        let size = MemoryLayout<lws_sorted_usec_list_t>.stride + MemoryLayout<UnsafeRawPointer>.stride
        storage = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        storage.storeBytes(
            of: Unmanaged.passUnretained(self).toOpaque(),
            toByteOffset: MemoryLayout<lws_sorted_usec_list_t>.stride,
            as: UnsafeMutableRawPointer.self
        )
        if let period { schedule(afterMillis: period) }
    }

    deinit {
        cancel()
        storage.deallocate()
    }

    private var sul: UnsafeMutablePointer<lws_sorted_usec_list_t> {
        storage.assumingMemoryBound(to: lws_sorted_usec_list_t.self)
    }

    /// (Re)arms the timer to fire once after `millis`.
    func schedule(afterMillis millis: Int) {
        lws_sul_schedule(context, 0, sul, loopTimerFired, lws_usec_t(millis) * 1000)
    }

    /// Arms the timer for a wall-clock deadline, or cancels it when there is none.
    func schedule(at deadline: Int64?, now: Int64) {
        guard let deadline else { return cancel() }
        schedule(afterMillis: max(0, Int(deadline - now)))
    }

    func cancel() { cws_sul_cancel(context, sul) }

    fileprivate static func fire(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
        guard let sul else { return }
        let raw = UnsafeMutableRawPointer(sul).load(
            fromByteOffset: MemoryLayout<lws_sorted_usec_list_t>.stride,
            as: UnsafeMutableRawPointer.self
        )
        let timer = Unmanaged<LoopTimer>.fromOpaque(raw).takeUnretainedValue()
        #if DEBUG
        // The context's user is its RoomServer (ServiceLoop.open), as in Callback.swift.
        if let server = lws_context_user(timer.context) {
            Unmanaged<RoomServer>.fromOpaque(server).takeUnretainedValue().thread.assertIsCurrent()
        }
        #endif
        timer.action()
        if let period = timer.period { timer.schedule(afterMillis: period) }
    }
}

/// Milliseconds of a clock that never jumps (keepalive, not wall time).
func monotonicMillis() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}

func loopTimerFired(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    LoopTimer.fire(sul)
}
