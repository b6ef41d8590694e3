import RoomWire

// What the sections of a `RoomSnapshot` share: an ActorRef, the stamps of
// a run, and nullable fields. Each section's own encoder and decoder live
// with its state type (PeerSnapshot.swift, Polls/PollSnapshot.swift, …).

extension JSONWriter {
    /// `{"peer_id", "role", "name", "user_id"}`, or null.
    mutating func actor(_ actor: ActorRef?) {
        guard let actor else { return null() }
        beginObject()
        nullable("peer_id", actor.peerID)
        nullable("role", actor.role)
        field("name", actor.name)
        nullable("user_id", actor.userID)
        endObject()
    }

    /// `started_at`, `started_by`, `stopped_at`, `stopped_by` of a stream, RTMP or recording run.
    mutating func runStamps(
        _ startedAt: Int64?,
        _ startedBy: ActorRef?,
        _ stoppedAt: Int64?,
        _ stoppedBy: ActorRef?
    ) {
        nullable("started_at", startedAt)
        key("started_by")
        actor(startedBy)
        nullable("stopped_at", stoppedAt)
        key("stopped_by")
        actor(stoppedBy)
    }

    mutating func ints(_ values: [Int]) {
        beginArray()
        for value in values { int(value) }
        endArray()
    }

    mutating func nullable(_ name: String, _ value: String?) {
        key(name)
        if let value { string(value) } else { null() }
    }

    mutating func nullable(_ name: String, _ value: (some StringID)?) {
        nullable(name, value?.rawValue)
    }

    mutating func nullable(_ name: String, _ value: Int?) {
        key(name)
        if let value { int(value) } else { null() }
    }

    mutating func nullable(_ name: String, _ value: Int64?) {
        key(name)
        if let value { int(value) } else { null() }
    }

    mutating func nullable(_ name: String, _ values: [String]?) {
        key(name)
        if let values { strings(values) } else { null() }
    }
}

extension ActorRef {
    init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        try self.init(
            peerID: r.nullable("peer_id", r.string),
            role: r.nullable("role", r.string),
            name: r.string("name"),
            userID: r.nullable("user_id", r.string)
        )
    }
}

/// `started_at`, `started_by`, `stopped_at`, `stopped_by` of a stream, RTMP or recording run.
struct RunStamps {
    var startedAt: Int64?
    var startedBy: ActorRef?
    var stoppedAt: Int64?
    var stoppedBy: ActorRef?

    init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        startedAt = try r.nullable("started_at", r.int64)
        startedBy = try r.nullable("started_by") { k throws(RoomSnapshotError) in try r.object(k, ActorRef.init) }
        stoppedAt = try r.nullable("stopped_at", r.int64)
        stoppedBy = try r.nullable("stopped_by") { k throws(RoomSnapshotError) in try r.object(k, ActorRef.init) }
    }
}
