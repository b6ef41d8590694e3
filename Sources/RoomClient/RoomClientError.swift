import RoomWire

/// Everything `RoomClient` throws.
public enum RoomClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The WebSocket connection could not be established (bad URL, refused,
    /// handshake rejected, timeout, loop shut down). The text says why.
    case connectFailed(String)
    /// The server answered a `call` with a JSON-RPC error object.
    case rpc(code: Int, message: String, data: JSON?)
    /// Nothing suitable arrived in time.
    case timeout
    /// The connection is closed (and, for the inbox, drained). `code` is the
    /// close code the server sent, 1006 if it dropped without a close frame,
    /// or the code this client sent if it closed first.
    case closed(code: Int, reason: String)

    public var description: String {
        switch self {
        case .connectFailed(let why): "connect failed: \(why)"
        case .rpc(let code, let message, let data):
            if let data { "rpc error \(code): \(message) \(data.text)" } else { "rpc error \(code): \(message)" }
        case .timeout: "timed out"
        case .closed(let code, let reason): reason.isEmpty ? "closed (\(code))" : "closed (\(code) \(reason))"
        }
    }
}
