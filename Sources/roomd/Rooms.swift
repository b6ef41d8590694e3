import ArgumentParser
import Foundation
import RoomTokens
import RoomWire

/// `roomd rooms list|get|create|end|unlock`: the live rooms over the REST API
/// (PROTOCOL.md sections 9 and 23), with a management token minted from the secret.
struct Rooms: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The daemon's live rooms (REST): list, get, create, end, unlock.",
        subcommands: [List.self, Get.self, Create.self, End.self, Unlock.self]
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

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Open a room's session before anyone joins (REST POST /v2/rooms), with metadata and draft polls.",
            discussion: """
                The session waits at least an hour for its first join. --set KEY=VALUE adds a session-store \
                entry: VALUE is taken as JSON when it parses (--set 'lineup=["Ada","Cy"]', --set count=3), \
                else as a string (--set topic=Pilots; --set 'n="42"' for the string "42"). --polls FILE (- for \
                stdin) is a JSON array of polls as POST /v2/rooms takes them (poll-info-set params with \
                `questions`); each becomes a draft a host starts later. A room that has a session is 409 40904.
                """
        )
        @OptionGroup var options: OperatorOptions
        @Argument(help: "Room id.") var room: String
        @Option(name: .customLong("set"), help: ArgumentHelp("A session-store entry.", valueName: "key=value"))
        var entries: [String] = []
        @Option(help: "A file of draft polls (a JSON array), or - for stdin.") var polls: String?

        /// What is read of a polls file; the daemon's bound on a body (limits.max_message_bytes) is 413 41300.
        static let maxPollsFileBytes = 1 << 20

        func run() throws {
            var body: [JSON.Member] = [.init("room_id", .string(try roomPath(room)))]
            if !entries.isEmpty {
                var metadata: [JSON.Member] = []
                for entry in entries {
                    guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
                        throw ValidationError("--set: expected KEY=VALUE, got \"\(entry.prefix(80))\"")
                    }
                    let text = String(entry[entry.index(after: equals)...])
                    metadata.append(.init(String(entry[..<equals]), (try? JSON.parse(text)) ?? .string(text)))
                }
                body.append(.init("metadata", .object(metadata)))
            }
            if let polls {
                let data =
                    polls == "-"
                    ? FileHandle.standardInput.readDataToEndOfFile()
                    : FileManager.default.contents(atPath: polls)
                guard let data else { throw ValidationError("--polls: cannot read \(polls)") }
                guard data.count <= Self.maxPollsFileBytes else {
                    throw ValidationError("--polls: \(polls) has \(data.count) bytes, over \(Self.maxPollsFileBytes)")
                }
                let parsed: JSON
                do { parsed = try JSON.parse(Array(data)) } catch {
                    throw ValidationError("--polls: \(polls) is not JSON: \(error)")
                }
                guard case .array = parsed else {
                    throw ValidationError("--polls: expected a JSON array of polls, got \(parsed.typeName)")
                }
                body.append(.init("polls", parsed))
            }
            let answer = try options.request(.post, "/v2/rooms", body: .object(body))
            options.print(answer) { answer in ["created " + roomLine(answer["room"] ?? .null)] }
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

/// `demo  3 peers  session 8bab…  started 2026-11-21T04:40:00Z` (`locked` when it is).
func roomLine(_ room: JSON) -> String {
    let count = room["peer_count"]?.intValue ?? 0
    var line = "\(room["room_id"]?.stringValue ?? "?")  \(count) peer\(count == 1 ? "" : "s")"
    line += "  session \(room["session_id"]?.stringValue ?? "-")"
    line += "  started " + (room["started_at"]?.intValue.map(readableTime) ?? "-")
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
