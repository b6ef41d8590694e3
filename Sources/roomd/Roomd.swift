import ArgumentParser

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
