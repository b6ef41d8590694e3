import ArgumentParser

@main
struct Roomd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roomd",
        abstract: "A real-time room signalling daemon (JSON-RPC over WebSocket).",
        subcommands: [Serve.self, Token.self, CheckConfig.self],
        defaultSubcommand: Serve.self
    )
}
