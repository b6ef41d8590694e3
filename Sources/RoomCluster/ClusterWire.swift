/// What one node sends another on `roomd.node.<node>.in` (docs/CLUSTER.md):
/// a header naming the sender (node id and incarnation), then records in
/// the order they happened. An edge node sends its clients' messages to the
/// room's home; the home sends back answers and pushes, a push to several
/// clients of one node once, with their connection ids. NATS keeps one
/// publisher's messages on one subject in order, so the home's order of a
/// room's events is the order every node delivers them in.
public enum ClusterRecord: Equatable, Sendable {
    /// Edge → home: one complete WebSocket message of client connection `conn`.
    case data(conn: UInt64, bytes: [UInt8])
    /// Edge → home: the client connection is gone (closed, or dropped as slow).
    case lost(conn: UInt64)
    /// Home → edge: one WebSocket frame (header included, as written) for these connections.
    case frame(conns: [UInt64], bytes: [UInt8])
    /// Home → edge: close the connection with `code` once its queue is written.
    case close(conn: UInt64, code: UInt16)
    /// Home → edge: a `join` succeeded on the connection (the join deadline
    /// is met), as peer `peer`.
    case joined(conn: UInt64, peer: String)
    /// Home → edge: a frame queued past the outbound limit (the pushes held
    /// during a reconnect grace, replayed after the resuming `join`).
    case replay(conn: UInt64, bytes: [UInt8])
    /// Home → edge: this node is not the home of the room the message joins
    /// (it moved): look the room up again and send the message there.
    case reroute(conn: UInt64, bytes: [UInt8])
    /// Home → edge: `count` more of the connection's messages were handled
    /// (the edge stops reading a client that is too far ahead: flow control).
    case ack(conn: UInt64, count: UInt64)
    /// Edge → a room's new home (the old one died): the client of connection
    /// `conn` is still here, as peer `peer` of `room`.
    case attach(conn: UInt64, peer: String, room: String)
    /// Edge → home: the connection's queue passed the high watermark while
    /// the kernel took every byte (flow control: it counts towards pausing
    /// the room on its home, as a congested local connection does there).
    case congested(conn: UInt64)
    /// Edge → home: the connection's queue drained below the low watermark,
    /// or its client stopped reading (then it is a slow client, not roomd).
    case drained(conn: UInt64)
    /// Old home → every other node: the sender drains and handed `room` over
    /// (its whole state saved, its lease released; it answered none of the
    /// messages it did not acknowledge). A client's node sends those again
    /// to the room's new home; `adopt`: claim the room even without clients.
    case moved(room: String, adopt: Bool)

    var tag: UInt8 {
        switch self {
        case .data: 1
        case .lost: 2
        case .frame: 3
        case .close: 4
        case .joined: 5
        case .replay: 6
        case .reroute: 7
        case .ack: 8
        case .attach: 9
        case .congested: 10
        case .drained: 11
        case .moved: 12
        }
    }
}

/// The header and records of one node-to-node message.
public struct ClusterMessage: Equatable, Sendable {
    public var node: NodeID
    public var incarnation: String
    public var records: [ClusterRecord]

    public init(node: NodeID, incarnation: String, records: [ClusterRecord]) {
        self.node = node
        self.incarnation = incarnation
        self.records = records
    }

    static let version: UInt8 = 1

    /// Decodes a message; nil for anything malformed (every length is
    /// checked against what is left, no count is trusted before it is read).
    public static func decode(_ bytes: [UInt8]) -> ClusterMessage? {
        var reader = ClusterReader(bytes)
        guard reader.byte() == version, let node = reader.string(), let incarnation = reader.string(),
            ClusterConfig.isValidNodeID(node)
        else { return nil }
        var records: [ClusterRecord] = []
        while !reader.atEnd {
            guard let tag = reader.byte() else { return nil }
            switch tag {
            case 1:
                guard let conn = reader.varint(), let bytes = reader.block() else { return nil }
                records.append(.data(conn: conn, bytes: bytes))
            case 2, 10, 11:
                guard let conn = reader.varint() else { return nil }
                records.append(tag == 2 ? .lost(conn: conn) : tag == 10 ? .congested(conn: conn) : .drained(conn: conn))
            case 3:
                guard let count = reader.varint(), count <= UInt64(reader.remaining) else { return nil }
                var conns: [UInt64] = []
                conns.reserveCapacity(Int(count))
                for _ in 0..<count {
                    guard let conn = reader.varint() else { return nil }
                    conns.append(conn)
                }
                guard let bytes = reader.block() else { return nil }
                records.append(.frame(conns: conns, bytes: bytes))
            case 4:
                guard let conn = reader.varint(), let code = reader.varint(), code <= UInt64(UInt16.max) else {
                    return nil
                }
                records.append(.close(conn: conn, code: UInt16(code)))
            case 5:
                guard let conn = reader.varint(), let peer = reader.block() else { return nil }
                records.append(.joined(conn: conn, peer: String(decoding: peer, as: UTF8.self)))
            case 9:
                guard let conn = reader.varint(), let peer = reader.block(), let room = reader.block() else {
                    return nil
                }
                records.append(
                    .attach(
                        conn: conn,
                        peer: String(decoding: peer, as: UTF8.self),
                        room: String(decoding: room, as: UTF8.self)
                    )
                )
            case 8:
                guard let conn = reader.varint(), let count = reader.varint() else { return nil }
                records.append(.ack(conn: conn, count: count))
            case 12:
                guard let room = reader.block(), let adopt = reader.byte(), adopt <= 1 else { return nil }
                records.append(.moved(room: String(decoding: room, as: UTF8.self), adopt: adopt == 1))
            case 6, 7:
                guard let conn = reader.varint(), let bytes = reader.block() else { return nil }
                records.append(tag == 6 ? .replay(conn: conn, bytes: bytes) : .reroute(conn: conn, bytes: bytes))
            default:
                return nil
            }
        }
        return ClusterMessage(node: NodeID(node), incarnation: incarnation, records: records)
    }
}

