import RoomProtocol
import RoomWire

/// `RoomSnapshot` from RoomWire JSON (the format is described at
/// `RoomSnapshot`). Strict: a missing, unknown or mistyped field, or
/// state that could not have been saved (duplicate ids, results that point
/// past their poll's questions or records), throws an error naming the field.
extension RoomSnapshot {
    /// How deep a snapshot nests: session-store values nest at most 64
    /// levels (RoomWire's bound for a request, which they came in) and sit
    /// 4 levels deep in a snapshot.
    static let maxDepth = 64 + 4

    public init(json bytes: [UInt8]) throws(RoomSnapshotError) {
        let root: JSON
        do {
            // Not `rejectDuplicateKeys`: a session-store value may repeat a key
            // (requests let the last one win); the snapshot's own objects are
            // checked by SnapshotReader.
            root = try JSON.parse(bytes, maxDepth: Self.maxDepth)
        } catch {
            throw RoomSnapshotError(path: "", problem: "invalid JSON: \(error)")
        }
        self = try SnapshotReader.read(root, at: "") { r throws(RoomSnapshotError) in
            let format = try r.int("format")
            if !(1...Self.format).contains(format) {
                throw r.failure("format", "this build reads formats 1 to \(Self.format), got \(format)")
            }
            let chat = try format >= 2 ? r.object("chat", ChatSnapshot.init) : ChatSnapshot()
            let qa = try format >= 2 ? r.object("qa", QASnapshot.init) : QASnapshot()
            // Format 2 as saved before reactions (1.2, chat only) has none.
            let reactions = try r.has("reactions") ? r.objects("reactions", ReactionTargetSnapshot.init) : []
            // Format 2 as saved before moderation (1.2, section 22) has no bans.
            let moderation =
                try r.has("moderation") ? r.object("moderation", ModerationSnapshot.init) : ModerationSnapshot()
            let snapshot = try RoomSnapshot(
                id: r.string("id"),
                sessionID: r.string("session_id"),
                startedAt: r.int64("started_at"),
                nextSequence: r.int("next_sequence"),
                locked: r.bool("locked"),
                peers: r.objects("peers", PeerSnapshot.init),
                sessionStore: r.object("session_store", SessionStore.init),
                pollSerial: r.int("poll_serial"),
                polls: r.objects("polls", PollSnapshot.init),
                liveStream: r.nullable("live_stream") { key throws(RoomSnapshotError) in
                    try r.object(key, LiveStream.init)
                },
                chatMessages: chat.messages,
                pinned: chat.pinned,
                questions: qa.questions,
                questionsAdded: qa.added,
                reactions: reactions,
                moderation: moderation,
                rtmp: r.has("rtmp")
                    ? r.nullable("rtmp") { k throws(RoomSnapshotError) in try r.object(k, RTMPRun.init) } : nil,
                recording: r.has("recording")
                    ? r.nullable("recording") { k throws(RoomSnapshotError) in try r.object(k, RecordingRun.init) }
                    : nil
            )
            try snapshot.check()
            return snapshot
        }
    }

    /// What restoring relies on: peers in join order with unique ids, polls with unique ids.
    private func check() throws(RoomSnapshotError) {
        var peerIDs: Set<String> = []
        var previous = 0
        for (i, peer) in peers.enumerated() {
            if !peerIDs.insert(peer.id).inserted {
                throw RoomSnapshotError(path: "peers[\(i)].id", problem: "duplicate peer id \"\(peer.id)\"")
            }
            if peer.sequence <= previous || peer.sequence > nextSequence {
                throw RoomSnapshotError(
                    path: "peers[\(i)].sequence",
                    problem:
                        "expected above the previous peer's (\(previous)) and at most next_sequence (\(nextSequence)), got \(peer.sequence)"
                )
            }
            previous = peer.sequence
        }
        var pollIDs: Set<String> = []
        for (i, poll) in polls.enumerated() where !pollIDs.insert(poll.id).inserted {
            throw RoomSnapshotError(path: "polls[\(i)].id", problem: "duplicate poll id \"\(poll.id)\"")
        }
        var targets: Set<String> = []
        for (i, target) in reactions.enumerated() where !targets.insert(target.target).inserted {
            throw RoomSnapshotError(
                path: "reactions[\(i)].target",
                problem: "duplicate target \"\(target.target)\""
            )
        }
    }
}

