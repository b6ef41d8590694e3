import RoomProtocol
import RoomWire

/// A room's lasting state as one value (PROTOCOL.md section 18, docs/CLUSTER.md):
/// the room's home node stores it on the bus after changes; a node that
/// takes the room over when its home died restores it (Takeover.swift).
/// What it leaves out is what a restart of the room's timers rebuilds or
/// what expires anyway: active speakers, pending role-change requests,
/// `find-peer` iterators, large-room `room-state` bookkeeping, and the
/// peers' connections.
///
/// On the bus it is RoomWire JSON (`encodeJSON()`, `init(json:)`), one
/// object with every field present (null where a value is absent),
/// snake_case keys, and no other keys: the envelope, then one key per
/// section, in this order:
///
///     {"format":2, "id", "session_id", "started_at", "next_sequence", "locked",
///      "peers", "session_store", "poll_serial", "polls", "live_stream", "chat",
///      "qa", "reactions", "moderation", "rtmp", "recording", "stage"?, "held"?, "audit"?}
///
/// Each feature owns its section: its shape, encoder and decoder
/// live with its state type — `PeerSnapshot.swift`, `SessionStoreSnapshot.swift`,
/// `Polls/PollSnapshot.swift`, `LiveStreamSnapshot.swift`,
/// `Chat/ChatSnapshot.swift`, `QA/QuestionSnapshot.swift`,
/// `Reactions/ReactionSnapshot.swift`, `Moderation/ModerationSnapshot.swift`,
/// `RecordingSnapshot.swift` (`rtmp`, `recording`) and
/// `Stage/StageSnapshot.swift` (`stage`, only when the queue was used); what they share is
/// in `SnapshotWriting.swift` and `SnapshotReader.swift`. A section is one
/// key and its JSON value. Nothing is cut (1.3): every section is written
/// whole, bounded by the room's settings; the bus keeps a large state in
/// chunks (RoomCluster's `StateLayout`).
///
/// Older snapshots are still read: format 1 (1.1) has no `chat`, `qa` or
/// `reactions`; format 2 saved before reactions has none, one saved before
/// moderation restores no bans, and `rtmp` and `recording` may be absent.
///
/// An ActorRef is `{"peer_id", "role", "name", "user_id"}`. Arrays keep the
/// model's order; what the model keeps unordered (session-store entries,
/// poll voters, listened keys) is sorted, so that an unchanged room encodes
/// to the same bytes (the server saves a room only when they differ).
public struct RoomSnapshot: Sendable, Equatable {
    public var id: RoomID
    public var sessionID: String
    public var startedAt: Int64
    public var nextSequence: Int
    public var locked: Bool
    public var peers: [PeerSnapshot]
    public var sessionStore: SessionStore
    public var pollSerial: Int
    public var polls: [PollSnapshot]
    public var liveStream: LiveStream?
    /// The chat history (oldest first) and the pin (1.2, section 19).
    public var chatMessages: [ChatMessage]
    public var pinned: ChatMessage?
    /// Audience questions in the order asked, and how many were added (1.2, section 21).
    public var questions: [Question]
    public var questionsAdded: Int
    /// Reactions and taps (1.2, section 20): the stream, the contestants by
    /// id, then the messages newest first.
    public var reactions: [ReactionTargetSnapshot]
    /// Bans, chat bans, pause and slow mode (1.2, section 22; ModerationSnapshot.swift).
    public var moderation = ModerationSnapshot()
    /// RTMP out and recording (1.2, section 23; absent in older snapshots).
    public var rtmp: RTMPRun?
    public var recording: RecordingRun?
    /// The call-in queue and its blocks (1.3, section 26; Stage/StageSnapshot.swift):
    /// absent when the session never used the queue.
    public var stage = StageSnapshot()
    /// Messages held for review, oldest first (1.3, section 31): absent when none wait.
    public var held: [ChatMessage] = []
    /// The session's audit log (1.3, section 32; Audit/AuditSnapshot.swift): absent when empty.
    public var audit = AuditSnapshot()

    /// The format this build writes and reads (`"format"`).
    public static let format = 2
    /// How deep a snapshot nests: session-store values nest at most 64
    /// levels (RoomWire's bound for a request, which they came in) and sit
    /// 4 levels deep in a snapshot.
    static let maxDepth = 64 + 4

    /// An ended room whose id stays locked: the lock alone.
    public static func lockedOnly(_ id: RoomID) -> RoomSnapshot {
        RoomSnapshot(
            id: id,
            sessionID: "",
            startedAt: 0,
            nextSequence: 0,
            locked: true,
            peers: [],
            sessionStore: SessionStore(),
            pollSerial: 0,
            polls: [],
            liveStream: nil,
            chatMessages: [],
            pinned: nil,
            questions: [],
            questionsAdded: 0,
            reactions: []
        )
    }
}

/// The envelope and the sections in order; each section's encoder and
/// decoder is its feature's.
extension RoomSnapshot {
    /// The snapshot as compact JSON: the same room always gives the same bytes.
    public func encodeJSON() -> [UInt8] {
        var w = JSONWriter(reserving: 1024)
        w.beginObject()
        w.field("format", Self.format)
        w.field("id", id)
        w.field("session_id", sessionID)
        w.field("started_at", startedAt)
        w.field("next_sequence", nextSequence)
        w.field("locked", locked)
        w.key("peers")
        w.peersSection(peers)
        w.key("session_store")
        w.sessionStoreSection(sessionStore)
        w.field("poll_serial", pollSerial)
        w.key("polls")
        w.pollsSection(polls)
        w.key("live_stream")
        w.liveStreamSection(liveStream)
        w.key("chat")
        w.chatSection(chatMessages, pinned: pinned)
        w.key("qa")
        w.qaSection(questions, added: questionsAdded)
        w.key("reactions")
        w.reactionsSection(reactions)
        w.key("moderation")
        w.moderationSection(moderation)
        w.key("rtmp")
        w.rtmpSection(rtmp)
        w.key("recording")
        w.recordingSection(recording)
        if !stage.isEmpty {
            w.key("stage")
            w.stageSection(stage)
        }
        if !held.isEmpty {
            w.key("held")
            w.heldSection(held)
        }
        if !audit.isEmpty {
            w.key("audit")
            w.auditSection(audit)
        }
        w.endObject()
        return w.bytes
    }

    /// The snapshot `encodeJSON()` wrote. Strict: a missing, unknown or
    /// mistyped field, or state that could not have been saved (duplicate
    /// ids, results that point past their poll's questions or records),
    /// throws an error naming the field.
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
            var snapshot = try RoomSnapshot(
                id: r.id("id"),
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
            // Absent when the session never used the call-in queue (and before 1.3).
            if r.has("stage") { snapshot.stage = try r.object("stage", StageSnapshot.init) }
            // Absent when no message waits for review (and before 1.3).
            if r.has("held") { snapshot.held = try r.objects("held", ChatMessage.init) }
            // Absent when the session recorded no moderation act (and before 1.3).
            if r.has("audit") { snapshot.audit = try r.object("audit", AuditSnapshot.init) }
            try PeerSnapshot.check(snapshot.peers, nextSequence: snapshot.nextSequence)
            try PollSnapshot.check(snapshot.polls)
            try ReactionTargetSnapshot.check(snapshot.reactions)
            return snapshot
        }
    }
}