/// Builds one message record by record (the service thread's outbox per node).
public struct ClusterWriter: Sendable {
    public private(set) var bytes: [UInt8]
    public private(set) var records = 0
    private let headerCount: Int

    public init(node: NodeID, incarnation: String) {
        var bytes: [UInt8] = [ClusterMessage.version]
        Self.appendBytes(Array(node.rawValue.utf8), to: &bytes)
        Self.appendBytes(Array(incarnation.utf8), to: &bytes)
        self.bytes = bytes
        headerCount = bytes.count
    }

    public var isEmpty: Bool { records == 0 }

    /// Back to the header alone (keeps the buffer).
    public mutating func reset() {
        bytes.removeSubrange(headerCount...)
        records = 0
    }

    public mutating func append(_ record: ClusterRecord) {
        if case .frame(let conns, let payload) = record {
            appendFrame(conns: conns, count: payload.count) { $0.append(contentsOf: payload) }
            return
        }
        records += 1
        bytes.append(record.tag)
        switch record {
        case .data(let conn, let payload), .replay(let conn, let payload), .reroute(let conn, let payload):
            Self.appendVarint(conn, to: &bytes)
            Self.appendBytes(payload, to: &bytes)
        case .lost(let conn), .congested(let conn), .drained(let conn):
            Self.appendVarint(conn, to: &bytes)
        case .joined(let conn, let peer):
            Self.appendVarint(conn, to: &bytes)
            Self.appendBytes(Array(peer.utf8), to: &bytes)
        case .attach(let conn, let peer, let room):
            Self.appendVarint(conn, to: &bytes)
            Self.appendBytes(Array(peer.utf8), to: &bytes)
            Self.appendBytes(Array(room.utf8), to: &bytes)
        case .frame:
            break  // above
        case .close(let conn, let code):
            Self.appendVarint(conn, to: &bytes)
            Self.appendVarint(UInt64(code), to: &bytes)
        case .ack(let conn, let count):
            Self.appendVarint(conn, to: &bytes)
            Self.appendVarint(count, to: &bytes)
        case .moved(let room, let adopt):
            Self.appendBytes(Array(room.utf8), to: &bytes)
            bytes.append(adopt ? 1 : 0)
        }
    }

    /// A `.frame` record whose bytes `write` appends (no intermediate copy):
    /// `count` is the number of bytes `write` will append.
    public mutating func appendFrame(conns: [UInt64], count: Int, _ write: (inout [UInt8]) -> Void) {
        records += 1
        bytes.append(3)  // ClusterRecord.frame
        Self.appendVarint(UInt64(conns.count), to: &bytes)
        for conn in conns { Self.appendVarint(conn, to: &bytes) }
        Self.appendVarint(UInt64(count), to: &bytes)
        write(&bytes)
    }

    static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    static func appendBytes(_ payload: [UInt8], to bytes: inout [UInt8]) {
        appendVarint(UInt64(payload.count), to: &bytes)
        bytes.append(contentsOf: payload)
    }
}

struct ClusterReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { offset >= bytes.count }
    var remaining: Int { bytes.count - offset }

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func varint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while shift < 64 {
            guard let b = byte() else { return nil }
            value |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return value }
            shift += 7
        }
        return nil
    }

    mutating func block() -> [UInt8]? {
        guard let count = varint(), count <= UInt64(remaining) else { return nil }
        defer { offset += Int(count) }
        return Array(bytes[offset..<offset + Int(count)])
    }

    mutating func string() -> String? {
        guard let raw = block(), raw.count <= 64 else { return nil }
        return String(decoding: raw, as: UTF8.self)
    }
}
