import Foundation

/// Runs blocking `body` on a thread of its own (not the test pool's, which a
/// blocking wait would hold, and which other tests' blocking calls can hold
/// back) and returns what it returns.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do {
                continuation.resume(returning: try body())
            } catch {
                continuation.resume(throwing: error)
            }
        }
        thread.start()
    }
}
