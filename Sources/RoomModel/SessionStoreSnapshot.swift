import RoomWire

// The `session_store` section of a `RoomSnapshot`:
//
//     {"entries":[{"key", "value": <the JSON value>, "version",
//                  "updated_by": ActorRef|null, "updated_at"}],
//      "tombstones":[keys]}
//
// Entries sorted by key; a value comes back byte for byte as it was saved.

extension JSONWriter {
    /// The `session_store` section.
    mutating func sessionStoreSection(_ store: SessionStore) {
        beginObject()
        key("entries")
        beginArray()
        for entry in store.entries.values.sorted(by: { $0.key < $1.key }) {
            beginObject()
            field("key", entry.key)
            key("value")
            raw(entry.value)  // already compact JSON
            field("version", entry.version)
            key("updated_by")
            actor(entry.updatedBy)
            nullable("updated_at", entry.updatedAt)
            endObject()
        }
        endArray()
        key("tombstones")
        strings(store.tombstones)
        endObject()
    }
}

extension SessionStore {
    init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        var keys: Set<String> = []
        let entries = try r.objects("entries") { e throws(RoomSnapshotError) in
            let key = try e.string("key")
            if !keys.insert(key).inserted { throw e.failure("key", "duplicate key \"\(key)\"") }
            return try SessionEntry(
                key: key,
                value: compactJSON(e.value("value")),
                version: e.int("version"),
                updatedBy: e.nullable("updated_by") { k throws(RoomSnapshotError) in try e.object(k, ActorRef.init) },
                updatedAt: e.nullable("updated_at", e.int64)
            )
        }
        self.init(entries: entries, tombstones: try r.strings("tombstones"))
    }
}

/// A JSON value as compact bytes, written with an explicit stack (no
/// recursion, however deep the value): byte for byte what `JSON.bytes`
/// writes, so a session-store value comes back exactly as it was saved.
func compactJSON(_ root: JSON) -> [UInt8] {
    enum Step {
        case value(JSON)
        case member(JSON.Member)
        case endArray, endObject
    }
    var writer = JSONWriter()
    var stack: [Step] = [.value(root)]
    while let step = stack.popLast() {
        switch step {
        case .endArray: writer.endArray()
        case .endObject: writer.endObject()
        case .member(let member):
            writer.key(member.key)
            stack.append(.value(member.value))
        case .value(let value):
            switch value {
            case .null: writer.null()
            case .bool(let b): writer.bool(b)
            case .number(let text): writer.raw(text.utf8)
            case .string(let s): writer.string(s)
            case .array(let items):
                writer.beginArray()
                stack.append(.endArray)
                stack.append(contentsOf: items.reversed().lazy.map(Step.value))
            case .object(let members):
                writer.beginObject()
                stack.append(.endObject)
                stack.append(contentsOf: members.reversed().lazy.map(Step.member))
            }
        }
    }
    return writer.bytes
}
