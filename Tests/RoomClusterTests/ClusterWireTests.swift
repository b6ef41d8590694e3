import Testing

@testable import RoomCluster

/// Node-to-node messages (ClusterWire.swift): every record survives the
/// round trip, and anything truncated or malformed decodes to nil, never a crash.
@Suite struct ClusterWireTests {
    static let records: [ClusterRecord] = [
        .data(conn: 1, bytes: Array(#"{"jsonrpc":"2.0"}"#.utf8)),
        .lost(conn: 300),
        .congested(conn: 301),
        .drained(conn: 1 << 40),
        .moved(room: "room-1", adopt: true),
        .moved(room: "", adopt: false),
        .frame(conns: [1, 2, 1 << 40], bytes: [0x81, 0x02, 0x7B, 0x7D]),
        .close(conn: 7, code: 4008),
        .joined(conn: 7, peer: "p-1"),
        .replay(conn: 7, bytes: [0x81, 0x00]),
        .reroute(conn: 8, bytes: Array("[]".utf8)),
        .ack(conn: 8, count: 64),
        .attach(conn: 9, peer: "p-2", room: "room-1"),
    ]

    @Test func everyRecordRoundTripsInOrder() {
        var writer = ClusterWriter(node: "n1", incarnation: "00ff00ff00ff00ff")
        for record in Self.records { writer.append(record) }
        #expect(writer.records == Self.records.count)
        let message = ClusterMessage.decode(writer.bytes)
        #expect(message == ClusterMessage(node: "n1", incarnation: "00ff00ff00ff00ff", records: Self.records))
        writer.reset()
        #expect(writer.isEmpty)
        #expect(ClusterMessage.decode(writer.bytes)?.records == [])
    }

    @Test func truncatedOrMalformedMessagesAreRefused() {
        var writer = ClusterWriter(node: "n1", incarnation: "1")
        for record in Self.records { writer.append(record) }
        let bytes = writer.bytes
        for cut in 0..<bytes.count where ClusterMessage.decode(Array(bytes.prefix(cut))) != nil {
            // A cut exactly between two records is a shorter valid message; anything else is refused.
            let decoded = ClusterMessage.decode(Array(bytes.prefix(cut)))!
            #expect(Self.records.starts(with: decoded.records), "cut at \(cut)")
        }
        #expect(ClusterMessage.decode([]) == nil)
        #expect(ClusterMessage.decode([2, 0, 0]) == nil, "unknown version")
        #expect(
            ClusterMessage.decode(ClusterWriter(node: "bad node", incarnation: "1").bytes) == nil,
            "invalid node id"
        )
        #expect(
            ClusterMessage.decode(ClusterWriter(node: "n1", incarnation: "1").bytes + [42]) == nil,
            "unknown record"
        )
        // A frame claiming more connections than bytes left.
        #expect(
            ClusterMessage.decode(ClusterWriter(node: "n1", incarnation: "1").bytes + [3, 0xFF, 0xFF, 0x03]) == nil
        )
    }
}
