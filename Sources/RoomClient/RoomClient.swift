import CWebSockets
import RoomWire

/// A WebSocket JSON-RPC client for roomd: the public Swift SDK, and a raw
/// frame tool for protocol tests.
///
/// It has three layers that can be mixed freely on one connection:
/// - typed methods, one per protocol call (``join(token:name:data:roomID:peerID:timeout:)``,
///   ``raiseHand(timeout:)``, ``acceptRoleChange(token:timeout:)``, …), which
///   return decoded models and throw ``RoomClientError`` with the protocol
///   code (``RoomClientError/code``);
/// - typed events: ``RoomEvent`` read with ``nextEvent(timeout:)``,
///   `next(_:timeout:)` with an extract closure, or ``events``;
/// - the raw layer: ``call(_:_:timeout:)``, ``notify(_:_:)``,
///   ``send(text:)``, ``nextMessage(timeout:)``, `next(_:timeout:)` with a
///   method name, ``drain()`` and ``expectSilence(for:)``.
///
/// A viewer that raises its hand and accepts an invitation to become a guest:
///
/// ```swift
/// import RoomClient
///
/// let client = try await RoomClient.connect(to: "ws://127.0.0.1:7880/ws")
/// let joined = try await client.join(token: viewerToken, name: "Ada")
/// print(joined.peer.role, joined.room.peerCount)      // "viewer", 3
///
/// try await client.raiseHand()
/// let (invitedBy, token) = try await client.next({ event -> (PeerRef, String)? in
///     if case .roleChangeRequest(let by, "guest", let token) = event { (by, token) } else { nil }
/// }, timeout: .seconds(30))
/// let me = try await client.acceptRoleChange(token: token)   // me.role == "guest"
/// try await client.lowerHand()
/// try await client.addTrack(id: "mic", type: .audio)
///
/// await client.close()
/// ```
///
/// Calls on one client may run concurrently; responses are matched to calls
/// by id and each call has its own timeout (default: ``defaultTimeout``, 5 s unless set at connect). A protocol error
/// throws ``RoomClientError/rpc(code:message:data:)``; the connection ending
/// throws ``RoomClientError/closed(code:reason:)`` with the server's close
/// code (e.g. 4001 after being removed, 4002 after `end-room`).
///
/// Incoming text messages are parsed as JSON. A response (an object with
/// `"id"` and `"result"` or `"error"`) whose id belongs to a pending `call`
/// completes that call. Everything else — pushes, responses to raw sends,
/// batch arrays, and unparseable text (as `.string(rawText)`) — goes, in
/// arrival order, to the inbox read by `nextMessage`, `next(_:)`, `drain()`
/// and `expectSilence(for:)`.
///
/// Sendable: all state is either immutable or lives in the session's
/// `Mutex`; the socket itself is only touched by the loop thread.
public final class RoomClient: Sendable {
    /// The libwebsockets loop that services this connection.
    public let loop: RoomClientLoop
    let session: ClientSession
    /// How long a call or a wait of this client lasts when it is given no
    /// `timeout` of its own (``connect(to:loop:timeout:protocolName:defaultTimeout:)``; 5 s unless set).
    public let defaultTimeout: Duration

    private init(loop: RoomClientLoop, session: ClientSession, defaultTimeout: Duration) {
        self.loop = loop
        self.session = session
        self.defaultTimeout = defaultTimeout
    }

    deinit {
        if !session.isClosed { loop.post(.close(session.id, code: 1000, reason: "")) }
    }

    // MARK: - Connecting

    /// Connects to a `ws://host:port/path` URL (`wss` is not supported), e.g.
    /// the one in roomd's listening line `roomd listening on ws://127.0.0.1:7880/ws`.
    /// `protocolName` is sent as `Sec-WebSocket-Protocol` when given.
    ///
    /// `defaultTimeout` is how long each call and wait of the client lasts
    /// when it is given no `timeout` (a test harness on a loaded machine
    /// gives its clients more than the 5 s an app wants); `timeout` bounds
    /// the connection itself (default: `defaultTimeout`).
    ///
    /// - Throws: ``RoomClientError/connectFailed(_:)`` (bad URL, refused,
    ///   handshake rejected, timed out, loop shut down).
    public static func connect(
        to url: String,
        loop: RoomClientLoop = .shared,
        timeout: Duration? = nil,
        protocolName: String? = nil,
        defaultTimeout: Duration = .seconds(5)
    ) async throws -> RoomClient {
        guard let target = parseWebSocketURL(url) else {
            throw RoomClientError.connectFailed("not a ws:// URL: \(url)")
        }
        return try await connect(
            host: target.host,
            port: target.port,
            path: target.path,
            loop: loop,
            timeout: timeout,
            protocolName: protocolName,
            defaultTimeout: defaultTimeout
        )
    }

