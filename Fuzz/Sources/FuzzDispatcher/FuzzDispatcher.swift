import Foundation
import FuzzSupport
import Logging
import RoomConfig
import RoomModel
import RoomTokens
import RoomWire

@testable import RoomServer

/// The JSON-RPC dispatcher (`Dispatcher.handle(_:from:)`, the path every
/// WebSocket text message takes) on a fresh daemon per input, without a
/// network: the daemon is constructed but not started, and its connections
/// are socket-less `Connection`s (the harness init roombench micro uses).
/// Each input is a script, one line per step:
///
///     N<json>     message <json> from connection N (0…3); without N, from 0
///     !lost N     connection N drops without a close (reconnect grace)
///     !tick       the daemon's timers fire (speakers, room state, role-change
///                 expiry, graces, poll stats, reactions)
///
/// Before each input, connections 0, 1 and 2 have joined room `fuzz` as a
/// host, a guest and a host restricted to `view_and_polls_only`; connection
/// 3 has not joined, and its queue is never drained (a slow consumer, with a
/// small outbound limit). Placeholders in a message are replaced first:
/// `@host@` `@guest@` `@moderator@` `@viewer@` `@restricted@` `@elsewhere@`
/// (app tokens; `@elsewhere@` for another room), `@p0@`…`@p9@` (the ids of
/// the peers joined so far, in join order), `@token@` (the last role-change
/// token pushed or answered).
///
/// Checked for every step: no trap; every frame queued to any connection is
/// one well-formed server text frame whose payload is valid JSON. Closed
/// connections are reported lost (as lws would after the close) and replaced
/// by a fresh one.
@_cdecl("FuzzDispatcher_main")
public func fuzzDispatcherMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc, argv, fuzzDispatcher)
}

private let quiet: Logger = {
    var logger = Logger(label: "fuzz.dispatcher")
    logger.logLevel = .critical
    return logger
}()

private let secret = [UInt8](repeating: 0x5A, count: 32)

private let template: RoleTemplate = {
    let path = ProcessInfo.processInfo.environment["ROOMD_FUZZ_CONFIG"] ?? "config/roles.json"
    do { return try RoleTemplate.load(path: path).template } catch {
        fatalError("fuzz-dispatcher: cannot load the template \(path) (run from the repository root): \(error)")
    }
}()

/// Minted once: HS256 verification still runs for every join.
private let tokens: [String: String] = {
    let minter = TokenMinter(secret: secret)
    var tokens: [String: String] = [:]
    do {
        for role in ["host", "guest", "moderator", "viewer"] {
            tokens["@\(role)@"] = try minter.appToken(room: "fuzz", user: "user-\(role)", role: role)
        }
        tokens["@restricted@"] = try minter.appToken(
            room: "fuzz",
            user: "user-restricted",
            role: "host",
            restrictions: "view_and_polls_only"
        )
        tokens["@elsewhere@"] = try minter.appToken(room: "elsewhere", user: "user-elsewhere", role: "guest")
    } catch { fatalError("fuzz-dispatcher: minting tokens failed: \(error)") }
    return tokens
}()

/// One input's daemon and its four connections.
private final class Script {
    let server: RoomServer
    let dispatcher: Dispatcher
    var connections: [Connection] = []
    var peerIDs: [String] = []
    var lastToken: String?
    var nextID = 0
    let input: [UInt8]

