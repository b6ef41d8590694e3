import Foundation

/// Runs blocking `body` on a thread of its own (not the test pool's, which a
/// blocking wait would hold, and which other tests' blocking calls can hold
/// back) and returns what it returns.
///
/// Swift's cooperative pool has one thread per core: two on the CI machine,
/// shared by every test that runs at once. A test that blocks one of them
/// (a child process waited for, a socket read, a `usleep`) stalls the awaits
/// of all the others, which then race their daemons' real-time deadlines and
/// lose now and then. So every blocking helper of this target has an `async`
/// overload that runs it here; in an async test the compiler picks the
/// overload (and asks for the `await`).
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

/// `onThread` for a body that cannot throw.
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.start()
    }
}
