import ArgumentParser
import AsyncHTTPClient
import Dispatch
import Foundation
import NIOCore
import RoomClient
import RoomTokens
import RoomWire
import Synchronization

/// `roomd replay FILE --against URL`: plays a test-mode journal (PROTOCOL.md
/// section 25) back against a daemon started like the one that wrote it,
/// and compares every push each peer receives with the journal's.
struct Replay: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play a test-mode journal back against a daemon; exit 1 with the first push that differs.",
        discussion: """
            FILE is what GET /v2/test/journal?room_id=R answered. Start the daemon like the one that wrote it: \
            the same template, --test-mode --clock manual with the same --clock-start, and the same --seed. \
            Each peer of the journal joins on its own connection (a token minted for its user, role and name, \
            signed with the secret), the calls are sent in order, the clock is moved to each line's time first, \
            and every push each peer receives is compared, in order, with the journal's. Faults and dropped \
            connections are not replayed.
            """
    )

    @Argument(help: "The journal (JSON lines).") var file: String
    @Option(help: "The daemon's WebSocket URL, e.g. ws://127.0.0.1:7880/ws.") var against: String
    @Option(
        help:
            "File holding the daemon's HS256 secret (else $ROOMD_SECRET_FILE, else $ROOMD_SECRET, else its dev secret)."
    )
    var secretFile: String?

    func run() throws {
        guard let data = FileManager.default.contents(atPath: file) else { fail("\(file): cannot read it") }
        var lines: [(number: Int, json: JSON)] = []
        for (index, line) in data.split(separator: 10).enumerated() where !line.isEmpty {
            do { lines.append((index + 1, try JSON.parse(Array(line)))) } catch {
                fail("\(file):\(index + 1): not JSON (\(error))")
            }
        }
        if let (number, why) = Self.unchecked(lines) { fail("\(file):\(number): \(why)") }
        guard let base = Self.httpBase(of: against) else {
            fail("--against: expected ws://HOST:PORT/ws, got \(against)")
        }
        let port = Int(base.split(separator: ":").last ?? "") ?? 7880
        let secret = lookUpSecret(file: secretFile, port: port)
        let done = DispatchSemaphore(value: 0)
        let status = Mutex<Int32>(0)
        let session = ReplaySession(lines: lines, url: against, http: base, minter: TokenMinter(secret: secret))
        Task {
            let code = await session.run()
            status.withLock { $0 = code }
            done.signal()
        }
        done.wait()
        let code = status.withLock { $0 }
        if code != 0 { throw ExitCode(code) }
    }

    /// The first line the replay cannot check, and why (exit 2 before
    /// anything is played): a line that is not an object or of no known
    /// kind, a call or push without what it needs, a call of a peer or a
    /// push to a peer that never joined in the journal (a join line whose
    /// answer named it, before it), and a truncated journal (what followed
    /// the dropped lines cannot be compared).
    static func unchecked(_ lines: [(number: Int, json: JSON)]) -> (number: Int, why: String)? {
        var joined: Set<String> = []
        for (index, entry) in lines.enumerated() {
            let line = entry.json
            guard case .object = line else { return (entry.number, "not a JSON object (\(line.typeName))") }
            switch line["kind"]?.stringValue {
            case "call":
                guard let method = line["method"]?.stringValue else { return (entry.number, "a call without a method") }
                if method == "join", line["peer_id"] == .null {
                    let answer = lines[(index + 1)...].first { answer in
                        answer.json["kind"] == "answer" && answer.json["id"] == line["id"]
                            && answer.json["result"]?["peer"] != nil
                    }
                    if let id = answer?.json["result"]?["peer"]?["peer_id"]?.stringValue { joined.insert(id) }
                } else if let peer = line["peer_id"]?.stringValue {
                    if !joined.contains(peer) {
                        return (entry.number, "a call of peer \(peer), who never joined in this journal")
                    }
                } else {
                    return (entry.number, "a \(method) call without a peer_id (only a join has none)")
                }
            case "push":
                guard let to = line["to"]?.arrayValue, line["method"]?.stringValue != nil else {
                    return (entry.number, "a push without its recipients (to) or method")
                }
                for recipient in to {
                    guard let id = recipient.stringValue else {
                        return (entry.number, "a push to \(recipient.text): not a peer id")
                    }
                    if !joined.contains(id) {
                        return (entry.number, "a push to peer \(id), who never joined in this journal")
                    }
                }
            case "answer", "webhook":
                continue
            case "truncated":
                let dropped = line["lines_dropped"]?.text ?? "some"
                return (entry.number, "the journal was truncated (\(dropped) lines dropped): it cannot be checked")
            case let kind?:
                return (entry.number, "unknown kind \"\(kind)\"")
            case nil:
                return (entry.number, "no kind")
            }
        }
        return nil
    }

    /// `ws://HOST:PORT/…` → `http://HOST:PORT`.
    static func httpBase(of url: String) -> String? {
        guard url.hasPrefix("ws://") else { return nil }
        let rest = url.dropFirst(5)
        let authority = rest.split(separator: "/", maxSplits: 1).first ?? rest
        return authority.isEmpty ? nil : "http://\(authority)"
    }
}

private struct ReplaySession: Sendable {
    let lines: [(number: Int, json: JSON)]
    let url: String
    let http: String
    let minter: TokenMinter

    func run() async -> Int32 {
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        let code: Int32
        do {
            code = try await replay(http: client)
        } catch let mismatch as Mismatch {
            print("replay: differs at \(mismatch)")
            code = 1
        } catch {
            print("replay: \(error)")
            code = 2
        }
        try? await client.shutdown()
        return code
    }

