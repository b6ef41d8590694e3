import RoomWire

// The `audit` section of a `RoomSnapshot` (1.3, section 32): absent when
// the session recorded no act (and before 1.3).
//
//     "audit": {"last_seq", "entries": [entry…]}
//
// Each entry is the object the log encoded when it was recorded (the wire's
// entry, `{seq, at, actor, action, target, details}`), oldest first.

/// A session's audit log as saved.
public struct AuditSnapshot: Sendable, Equatable {
    public var lastSeq = 0
    public var entries: [AuditEntry] = []

    public init() {}

    init(_ log: AuditLog) {
        lastSeq = log.lastSeq
        entries = log.all
    }

    var isEmpty: Bool { lastSeq == 0 }

    init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        lastSeq = try r.int("last_seq")
        entries = try r.array("entries") { value, path throws(RoomSnapshotError) in
            guard case .object = value, let seq = value["seq"]?.intValue, let at = value["at"]?.intValue else {
                throw RoomSnapshotError(path: path, problem: "expected an audit entry with seq and at")
            }
            var w = JSONWriter(reserving: 256)
            w.value(value)
            return AuditEntry(seq: seq, at: Int64(at), bytes: w.bytes)
        }
        var previous = 0
        for (index, entry) in entries.enumerated() {
            guard entry.seq > previous, entry.seq <= lastSeq else {
                throw r.failure("entries", "entry \(index): seq \(entry.seq) out of order (last_seq \(lastSeq))")
            }
            previous = entry.seq
        }
    }
}

extension JSONWriter {
    /// The `audit` section.
    mutating func auditSection(_ audit: AuditSnapshot) {
        beginObject()
        field("last_seq", audit.lastSeq)
        key("entries")
        beginArray()
        for entry in audit.entries { raw(entry.bytes) }
        endArray()
        endObject()
    }
}