    /// Connects to `ws://host:port/path` (`path` defaults to roomd's `/ws`).
    /// `protocolName` is sent as `Sec-WebSocket-Protocol` when given.
    ///
    /// - Throws: ``RoomClientError/connectFailed(_:)`` (refused, handshake
    ///   rejected, timed out, loop shut down).
    public static func connect(
        host: String,
        port: Int,
        path: String = "/ws",
        loop: RoomClientLoop = .shared,
        timeout: Duration? = nil,
        protocolName: String? = nil,
        defaultTimeout: Duration = .seconds(5)
    ) async throws -> RoomClient {
        let timeout = timeout ?? defaultTimeout
        guard (1...65535).contains(port) else { throw RoomClientError.connectFailed("bad port \(port)") }
        let session = ClientSession(id: loop.makeSessionID())
        let target = ConnectTarget(
            host: host,
            port: port,
            path: path.hasPrefix("/") ? path : "/" + path,
            protocolName: protocolName
        )
        do {
            _ = try await session.wait(timeout: timeout, site: WaitSite("the connection to \(host):\(port)")) { state in
                if state.established { return .done(.success(.null)) }
                if state.closed != nil {
                    return .done(.failure(RoomClientError.connectFailed(state.connectError ?? "closed")))
                }
                return .pending(.connect)
            } registered: {
                loop.post(.connect(session, target))
            }
        } catch RoomClientError.timeout {
            loop.post(.abort(session.id))
            throw RoomClientError.connectFailed("timed out after \(timeout) connecting to \(host):\(port)\(path)")
        } catch let error as CancellationError {
            loop.post(.abort(session.id))
            throw error
        }
        return RoomClient(loop: loop, session: session, defaultTimeout: defaultTimeout)
    }

    // MARK: - JSON-RPC

    /// Sends a request with a fresh integer id and returns its `result`.
    /// Throws `.rpc` for an error response, `.timeout`, or `.closed` if the
    /// connection ends first. The typed methods are built on it; use it for
    /// raw params (wrong types, extra keys) in protocol tests.
    ///
    /// ```swift
    /// let result = try await client.call("ping", ["timestamp": 42])
    /// ```
    ///
    /// A timeout's ``WaitTimeout`` names the method (`the answer to ping`).
    public func call(_ method: String, _ params: JSON? = nil, timeout: Duration? = nil) async throws -> JSON {
        let id = session.nextCallID()
        var members: [JSON.Member] = [.init("jsonrpc", "2.0"), .init("id", .int(id)), .init("method", .string(method))]
        if let params { members.append(.init("params", params)) }
        let frame = Self.frame(JSON.object(members))
        let sessionID = session.id
        let loop = self.loop
        let response = try await session.wait(
            timeout: timeout ?? defaultTimeout,
            site: WaitSite("the answer to \(method)")
        ) { state in
            if state.closed != nil { return .done(.failure(state.closedError)) }
            return .pending(.call(id))
        } registered: {
            loop.post(.send(sessionID, frame, binary: false))
        }
        if let error = response["error"] {
            throw RoomClientError.rpc(
                code: error["code"]?.intValue ?? 0,
                message: error["message"]?.stringValue ?? error.text,
                data: error["data"]
            )
        }
        return response["result"] ?? .null
    }

    /// Sends a notification (no id, nothing is answered). Throws `.closed` if the connection is closed.
    public func notify(_ method: String, _ params: JSON? = nil) throws {
        if let closed = session.closeInfo { throw RoomClientError.closed(code: closed.code, reason: closed.reason) }
        var members: [JSON.Member] = [.init("jsonrpc", "2.0"), .init("method", .string(method))]
        if let params { members.append(.init("params", params)) }
        loop.post(.send(session.id, Self.frame(JSON.object(members)), binary: false))
    }

