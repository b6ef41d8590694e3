import ArgumentParser
import Dispatch
import Synchronization

/// Synchronous on purpose: `serve` runs on the main thread, so it can block
/// SIGTERM/SIGINT before any other thread exists (see `Signals`).
@main
struct Roomd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roomd",
        abstract: "A real-time room signalling daemon (JSON-RPC over WebSocket).",
        subcommands: [Serve.self, Token.self, CheckConfig.self],
        defaultSubcommand: Serve.self
    )
}

/// Runs async work (jwt-kit's signing API) to completion from a synchronous command.
func runBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value: Result<T, any Error>
        do { value = .success(try await body()) } catch { value = .failure(error) }
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}
