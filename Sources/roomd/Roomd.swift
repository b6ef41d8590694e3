import ArgumentParser

/// Synchronous on purpose: `serve` runs on the main thread, so it can block
/// SIGTERM/SIGINT before any other thread exists (see `Signals`).
@main
struct Roomd: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roomd",
        abstract: "A real-time room signalling daemon (JSON-RPC over WebSocket).",
        version: roomdVersion,
        subcommands: [
            Serve.self, Token.self, CheckConfig.self, Join.self, Replay.self, Rooms.self, Peers.self, Stage.self,
            Bans.self, StreamCommand.self, Feed.self, Send.self, Webhooks.self, Audit.self, Reports.self,
        ],
        defaultSubcommand: Serve.self
    )
}

/// `roomd --version` (and `roomd serve --version`).
let roomdVersion = "roomd 0.2.0 (protocol 1.1)"
