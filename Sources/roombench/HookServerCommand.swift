import ArgumentParser
import Foundation
import RoomWire
import RoomdTesting

/// `roombench hook-server`: the app's hook (PROTOCOL.md section 30) for `make bench`'s
/// hooks rows: RoomdTesting's `HookServer` answering `{"allow":true}` after --delay-ms,
/// or never for the messages of --silent-room (roomd's timeout_ms ends them). Prints
/// `hook listening on URL`, serves until its stdin closes.
struct HookServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hook-server",
        abstract: "(r) A hook for the hooks rows: allow after --delay-ms; never answer --silent-room's messages."
    )

    @Option(help: "Milliseconds before each answer.") var delayMs = 5
    @Option(help: "A room whose hooked calls are never answered (roomd's timeout_ms fails them).")
    var silentRoom: String?
    @Option(help: "roomd's HS256 secret file: requests are verified with it (needed for --silent-room).")
    var secretFile: String?

    func run() throws {
        let secret = try secretFile.map { path -> [UInt8] in
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
            return bytes
        }
        let server = try HookServer(secret: secret, keepingRequests: false)
        let allow: HookServer.Answer = delayMs > 0 ? .delayed(.milliseconds(delayMs), .allow) : .allow
        server.defaultAnswer = allow
        // Every request is verified and read in both modes, so that the `timeout` row differs from
        // `answer` only by the silent room (the hook's own CPU is the same on the shared cores).
        server.decide { event in
            guard let silentRoom else { return nil }
            return event["data"]?["room_id"]?.stringValue == silentRoom ? .silence : nil
        }
        print("hook listening on \(server.url)")
        fflush(nil)
        while readLine() != nil {}  // until stdin closes
        server.close()
    }
}
