import RoomWire

/// Everything `RoomClient` throws (besides `CancellationError` when the
/// waiting task is cancelled).
///
/// Protocol errors arrive as ``rpc(code:message:data:)``; ``code`` gives the
/// number directly, which reads well in tests:
///
/// ```swift
/// do {
///     _ = try await viewer.addTrack(type: .audio)
/// } catch let error as RoomClientError where error.code == 40300 {
///     // viewers may not publish
/// }
/// ```
public enum RoomClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The WebSocket connection could not be established (bad URL, refused,
    /// handshake rejected, timeout, loop shut down). The text says why.
    case connectFailed(String)
    /// The server answered a `call` with a JSON-RPC error object. `code` is
    /// the protocol code (PROTOCOL.md section 8), e.g. -32602 or 40300.
    case rpc(code: Int, message: String, data: JSON?)
    /// Nothing suitable arrived in time. The ``WaitTimeout`` says what was
    /// awaited, for how long, from which line, and what was queued instead;
    /// match any timeout with `case .timeout`.
    case timeout(WaitTimeout)
    /// The connection is closed (and, for the inbox, drained). `code` is the
    /// close code the server sent, 1006 if it dropped without a close frame,
    /// or the code this client sent if it closed first.
    case closed(code: Int, reason: String)
    /// A result or push did not have the shape PROTOCOL.md section 3 gives
    /// it, so a typed method or model initializer could not decode it. The
    /// text names the offending path, e.g. `join result: peer.joined_at:
    /// expected an integer, got string`. (The wire types' own `init(json:)`,
    /// from RoomProtocol, throw `WireError` with the same text.)
    case invalidPayload(String)
    /// A wait named a push roomd never sends (not in ``RoomClient/pushNames``,
    /// from docs/openrpc.json): thrown at once, with the close names
    /// (``RoomClient/closePushes(to:)``), instead of waiting out the timeout.
    case unknownPush(String, suggestions: [String])

    /// The protocol error code of an ``rpc(code:message:data:)`` error; nil
    /// for every other case.
    public var code: Int? {
        if case .rpc(let code, _, _) = self { return code }
        return nil
    }

    /// A one-line account of the error, with the code for `rpc` and `closed`.
    public var description: String {
        switch self {
        case .connectFailed(let why): "connect failed: \(why)"
        case .rpc(let code, let message, let data):
            if let data { "rpc error \(code): \(message) \(data.text)" } else { "rpc error \(code): \(message)" }
        case .timeout(let report): report.description
        case .closed(let code, let reason): reason.isEmpty ? "closed (\(code))" : "closed (\(code) \(reason))"
        case .invalidPayload(let problem): "invalid payload: \(problem)"
        case .unknownPush(let push, let suggestions):
            suggestions.isEmpty
                ? "unknown push \"\(push)\" (docs/openrpc.json lists every push)"
                : "unknown push \"\(push)\": did you mean \(suggestions.joined(separator: ", "))?"
        }
    }
}

extension RoomClient {
    /// The push names close to `name` (edit distance at most 3, or one
    /// ends or starts the other), closest first, at most 3: the suggestions
    /// of ``RoomClientError/unknownPush(_:suggestions:)``.
    public static func closePushes(to name: String) -> [String] {
        let close = pushNames.compactMap { push -> (Int, Int, String)? in
            let distance = editDistance(Array(name.utf8), Array(push.utf8))
            let affix = push.hasPrefix(name) || name.hasPrefix(push) || push.hasSuffix(name) || name.hasSuffix(push)
            return distance <= 3 || affix ? (affix ? 0 : 1, distance, push) : nil
        }
        return close.sorted { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }.prefix(3).map(\.2)
    }

    /// Throws ``RoomClientError/unknownPush(_:suggestions:)`` unless `method` is a push.
    static func checkPush(_ method: String) throws {
        guard !pushNames.contains(method) else { return }
        throw RoomClientError.unknownPush(method, suggestions: closePushes(to: method))
    }

    private static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var row = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var next = [i + 1]
            for (j, y) in b.enumerated() {
                next.append(min(row[j + 1] + 1, next[j] + 1, row[j] + (x == y ? 0 : 1)))
            }
            row = next
        }
        return row[b.count]
    }
}