    /// Sends one text message exactly as given (ignored once closed).
    public func send(text: String) {
        loop.post(.send(session.id, Self.frame(Array(text.utf8)), binary: false))
    }

    /// Sends one binary message (ignored once closed).
    public func send(binary: [UInt8]) {
        loop.post(.send(session.id, Self.frame(binary), binary: true))
    }

    // MARK: - Inbox

    /// The next inbox entry. Throws `.timeout`, or `.closed` once the
    /// connection is closed and the inbox is empty.
    ///
    /// The `fileID`/`filePath`/`line`/`column` defaults name the caller's
    /// line in a timeout's ``WaitTimeout``; leave them out.
    public func nextMessage(
        timeout: Duration? = nil,
        fileID: String = #fileID,
        filePath: String = #filePath,
        line: Int = #line,
        column: Int = #column
    ) async throws -> JSON {
        let site = WaitSite("a message (any)", fileID: fileID, filePath: filePath, line: line, column: column)
        return try await session.wait(timeout: timeout ?? defaultTimeout, site: site) { state in
            if !state.inbox.isEmpty { return .done(.success(state.inbox.removeFirst())) }
            if state.closed != nil { return .done(.failure(state.closedError)) }
            return .pending(.message({ _ in true }))
        }
    }

    /// The `params` of the next push `{"method": method, ...}`, removed from
    /// the inbox; entries before it stay where they are.
    ///
    /// - Throws: ``RoomClientError/unknownPush(_:suggestions:)`` at once
    ///   when `method` is not a push roomd sends (``pushNames``, from
    ///   docs/openrpc.json), naming the close ones;
    ///   ``RoomClientError/timeout(_:)`` naming `method`, the
    ///   timeout, the caller's line and the pushes queued instead;
    ///   ``RoomClientError/closed(code:reason:)`` once the connection is
    ///   closed and no such push is left.
    public func next(
        _ method: String,
        timeout: Duration? = nil,
        fileID: String = #fileID,
        filePath: String = #filePath,
        line: Int = #line,
        column: Int = #column
    ) async throws -> JSON {
        try Self.checkPush(method)
        let site = WaitSite(method, fileID: fileID, filePath: filePath, line: line, column: column)
        return try await nextPush(method, site: site, timeout: timeout) { _ in true }
    }

    /// The `params` of the first push of `method` whose params pass
    /// `predicate`, removed from the inbox; every other entry stays where it is.
    ///
    /// This is the kits' one predicate contract (the Python kit's
    /// `next(method, where=…)`, roomd.js's `next(method, {where})`): the
    /// method name filters, the predicate gets the push's `params` (`{}`
    /// when it has none) and says whether it is the one.
    ///
    /// ```swift
    /// let update = try await host.next("on-peer-update", where: { $0["peer"]?["peer_id"] == .string(guestID) })
    /// ```
    ///
    /// `predicate` may run more than once per push, under the connection's
    /// lock and on the client loop's thread: keep it quick and pure.
    /// `description` (e.g. `"the guest's update"`) goes into a timeout's
    /// ``WaitTimeout``; without it the timeout says `<method> where <predicate>`.
    public func next(
        _ method: String,
        where predicate: @escaping @Sendable (JSON) -> Bool,
        description: String? = nil,
        timeout: Duration? = nil,
        fileID: String = #fileID,
        filePath: String = #filePath,
        line: Int = #line,
        column: Int = #column
    ) async throws -> JSON {
        try Self.checkPush(method)
        let what = "\(method) where \(description ?? "<predicate>")"
        let site = WaitSite(what, fileID: fileID, filePath: filePath, line: line, column: column)
        return try await nextPush(method, site: site, timeout: timeout, where: predicate)
    }

    private func nextPush(
        _ method: String,
        site: WaitSite,
        timeout: Duration?,
        where predicate: @escaping @Sendable (JSON) -> Bool
    ) async throws -> JSON {
        let matches: @Sendable (JSON) -> Bool = { entry in
            ClientSession.isPush(entry, method: method) && predicate(entry["params"] ?? .object([]))
        }
        let push = try await session.wait(timeout: timeout ?? defaultTimeout, site: site) { state in
            if let index = state.inbox.firstIndex(where: matches) {
                return .done(.success(state.inbox.remove(at: index)))
            }
            if state.closed != nil { return .done(.failure(state.closedError)) }
            return .pending(.message(matches))
        }
        return push["params"] ?? .object([])
    }

