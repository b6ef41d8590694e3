import CNats

#if canImport(Glibc)
import Glibc
#endif

/// A failed C call as a `ClusterError`, with the client's last error text
/// (thread-local: read it on the thread that made the call).
func natsError(_ operation: String, _ status: natsStatus) -> ClusterError {
    let text = String(cString: natsStatus_GetText(status))
    var last = NATS_OK
    let detail = nats_GetLastError(&last).map { String(cString: $0) } ?? ""
    return ClusterError(operation: operation, status: text, detail: detail)
}

/// Milliseconds of a monotonic clock (for ages and deadlines, never shown).
func monotonicMillis() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}
