import ArgumentParser
import RoomWire

/// `roomd send ROOM MESSAGE`: a message from the server to a room, a peer or
/// a role (REST `send-message`; the peers get `on-broadcast`).
struct Send: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a message as the server to a room (or one --peer, or a --role)."
    )
    @OptionGroup var options: OperatorOptions
    @Argument(help: "Room id.") var room: String
    @Argument(help: "The message text.") var message: String
    @Option(help: "The message type (default chat).") var type: String?
    @Option(help: "Only to this peer.") var peer: String?
    @Option(help: "Only to the peers of this role.") var role: String?

    func validate() throws {
        if peer != nil && role != nil { throw ValidationError("pass at most one of --peer and --role") }
    }

    func run() throws {
        var body: [JSON.Member] = [.init("message", .string(message))]
        if let type { body.append(.init("type", .string(type))) }
        if let peer { body.append(.init("peer_id", .string(try peerPath(peer)))) }
        if let role { body.append(.init("role", .string(role))) }
        let answer = try options.request(
            .post,
            "/v2/active-rooms/\(try roomPath(room))/send-message",
            body: .object(body)
        )
        options.print(answer) { answer in
            [
                "sent \(answer["message_id"]?.stringValue ?? "?") at "
                    + (answer["timestamp"]?.intValue.map(readableTime) ?? "?")
            ]
        }
    }
}