    /// Removes and returns everything currently in the inbox.
    public func drain() -> [JSON] {
        session.drain()
    }

    /// Waits `duration`, then removes and returns whatever arrived in the
    /// inbox (including entries already there). Tests assert it is empty.
    public func expectSilence(for duration: Duration) async -> [JSON] {
        try? await Task.sleep(for: duration)
        return session.drain()
    }

    // MARK: - Closing

    /// True once the connection has ended.
    public var isClosed: Bool { session.isClosed }

    /// Sends a close frame (after anything already queued) and waits up to
    /// 2 s for the connection to end; after that it is dropped.
    public func close(code: Int = 1000, reason: String = "") async {
        guard !session.isClosed else { return }
        loop.post(.close(session.id, code: code, reason: reason))
        do {
            _ = try await closeStatus(timeout: .seconds(2))
        } catch {
            loop.post(.abort(session.id))
        }
    }

    /// Drops the TCP connection without a close frame (the server sees an
    /// abnormal closure, 1006) and waits up to 2 s for it to end. For
    /// reconnect / grace-period tests. `closeCode()` then reports 1006.
    public func abort() async {
        guard !session.isClosed else { return }
        loop.post(.abort(session.id))
        _ = try? await closeStatus(timeout: .seconds(2))
    }

    /// Waits for the connection to end and returns the close code the server
    /// sent: 1006 if it dropped without a close frame, 1005 if its close frame
    /// had no code, or the code this client sent if it closed first.
    public func closeCode(timeout: Duration? = nil) async throws -> Int {
        try await closeStatus(timeout: timeout).code
    }

    /// Like `closeCode`, with the close reason text too.
    public func closeStatus(timeout: Duration? = nil) async throws -> (code: Int, reason: String) {
        let code = try await session.wait(timeout: timeout ?? defaultTimeout, site: WaitSite("the connection to close"))
        { state in
            if let closed = state.closed { return .done(.success(.int(closed.code))) }
            return .pending(.close)
        }
        return (code.intValue ?? 1006, session.closeInfo?.reason ?? "")
    }

    // MARK: - Flow control

    /// Stops reading from the socket (the server's sends pile up; pings go unanswered).
    public func pauseReading() {
        loop.post(.flow(session.id, enabled: false))
    }

    /// Starts reading from the socket again after ``pauseReading()``.
    public func resumeReading() {
        loop.post(.flow(session.id, enabled: true))
    }

    // MARK: - Helpers

    private static func frame(_ json: JSON) -> [UInt8] {
        var writer = JSONWriter(reserving: 256, prefix: Int(CWS_PRE))
        writer.value(json)
        return writer.bytes
    }

    private static func frame(_ payload: [UInt8]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Int(CWS_PRE))
        bytes.reserveCapacity(bytes.count + payload.count)
        bytes.append(contentsOf: payload)
        return bytes
    }
}

/// Splits `ws://host[:port][/path]` (IPv6 hosts in brackets). Default port 80, path "/".
func parseWebSocketURL(_ url: String) -> ConnectTarget? {
    guard url.lowercased().hasPrefix("ws://") else { return nil }
    let rest = url.dropFirst(5)
    let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
    let authority = rest[..<authorityEnd]
    var path = String(rest[authorityEnd...])
    if path.isEmpty { path = "/" } else if path.first == "?" { path = "/" + path }
    var host: Substring
    var port = 80
    if authority.first == "[" {
        guard let close = authority.firstIndex(of: "]") else { return nil }
        host = authority[authority.index(after: authority.startIndex)..<close]
        let after = authority[authority.index(after: close)...]
        if !after.isEmpty {
            guard after.first == ":", let p = Int(after.dropFirst()) else { return nil }
            port = p
        }
    } else if let colon = authority.lastIndex(of: ":") {
        host = authority[..<colon]
        guard let p = Int(authority[authority.index(after: colon)...]) else { return nil }
        port = p
    } else {
        host = authority
    }
    guard !host.isEmpty, (1...65535).contains(port) else { return nil }
    return ConnectTarget(host: String(host), port: port, path: path, protocolName: nil)
}
