import Foundation
import RoomModel
import RoomWire

/// Test mode's journal (PROTOCOL.md section 25, `GET /v2/test/journal`):
/// per room session, every call, answer, push and webhook in the order
/// roomd made them, one JSON line each, timed on the daemon's clock. The
/// join token is never kept (`params.token` reads `"<redacted>"`).
///
/// Bounded: a session keeps at most `maxLines` lines and `maxBytes` bytes
/// (then it stops and says how many it dropped), and at most `maxRooms`
/// sessions are kept (the one written longest ago goes first). Service
/// thread only; nothing of it exists outside test mode.
final class TestJournal {
    static let maxLines = 200_000
    static let maxBytes = 32 << 20
    static let maxRooms = 64

    private struct Session {
        var sessionID: String
        var lines: [[UInt8]] = []
        var bytes = 0
        var dropped = 0
        var touched: Int
    }

    private var sessions: [RoomID: Session] = [:]
    private let clock: RoomClock
    private let limits: (lines: Int, bytes: Int, rooms: Int)
    private var writes = 0
    /// A call of a connection without a peer yet (a `join`): written into the
    /// room the call's first line goes to, before that line.
    private var pending: [UInt8]?

    init(clock: RoomClock, maxLines: Int = maxLines, maxBytes: Int = maxBytes, maxRooms: Int = maxRooms) {
        self.clock = clock
        limits = (maxLines, maxBytes, maxRooms)
    }

    /// The end of a call's handling: a call that reached no room (a failed
    /// `join`, a notification before joining) is not kept.
    func endCall() { pending = nil }

    // MARK: recording

    /// A call as it arrives (before it is handled), with its params; a join's token is redacted.
    func call(_ call: JSON, from connection: Connection) {
        var w = JSONWriter(reserving: 256)
        w.object { w in
            w.field("t", clock.nowMillis())
            w.field("kind", "call")
            w.key("peer_id")
            if let id = connection.peer?.id { w.string(id) } else { w.null() }
            w.key("id")
            w.value(call["id"] ?? .null)
            w.key("method")
            w.value(call["method"] ?? .null)
            w.key("params")
            w.value(Self.redacted(call["params"] ?? .object([])))
        }
        if let peer = connection.peer, !peer.hasLeft {
            append(w.bytes, to: peer.room)
        } else {
            pending = w.bytes
        }
    }

    /// The answer to a call (the response object, as sent).
    func answer(_ response: [UInt8], to connection: Connection, roomBefore: Room?) {
        defer { pending = nil }
        let room = connection.peer.flatMap { $0.hasLeft ? nil : $0.room } ?? roomBefore
        guard let room else { return }
        append(line(kind: "answer", peerID: connection.peer?.id.rawValue, envelope: response), to: room)
    }

    /// A push, encoded once, to `recipients` (their ids, in order).
    func push(_ frame: Frame, to recipients: [Peer]) {
        guard let room = recipients.first(where: { !$0.hasLeft })?.room else { return }
        // A synthetic audience's peers (section 33) are counted, not listed:
        // 10,000 ids per push would be most of a scenario's time.
        let listed = recipients.filter { $0.endpoint?.connection?.isSynthetic != true }
        var w = JSONWriter(reserving: 64 + listed.count * 34)
        w.beginObject()
        w.field("t", clock.nowMillis())
        w.field("kind", "push")
        w.key("to")
        w.strings(listed.map(\.id))
        if listed.count < recipients.count { w.field("audience", recipients.count - listed.count) }
        var line = w.bytes
        line.append(UInt8(ascii: ","))
        line.append(contentsOf: Self.afterVersion(frame.textPayload))
        append(line, to: room)
    }

    /// A webhook event handed to the sender.
    func webhook(type: String, room: RoomRef) {
        var w = JSONWriter(reserving: 96)
        w.object { w in
            w.field("t", clock.nowMillis())
            w.field("kind", "webhook")
            w.field("type", type)
        }
        append(w.bytes, roomID: room.roomID, sessionID: room.sessionID)
    }

    // MARK: reading

    /// The lines of `roomID`'s latest session, each ending in a newline; nil if none.
    func lines(of roomID: RoomID) -> [UInt8]? {
        guard let session = sessions[roomID] else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(session.bytes + session.lines.count + 64)
        for line in session.lines {
            out += line
            out.append(10)
        }
        if session.dropped > 0 {
            out += Array(#"{"kind":"truncated","lines_dropped":\#(session.dropped)}"#.utf8)
            out.append(10)
        }
        return out
    }

    // MARK: internals

    private func append(_ line: [UInt8], to room: Room) {
        append(line, roomID: room.id, sessionID: room.sessionID)
    }

    private func append(_ line: [UInt8], roomID: RoomID, sessionID: String) {
        writes += 1
        if sessions[roomID]?.sessionID != sessionID {
            if sessions[roomID] == nil, sessions.count >= limits.rooms,
                let oldest = sessions.min(by: { $0.value.touched < $1.value.touched })?.key
            {
                sessions.removeValue(forKey: oldest)
            }
            sessions[roomID] = Session(sessionID: sessionID, touched: writes)
        }
        if let call = pending {
            pending = nil
            add(call, to: roomID)
        }
        add(line, to: roomID)
    }

    private func add(_ line: [UInt8], to roomID: RoomID) {
        sessions[roomID]!.touched = writes
        guard sessions[roomID]!.lines.count < limits.lines, sessions[roomID]!.bytes + line.count <= limits.bytes
        else {
            sessions[roomID]!.dropped += 1
            return
        }
        sessions[roomID]!.lines.append(line)
        sessions[roomID]!.bytes += line.count
    }

    /// `{"t","kind","peer_id", …the envelope's members after "jsonrpc"}`.
    private func line(kind: String, peerID: String?, envelope: [UInt8]) -> [UInt8] {
        var w = JSONWriter(reserving: 64 + envelope.count)
        w.beginObject()
        w.field("t", clock.nowMillis())
        w.field("kind", kind)
        w.key("peer_id")
        if let peerID { w.string(peerID) } else { w.null() }
        var line = w.bytes
        line.append(UInt8(ascii: ","))
        line.append(contentsOf: Self.afterVersion(envelope))
        return line
    }

    /// The members of a JSON-RPC envelope after its leading `{"jsonrpc":"2.0",`.
    private static func afterVersion(_ envelope: some Collection<UInt8>) -> [UInt8] {
        let prefix = Array(#"{"jsonrpc":"2.0","#.utf8)
        let bytes = Array(envelope)
        return bytes.starts(with: prefix) ? Array(bytes.dropFirst(prefix.count)) : bytes
    }

    /// A join's `token` becomes `"<redacted>"`, and its claims that say who
    /// joins (`claims`: room_id, user_id, role, name, user_restrictions; no
    /// signature, no times) are kept beside it, for `roomd replay`.
    private static func redacted(_ params: JSON) -> JSON {
        guard case .object(var members) = params, let token = params["token"]?.stringValue else { return params }
        members = members.map { $0.key == "token" ? JSON.Member("token", "<redacted>") : $0 }
        if let claims = claims(of: token) { members.append(JSON.Member("claims", claims)) }
        return .object(members)
    }

    private static func claims(of token: String) -> JSON? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let payload = try? JSON.parse(Array(data)),
            case .object(let members) = payload
        else { return nil }
        let kept: Set<String> = ["room_id", "user_id", "role", "name", "user_restrictions"]
        return .object(members.filter { kept.contains($0.key) })
    }
}