    struct Mismatch: Error, CustomStringConvertible {
        var description: String
    }

    private func replay(http: HTTPClient) async throws -> Int32 {
        let management = try minter.managementToken()
        var clock = try await moveClock(http, token: management, body: nil)
        var peers: [String: RoomClient] = [:]  // journal peer id → connection
        var expected: [String: [(line: Int, push: JSON)]] = [:]
        // Each join's answer tells who joined: user, role, name, room.
        for (index, entry) in lines.enumerated() {
            let line = entry.json
            if let t = line["t"]?.intValue.map(Int64.init), t > clock {
                clock = try await moveClock(http, token: management, body: #"{"set_ms":\#(t)}"#)
            }
            switch line["kind"]?.stringValue {
            case "call":
                let method = line["method"]?.stringValue ?? ""
                let params = line["params"] ?? .object([])
                if method == "join", line["peer_id"] == .null {
                    guard
                        let answer = lines[(index + 1)...].first(where: { answer in
                            answer.json["kind"] == "answer" && answer.json["id"] == line["id"]
                                && answer.json["result"]?["peer"] != nil
                        })
                    else { continue }  // a join that failed: nothing to replay
                    let peer = answer.json["result"]!["peer"]!
                    let journalID = peer["peer_id"]?.stringValue ?? ""
                    // Who joined: the token's claims the journal kept, else the answer's peer.
                    let claims = params["claims"]
                    let token = try minter.appToken(
                        room: claims?["room_id"]?.stringValue ?? answer.json["result"]?["room"]?["room_id"]?.stringValue
                            ?? "",
                        user: claims?["user_id"]?.stringValue ?? peer["info"]?["user_id"]?.stringValue ?? "",
                        role: claims?["role"]?.stringValue ?? peer["role"]?.stringValue ?? "",
                        name: claims?["name"]?.stringValue ?? peer["info"]?["name"]?.stringValue,
                        restrictions: claims?["user_restrictions"]?.stringValue
                    )
                    var joinParams = params.objectValue ?? []
                    joinParams.removeAll { $0.key == "token" || $0.key == "claims" }
                    joinParams.append(JSON.Member("token", .string(token)))
                    let connection = try await RoomClient.connect(to: url)
                    let joined = try await connection.call("join", .object(joinParams))
                    let id = joined["peer"]?["peer_id"]?.stringValue ?? ""
                    guard id == journalID else {
                        throw Mismatch(
                            description: "line \(entry.number): join answered peer \(id), the journal has \(journalID)"
                                + " (start the daemon with the journal's --seed and --clock-start)"
                        )
                    }
                    peers[journalID] = connection
                } else if let peerID = line["peer_id"]?.stringValue, let connection = peers[peerID] {
                    _ = try? await connection.call(method, params)
                }
            case "push":
                for recipient in line["to"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
                    expected[recipient, default: []].append((entry.number, line))
                }
            default:
                break
            }
        }
        // Every push sent so far is in: a ping round trip per connection.
        for connection in peers.values where !connection.isClosed { _ = try? await connection.call("ping") }
        try await Task.sleep(for: .milliseconds(50))
        var first: (line: Int, text: String)?
        for (peerID, connection) in peers {
            let got = connection.drain().filter { $0["method"] != nil }
            let want = expected[peerID] ?? []
            for index in 0..<max(got.count, want.count) {
                let mismatch: (Int, String)?
                if index >= want.count {
                    mismatch = (Int.max, "peer \(peerID) got an extra push: \(got[index].text)")
                } else if index >= got.count {
                    mismatch = (
                        want[index].line,
                        "line \(want[index].line): peer \(peerID) never got \(want[index].push["method"]?.text ?? "?") \(want[index].push["params"]?.text ?? "")"
                    )
                } else if got[index]["method"] != want[index].push["method"]
                    || got[index]["params"] != want[index].push["params"]
                {
                    mismatch = (
                        want[index].line,
                        "line \(want[index].line): peer \(peerID) expected \(want[index].push["method"]?.text ?? "?") "
                            + "\(want[index].push["params"]?.text ?? "")\n  got \(got[index]["method"]?.text ?? "?") "
                            + "\(got[index]["params"]?.text ?? "")"
                    )
                } else {
                    mismatch = nil
                }
                if let mismatch {
                    if first == nil || mismatch.0 < first!.line { first = (mismatch.0, mismatch.1) }
                    break
                }
            }
        }
        for connection in peers.values { await connection.close() }
        if let first {
            print("replay: differs at \(first.text)")
            return 1
        }
        let count = expected.values.map(\.count).reduce(0, +)
        print("replay: \(lines.count) lines, \(peers.count) peers, \(count) pushes: every push matched")
        return 0
    }

    /// POST (or GET without a body) /v2/test/clock → the clock's time.
    private func moveClock(_ client: HTTPClient, token: String, body: String?) async throws -> Int64 {
        var request = HTTPClientRequest(url: http + "/v2/test/clock")
        request.method = body == nil ? .GET : .POST
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 16)
        let json = try? JSON.parse(Array(bytes.readableBytesView))
        guard response.status.code == 200, let now = json?["now"]?.intValue else {
            throw Mismatch(
                description:
                    "/v2/test/clock: \(response.status.code) \(String(buffer: bytes)) (is the daemon in --test-mode --clock manual?)"
            )
        }
        return Int64(now)
    }
}
