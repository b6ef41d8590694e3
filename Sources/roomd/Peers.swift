import ArgumentParser
import RoomWire

/// `roomd peers list|get|remove|update`: a live room's peers over the REST
/// API (PROTOCOL.md section 9).
struct Peers: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A live room's peers (REST): list, get, remove, update.",
        subcommands: [List.self, Get.self, Remove.self, Update.self]
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The room's peers, in join order.")
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String

        func run() throws {
            let answer = try options.request(.get, "/v2/active-rooms/\(try roomPath(room))/peers")
            options.print(answer) { answer in
                let peers = answer["peers"]?.arrayValue ?? []
                return peers.isEmpty ? ["no peers"] : peers.map(peerLine)
            }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "One peer.")
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String
        @Argument(help: "Peer id.") var peer: String

        func run() throws {
            let answer = try options.request(.get, "/v2/active-rooms/\(try roomPath(room))/peers/\(try peerPath(peer))")
            options.print(answer) { [peerLine($0)] }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a peer (--peer) or every peer of a role (--role); they are closed with 4001."
        )
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String
        @Option(help: "The peer to remove.") var peer: String?
        @Option(help: "Remove every peer of this role.") var role: String?
        @Option(help: "Shown to the removed peers (on-peer-leave-request).") var reason: String =
            "removed by the operator"

        func validate() throws {
            if (peer == nil) == (role == nil) { throw ValidationError("pass exactly one of --peer and --role") }
        }

        func run() throws {
            var body: [JSON.Member] = [.init("reason", .string(reason))]
            if let peer { body.append(.init("peer_id", .string(try peerPath(peer)))) }
            if let role { body.append(.init("role", .string(role))) }
            let answer = try options.request(
                .post,
                "/v2/active-rooms/\(try roomPath(room))/remove-peers",
                body: .object(body)
            )
            options.print(answer) { _ in ["removed " + (peer.map { "peer \($0)" } ?? "every \(role!)")] }
        }
    }

    struct Update: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Change a peer's role, name or data.")
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String
        @Argument(help: "Peer id.") var peer: String
        @Option(help: "The new role (a forced role change).") var role: String?
        @Option(help: "The new display name.") var name: String?
        @Option(help: "The new metadata string.") var data: String?

        func validate() throws {
            if role == nil && name == nil && data == nil {
                throw ValidationError("pass at least one of --role, --name and --data")
            }
        }

        func run() throws {
            var body: [JSON.Member] = []
            if let role { body.append(.init("role", .string(role))) }
            if let name { body.append(.init("name", .string(name))) }
            if let data { body.append(.init("data", .string(data))) }
            let answer = try options.request(
                .post,
                "/v2/active-rooms/\(try roomPath(room))/peers/\(try peerPath(peer))",
                body: .object(body)
            )
            options.print(answer) { [peerLine($0)] }
        }
    }
}
