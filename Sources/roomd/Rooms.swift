import ArgumentParser
import RoomTokens
import RoomWire

/// `roomd rooms list|get|end|unlock`: the live rooms over the REST API
/// (PROTOCOL.md section 9), with a management token minted from the secret.
struct Rooms: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The daemon's live rooms (REST): list, get, end, unlock.",
        subcommands: [List.self, Get.self, End.self, Unlock.self]
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the live rooms: one line each (room, peers, session, started), or --json."
        )
        @OptionGroup var options: OperatorOptions
        @Option(help: "At most this many rooms (1 to 100).") var limit: Int?
        @Option(help: "The room id after which to start (a page's `last`).") var start: String?

        func run() throws {
            var query: [String] = []
            if let limit { query.append("limit=\(limit)") }
            if let start { query.append("start=\(try roomPath(start))") }
            let answer = try options.request(
                .get,
                "/v2/active-rooms" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
            )
            options.print(answer) { answer in
                let rooms = answer["rooms"]?.arrayValue ?? []
                var lines = rooms.map(roomLine)
                if rooms.isEmpty { lines.append("no live rooms") }
                if let last = answer["last"]?.stringValue { lines.append("more after \(last): --start \(last)") }
                return lines
            }
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A room and its peers.")
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String

        func run() throws {
            let answer = try options.request(.get, "/v2/active-rooms/\(try roomPath(room))")
            options.print(answer) { answer in
                [roomLine(answer["room"] ?? .null)] + (answer["peers"]?.arrayValue ?? []).map { "  " + peerLine($0) }
            }
        }
    }

    struct End: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "End a room for everyone (closed with 4002), optionally locking its id."
        )
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String
        @Option(help: "Shown to the peers (on-peer-leave-request).") var reason: String = "ended by the operator"
        @Flag(help: "Keep the id locked: joins are refused until `roomd rooms unlock`.") var lock = false

        func run() throws {
            let body: JSON = ["reason": .string(reason), "lock": .bool(lock)]
            let answer = try options.request(.post, "/v2/active-rooms/\(try roomPath(room))/end-room", body: body)
            options.print(answer) { _ in ["ended \(room)" + (lock ? " (locked)" : "")] }
        }
    }

    struct Unlock: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lift an end-room lock (any room id).")
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String

        func run() throws {
            let answer = try options.request(.post, "/v2/active-rooms/\(try roomPath(room))/unlock", body: .object([]))
            options.print(answer) { _ in ["unlocked \(room)"] }
        }
    }
}

/// A room id as a path segment (ids are `[A-Za-z0-9_-]`, so nothing needs escaping).
func roomPath(_ room: String) throws -> String {
    guard TokenMinter.isValidRoomID(room) else {
        throw ValidationError("\"\(room)\" is not a room id: 1 to 64 characters from A-Z, a-z, 0-9, _ and -")
    }
    return room
}

/// A peer id as a path segment (roomd's ids are 32 hex digits).
func peerPath(_ peer: String) throws -> String { try pathSegment(peer, "peer") }

/// One of roomd's ids (a peer's, a stage request's) as a path segment: up
/// to 64 letters, digits, `-` and `_`, so nothing needs escaping.
func pathSegment(_ id: String, _ kind: String) throws -> String {
    guard !id.isEmpty, id.count <= 64, id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    else {
        throw ValidationError("\"\(id)\" is not a \(kind) id")
    }
    return id
}

/// `demo  3 peers  session 8bab…  started 1795312616898` (`locked` when it is).
func roomLine(_ room: JSON) -> String {
    let count = room["peer_count"]?.intValue ?? 0
    var line = "\(room["room_id"]?.stringValue ?? "?")  \(count) peer\(count == 1 ? "" : "s")"
    line += "  session \(room["session_id"]?.stringValue ?? "-")  started \(room["started_at"]?.intValue ?? 0)"
    if room["locked"] == .bool(true) { line += "  locked" }
    return line
}

/// `4bc7…  host  Ada (user ada)  tracks: ada-mic`.
func peerLine(_ peer: JSON) -> String {
    let info = peer["info"] ?? .null
    var line = "\(peer["peer_id"]?.stringValue ?? "?")  \(peer["role"]?.stringValue ?? "?")"
    line += "  \(info["name"]?.stringValue ?? "")  (user \(info["user_id"]?.stringValue ?? "?"))"
    if case .object(let tracks) = peer["tracks"] ?? .null, !tracks.isEmpty {
        line += "  tracks: " + tracks.map(\.key).joined(separator: ", ")
    }
    if let groups = peer["groups"]?.arrayValue, !groups.isEmpty {
        line += "  groups: " + groups.compactMap(\.stringValue).joined(separator: ", ")
    }
    return line
}