    init(input: [UInt8]) {
        self.input = input
        server = RoomServer(options: ServerOptions(port: 0, template: template, secret: secret), logger: quiet)
        dispatcher = server.dispatcher
        connections = (0..<4).map { makeConnection(slot: $0) }
        send(Array(#"{"jsonrpc":"2.0","id":1,"method":"join","params":{"token":"@host@"}}"#.utf8), on: 0)
        send(Array(#"{"jsonrpc":"2.0","id":1,"method":"join","params":{"token":"@guest@","name":"G"}}"#.utf8), on: 1)
        send(Array(#"{"jsonrpc":"2.0","id":1,"method":"join","params":{"token":"@restricted@"}}"#.utf8), on: 2)
    }

    func makeConnection(slot: Int) -> Connection {
        nextID += 1
        let limits = template.settings.limits
        let connection = Connection(
            discardingFor: nextID,
            maxQueuedBytes: slot == 3 ? 8 * 1024 : limits.maxOutboundBytes
        )
        connection.rate = TokenBucket(
            rate: limits.messagesPerSecond,
            burst: limits.messageBurst,
            nowMillis: server.clock.nowMillis()
        )
        return connection
    }

    func run() {
        for line in input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            step(Array(line))
        }
    }

    func step(_ line: [UInt8]) {
        if line.starts(with: Array("!lost ".utf8)), line.count == 7, let slot = slot(line[6]) {
            dispatcher.outbound.connectionLost(connections[slot])
            connections[slot] = makeConnection(slot: slot)
        } else if line == Array("!tick".utf8) {
            dispatcher.fanOut(server.registry.tickActiveSpeakers())
            dispatcher.fanOut(server.registry.tickRoomState())
            for expired in server.registry.expireDue() { dispatcher.outbound.apply(expired.effects) }
            dispatcher.fanOut(server.registry.tickPollStats())
            dispatcher.fanOut(server.registry.tickReactions())
        } else if let first = line.first, let slot = slot(first) {
            send(Array(line.dropFirst()), on: slot)
        } else {
            send(line, on: 0)
        }
        settle()
    }

    private func slot(_ byte: UInt8) -> Int? {
        (UInt8(ascii: "0")...UInt8(ascii: "3")).contains(byte) ? Int(byte - UInt8(ascii: "0")) : nil
    }

    func send(_ message: [UInt8], on slot: Int) {
        dispatcher.handle(substitute(message), from: connections[slot])
        settle()
    }

    /// Replaces the placeholders (only when the message has an `@`).
    private func substitute(_ message: [UInt8]) -> [UInt8] {
        guard message.contains(UInt8(ascii: "@")) else { return message }
        var text = String(decoding: message, as: UTF8.self)
        for (placeholder, token) in tokens { text = text.replacingOccurrences(of: placeholder, with: token) }
        for (index, id) in peerIDs.prefix(10).enumerated() {
            text = text.replacingOccurrences(of: "@p\(index)@", with: id)
        }
        if let lastToken { text = text.replacingOccurrences(of: "@token@", with: lastToken) }
        return Array(text.utf8)
    }

    /// Checks and empties every queue (but connection 3's), records peer ids
    /// and tokens, and replaces closed connections as lws would after the close.
    func settle() {
        for (slot, connection) in connections.enumerated() {
            for frame in connection.queuedFrames { check(frame) }
            if let peer = connection.peer, !peerIDs.contains(peer.id.rawValue) { peerIDs.append(peer.id.rawValue) }
            if slot != 3 { connection.discardQueuedForBenchmark() }
            if connection.isClosing {
                dispatcher.outbound.connectionLost(connection)
                connections[slot] = makeConnection(slot: slot)
            }
        }
    }

    /// Breaks the peer ↔ connection references (a daemon lives for the
    /// process; this one goes after each input and must take its rooms along).
    func tearDown() {
        for room in server.registry.rooms.values {
            for peer in room.peers.values { peer.endpoint = nil }
        }
        for connection in connections { connection.peer = nil }
    }

    private func check(_ frame: Frame) {
        var wire = [UInt8](repeating: 0, count: frame.count)
        wire.withUnsafeMutableBytes { frame.copy(from: 0, count: frame.count, into: $0.baseAddress!) }
        guard wire.count >= 2 else { fuzzFinding("a frame of \(wire.count) bytes", input: input) }
        if wire[0] == 0x89 { return }  // the keepalive ping
        guard wire[0] == 0x81, wire[1] & 0x80 == 0 else {
            fuzzFinding("a frame that is not one unmasked final text frame: \(wire.prefix(4))", input: input)
        }
        var length = Int(wire[1])
        var start = 2
        if length == 126 {
            length = Int(wire[2]) << 8 | Int(wire[3])
            start = 4
        } else if length == 127 {
            length = (2..<10).reduce(0) { $0 << 8 | Int(wire[$1]) }
            start = 10
        }
        guard start + length == wire.count else {
            fuzzFinding(
                "a frame whose header says \(length) payload bytes but holds \(wire.count - start)",
                input: input
            )
        }
        let payload = Array(wire[start...])
        let json: JSON
        do { json = try JSON.parse(payload) } catch {
            fuzzFinding(
                "a frame whose payload is not JSON (\(error)): \(String(decoding: payload, as: UTF8.self))",
                input: input
            )
        }
        for message in json.arrayValue ?? [json] {
            if let token = message["result"]?["token"]?.stringValue ?? message["params"]?["token"]?.stringValue {
                lastToken = token
            }
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDispatcher(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let script = Script(input: fuzzBytes(data, size))
    script.run()
    script.tearDown()
    return 0
}
