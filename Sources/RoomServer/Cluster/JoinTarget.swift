import RoomModel
import RoomWire

/// The room a client's message names through the token of its `join` (or
/// else its `preview`), when the token is valid: where the edge looks the
/// room's home up, and how a home recognizes a new client. An invalid
/// token names nothing (it is answered where the client is: every node
/// gives the same error).
struct JoinTarget {
    var room: RoomID
    /// A `join` (it may claim the room), not only a `preview`.
    var joins: Bool

    static func of(_ message: [UInt8], verifier: TokenVerifier) -> JoinTarget? {
        guard let json = try? JSON.parse(message) else { return nil }
        let calls: [JSON] =
            if case .array(let batch) = json { Array(batch.prefix(Dispatcher.maxBatch)) } else { [json] }
        var found: JoinTarget?
        for call in calls {
            guard let method = call["method"]?.stringValue, method == "join" || method == "preview",
                let token = call["params"]?["token"]?.stringValue,
                // A resume may carry a token that expired inside the grace (the home checks it).
                let grant = try? verifier.verifyApp(token, expiredGrace: call["params"]?["peer_id"] == nil ? 0 : 3600)
            else { continue }
            if found == nil {
                found = JoinTarget(room: grant.roomID, joins: method == "join")
            } else if method == "join" {
                found!.joins = true
            }
        }
        return found
    }
}
