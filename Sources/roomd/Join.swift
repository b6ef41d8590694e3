import ArgumentParser
import Dispatch
import Foundation
import RoomClient
import RoomTokens
import RoomWire
import Synchronization

/// `roomd join`: a bot peer on the command line (like `lk room join`). It
/// mints its own token (dev secret or `--secret-file`), joins, prints every
/// push as one compact line, and reads calls from stdin as
/// `method {json params}` lines.
struct Join: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Join a room as a bot: print pushes, read calls from stdin as `method {json params}` lines.",
        discussion: """
            Output lines: `< method {params}` for a push, `= {result}` for an answer, \
            `! CODE message` for an error. End of input (Ctrl-D) disconnects without \
            `leave`: the peer stays for the room's reconnect grace. Type `leave` to leave.
            """
    )

    @Option(help: "Room id.") var room: String
    @Option(help: "Role name.") var role: String
    @Option(help: "User id (default: bot-PID).") var user: String?
    @Option(help: "Display name.") var name: String?
    @Option(help: "user_restrictions claim, e.g. view_and_polls_only.") var restrictions: String?
    @Option(help: "The daemon's WebSocket URL.") var url: String = "ws://127.0.0.1:7880/ws"
    @Option(help: "File holding the HS256 secret (else $ROOMD_SECRET, else the dev secret of the roomd at --url).")
    var secretFile: String?

    func validate() throws {
        try validateIDs(room: room, user: user)
    }

    func run() throws {
        let port = Int(url.split(separator: ":").last?.split(separator: "/").first ?? "") ?? 7880
        let secret = lookUpSecret(file: secretFile, port: port)
        let token = try TokenMinter(secret: secret).appToken(
            room: room,
            user: user ?? "bot-\(getpid())",
            role: role,
            name: name,
            restrictions: restrictions
        )
        // A command-line tool, not the daemon: block the main thread on the session.
        let done = DispatchSemaphore(value: 0)
        let status = ExitStatus()
        Task {
            let code = await JoinSession(url: url, token: token).run()
            status.value.withLock { $0 = code }
            done.signal()
        }
        done.wait()
        let code = status.value.withLock { $0 }
        if code != 0 { throw ExitCode(code) }
    }
}

/// The exit status, handed from the session's task to the main thread.
private final class ExitStatus: Sendable {
    let value = Mutex<Int32>(0)
}

private struct JoinSession {
    let url: String
    let token: String

    func run() async -> Int32 {
        let client: RoomClient
        do {
            client = try await RoomClient.connect(to: url)
            let joined = try await client.call("join", ["token": .string(token)])
            emit("= " + Self.abbreviated(joined).text)
        } catch {
            emit("! \(error)")
            return 1
        }
        let pushes = Task {
            while !Task.isCancelled {
                guard let message = try? await client.nextMessage(timeout: .seconds(3600)) else { break }
                if let method = message["method"]?.stringValue {
                    emit("< \(method) \(Self.abbreviated(message["params"] ?? .null).text)")
                }
            }
        }
        for await line in Self.stdinLines() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            let (method, rest) =
                trimmed.firstIndex(of: " ").map { (String(trimmed[..<$0]), String(trimmed[$0...])) }
                ?? (trimmed, "")
            var params: JSON?
            if !rest.trimmingCharacters(in: .whitespaces).isEmpty {
                do {
                    params = try JSON.parse(Array(rest.utf8))
                } catch {
                    emit("! params are not JSON: \(error)")
                    continue
                }
            }
            do {
                emit("= " + (try await client.call(method, params)).text)
            } catch RoomClientError.rpc(let code, let message, let data) {
                // `data` when the error has one: 42901's `{"retry_after_ms":…}` (section 22).
                emit("! \(code) \(message)" + (data.map { " " + $0.text } ?? ""))
            } catch {
                emit("! \(error)")
            }
            if method == "leave" {
                pushes.cancel()
                return 0
            }
            if client.isClosed { break }
        }
        pushes.cancel()
        if !client.isClosed {
            emit("# end of input: disconnecting without leave (the peer stays for the reconnect grace)")
            await client.abort()
        }
        return 0
    }

    /// A join answer or push with each Policy cut to its name and role names
    /// (a Policy is kilobytes: every role's full definition), and a join's
    /// chat backfill to its count, pinned message id (`chat-history` reads
    /// it) and the joiner's chat state.
    static func abbreviated(_ value: JSON) -> JSON {
        guard case .object(var members) = value else { return value }
        for index in members.indices {
            switch members[index].key {
            case "policy", "known_roles":
                members[index].value = abbreviatedPolicy(members[index].key, members[index].value)
            case "chat":
                let chat = members[index].value
                guard let messages = chat["messages"]?.arrayValue else { continue }
                members[index].value = .object([
                    .init("messages", .int(messages.count)),
                    .init("pinned", chat["pinned"]?["message_id"] ?? .null),
                    .init("state", chat["state"] ?? .null),  // section 22: paused, slow mode, own chat ban
                ])
            default:
                continue
            }
        }
        return .object(members)
    }

    private static func abbreviatedPolicy(_ key: String, _ value: JSON) -> JSON {
        if key == "known_roles", case .object(let roles) = value { return .array(roles.map { .string($0.key) }) }
        guard case .object(var members) = value else { return value }
        for index in members.indices where members[index].key == "known_roles" {
            members[index].value = abbreviatedPolicy("known_roles", members[index].value)
        }
        return .object(members)
    }

    /// Standard input, line by line, read on its own thread (with read(2):
    /// stdio's buffered `readLine` stalled behind `print` here).
    static func stdinLines() -> AsyncStream<String> {
        AsyncStream { continuation in
            let reader = Thread {
                var pending: [UInt8] = []
                var chunk = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = read(STDIN_FILENO, &chunk, chunk.count)
                    if count <= 0 { break }
                    pending += chunk[..<count]
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        continuation.yield(String(decoding: pending[..<newline], as: UTF8.self))
                        pending.removeSubrange(...newline)
                    }
                }
                if !pending.isEmpty { continuation.yield(String(decoding: pending, as: UTF8.self)) }
                continuation.finish()
            }
            reader.name = "roomd-join-stdin"
            reader.start()
        }
    }
}

/// One line to stdout, at once (a pipe would otherwise buffer it).
private func emit(_ line: String) {
    print(line)
    fflush(nil)
}
