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
/// `method {json params}` lines or shorthands (`hand`, `invite PEER ROLE`,
/// `accept`, `chat TEXT`, `me`, `help`).
struct Join: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Join a room as a bot: print pushes, read calls from stdin as `method {json params}` lines.",
        discussion: """
            Output lines: `< method {params}` for a push, `= {result}` for an answer, \
            `! CODE message` for an error, `# …` for what the tool says itself. End of input \
            (Ctrl-D) disconnects without `leave`: the peer stays for the room's reconnect \
            grace. Type `leave` to leave. When the server closes the connection (roomd \
            stopped, `end-room`, removal) it prints `# closed CODE reason` and exits 1.
            """ + "\n\n" + JoinMethods.helpText
    )

    @Option(help: "Room id.") var room: String
    @Option(help: "Role name.") var role: String
    @Option(help: "User id (default: bot-PID).") var user: String?
    @Option(help: "Display name.") var name: String?
    @Option(help: "user_restrictions claim, e.g. view_and_polls_only.") var restrictions: String?
    @Option(help: "The daemon's WebSocket URL.") var url: String = "ws://127.0.0.1:7880/ws"
    @Option(
        help:
            "File holding the HS256 secret (else $ROOMD_SECRET_FILE, else $ROOMD_SECRET, else the dev secret of the roomd at --url)."
    )
    var secretFile: String?

    func validate() throws {
        try validateIDs(room: room, user: user)
    }

    func run() throws {
        let port = Int(url.split(separator: ":").last?.split(separator: "/").first ?? "") ?? 7880
        let (secret, source) = lookUpSecretAndSource(file: secretFile, port: port)
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
        Task { [url] in
            let code = await JoinSession(url: url, token: token, secretSource: source).run()
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

/// What the push reader and the stdin reader share.
private final class JoinState: Sendable {
    struct Values {
        var peerID = ""
        var roomID = ""
        var role = ""
        /// The token of the last `on-role-change-request`, for `accept` / `reject`.
        var invitation: String?
        /// This side asked for the end (`leave`, end of input): a close is not the server's doing.
        var closing = false
    }
    let values = Mutex(Values())
}

private struct JoinSession {
    let url: String
    let token: String
    let secretSource: String

    func run() async -> Int32 {
        let client: RoomClient
        let state = JoinState()
        do {
            client = try await RoomClient.connect(to: url)
            let joined = try await client.call("join", ["token": .string(token)])
            emit("= " + Self.abbreviated(joined).text)
            state.values.withLock {
                $0.peerID = joined["peer"]?["peer_id"]?.stringValue ?? ""
                $0.role = joined["peer"]?["role"]?.stringValue ?? ""
                $0.roomID = joined["room"]?["room_id"]?.stringValue ?? ""
            }
            let me = state.values.withLock { $0 }
            note("you are \(me.peerID) (\(me.role)) in \(me.roomID); `help` lists the calls, `me` prints your peer id")
        } catch RoomClientError.rpc(let code, let message, _) where code == 40109 {
            emit("! \(code) \(message)")
            emit(
                "# the token was signed with \(secretSource); the roomd at \(url) uses another secret: "
                    + "pass its file with --secret-file or ROOMD_SECRET_FILE (`make cluster` prints the cluster's)"
            )
            return 1
        } catch {
            emit("! \(error)")
            return 1
        }
        return await withTaskGroup(of: Side.self) { group in
            group.addTask { .pushes(await Self.printPushes(client, state)) }
            group.addTask { .calls(await Self.readCalls(client, state)) }
            let first = await group.next() ?? .calls(0)
            if case .pushes(.closedAfterLeave(let line)) = first {
                // The close of our own `leave` can reach the push side before
                // the call side prints the answer (both end at once): the
                // answer's line first, then the close's.
                _ = await group.next()
                emit(line)
                return 0
            }
            group.cancelAll()
            switch first {
            case .pushes(.ended(let status)), .calls(let status): return status
            case .pushes(.closedAfterLeave): return 0
            }
        }
    }

    /// Which side of the session ended first, and how.
    private enum Side: Sendable {
        case pushes(PushesEnd)
        case calls(Int32)
    }

    private enum PushesEnd: Sendable {
        /// The status to exit with (the close's line printed).
        case ended(Int32)
        /// Closed after this side asked (`leave`, end of input): the close's
        /// line, not printed yet.
        case closedAfterLeave(String)
    }

    /// Prints every push until the connection ends; then `# closed CODE
    /// reason`, and 1 when the server closed it (0 after `leave` or end of input).
    private static func printPushes(_ client: RoomClient, _ state: JoinState) async -> PushesEnd {
        while true {
            do {
                let message = try await client.nextMessage(timeout: .seconds(3600))
                guard let method = message["method"]?.stringValue else { continue }
                let params = message["params"] ?? .null
                if method == "on-role-change-request", let token = params["token"]?.stringValue {
                    state.values.withLock { $0.invitation = token }
                }
                if method == "on-policy-change", let role = params["name"]?.stringValue {
                    state.values.withLock { $0.role = role }
                }
                emit("< \(method) \(Self.abbreviated(params).text)")
            } catch RoomClientError.closed(let code, let reason) {
                let line = "# closed \(code)" + (reason.isEmpty ? "" : " \(reason)")
                if state.values.withLock({ $0.closing }) { return .closedAfterLeave(line) }
                emit(line)
                return .ended(1)
            } catch RoomClientError.timeout {
                continue
            } catch {
                return .ended(0)  // cancelled: the stdin side ended the session
            }
        }
    }

    /// Runs the calls typed on stdin until `leave` or the end of input.
    private static func readCalls(_ client: RoomClient, _ state: JoinState) async -> Int32 {
        for await line in stdinLines() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            let call: (method: String, params: JSON?)
            switch JoinInput.parse(trimmed, invitation: state.values.withLock { $0.invitation }) {
            case .help:
                emit(JoinMethods.helpText)
                continue
            case .me:
                let me = state.values.withLock { $0 }
                emit(
                    "= "
                        + JSON.object([
                            .init("peer_id", .string(me.peerID)), .init("role", .string(me.role)),
                            .init("room_id", .string(me.roomID)),
                        ]).text
                )
                continue
            case .problem(let text):
                emit("! \(text)")
                continue
            case .call(let method, let params):
                call = (method, params)
            }
            if call.method == "leave" { state.values.withLock { $0.closing = true } }
            do {
                emit("= " + (try await client.call(call.method, call.params)).text)
            } catch RoomClientError.rpc(let code, let message, let data) {
                // `data` when the error has one: 42901's `{"retry_after_ms":…}` (section 22).
                emit("! \(code) \(message)" + (data.map { " " + $0.text } ?? ""))
            } catch RoomClientError.closed {
                // Our own `leave` (the push side prints the close once this
                // returns), or the server's close: the push side reports it.
                if call.method == "leave" { return 0 }
                return await waitForever()
            } catch {
                emit("! \(error)")
            }
            if call.method == "leave" { return 0 }
        }
        if Task.isCancelled { return 0 }
        state.values.withLock { $0.closing = true }
        if !client.isClosed {
            emit("# end of input: disconnecting without leave (the peer stays for the reconnect grace)")
            await client.abort()
        }
        return 0
    }

    /// Until cancelled: lets the other task of the group give the answer.
    private static func waitForever() async -> Int32 {
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
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

/// A hint for the person at the keyboard, on stderr (stdout stays the session's transcript).
private func note(_ line: String) {
    FileHandle.standardError.write(Data(("roomd join: " + line + "\n").utf8))
}