extension PeerSnapshot {
    fileprivate init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        try self.init(
            id: r.string("id"),
            userID: r.string("user_id"),
            joinedAt: r.int64("joined_at"),
            sequence: r.int("sequence"),
            role: r.string("role"),
            name: r.string("name"),
            data: r.string("data"),
            groups: r.strings("groups"),
            tracks: r.objects("tracks") { t throws(RoomSnapshotError) in
                try Track(
                    trackID: t.string("id"),
                    type: t.oneOf("kind", TrackType.self),
                    source: t.oneOf("source", TrackSource.self),
                    mute: t.bool("mute"),
                    description: t.string("description")
                )
            },
            viewOnly: r.bool("view_only"),
            metadataListening: MetadataListening(r, "metadata_listening")
        )
    }
}

extension MetadataListening {
    /// `"*"` or an array of keys.
    fileprivate init(_ r: SnapshotReader, _ key: String) throws(RoomSnapshotError) {
        if case .string(let s) = try r.value(key) {
            guard s == "*" else { throw r.failure(key, "expected \"*\" or an array of keys, got \"\(s)\"") }
            self = .all
        } else {
            self = .keys(Set(try r.strings(key)))
        }
    }
}

extension SessionStore {
    fileprivate init(_ r: SnapshotReader) throws(RoomSnapshotError) {
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

/// The `chat` object of a format-2 snapshot.
private struct ChatSnapshot {
    var messages: [ChatMessage] = []
    var pinned: ChatMessage?

    init() {}

    init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        var ids: Set<String> = []
        messages = try r.objects("messages") { m throws(RoomSnapshotError) in
            let message = try ChatMessage(m)
            if !ids.insert(message.id).inserted { throw m.failure("id", "duplicate message id \"\(message.id)\"") }
            return message
        }
        pinned = try r.nullable("pinned") { k throws(RoomSnapshotError) in try r.object(k, ChatMessage.init) }
    }
}

extension ChatMessage {
    fileprivate init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        try self.init(
            id: r.string("id"),
            timestamp: r.int64("timestamp"),
            sender: r.object("sender", ActorRef.init),
            recipient: .broadcast,
            message: r.string("message"),
            type: r.string("type")
        )
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
private struct RunStamps {
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

extension RTMPRun {
    fileprivate init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        let run = try RunStamps(r)
        try self.init(
            running: r.bool("running"),
            startedAt: run.startedAt,
            startedBy: run.startedBy,
            stoppedAt: run.stoppedAt,
            stoppedBy: run.stoppedBy,
            meetingURL: r.nullable("meeting_url", r.string),
            urls: r.strings("urls")
        )
    }
}

extension RecordingRun {
    fileprivate init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        let run = try RunStamps(r)
        try self.init(
            running: r.bool("running"),
            startedAt: run.startedAt,
            startedBy: run.startedBy,
            stoppedAt: run.stoppedAt,
            stoppedBy: run.stoppedBy,
            withRTMP: r.bool("with_rtmp")
        )
    }
}

extension LiveStream {
    fileprivate init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        let running = try r.bool("running")
        // Saved before 1.2's lifecycle: live or ended.
        let state = try r.has("state") ? r.string("state") : running ? "live" : "ended"
        guard let state = StreamState(rawValue: state), state == .live || !running else {
            throw r.failure("state", "expected scheduled, live, ended or vod (live exactly when running), got \(state)")
        }
        let run = try RunStamps(r)
        try self.init(
            state: state,
            startedAt: run.startedAt,
            startedBy: run.startedBy,
            stoppedAt: run.stoppedAt,
            stoppedBy: run.stoppedBy,
            variants: r.objects("variants") { v throws(RoomSnapshotError) in
                try HLSVariant(
                    url: v.string("url"),
                    meetingURL: v.nullable("meeting_url", v.string),
                    metadata: v.nullable("metadata", v.string),
                    startedAt: v.int64("started_at")
                )
            },
            cues: r.objects("cues") { c throws(RoomSnapshotError) in
                try HLSCue(
                    id: c.string("id"),
                    payload: c.string("payload"),
                    startDate: c.int64("start_date"),
                    endDate: c.int64("end_date")
                )
            },
            startsAt: r.has("starts_at") ? r.nullable("starts_at", r.int64) : nil,
            vodURL: r.has("vod_url") ? r.nullable("vod_url", r.string) : nil
        )
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
