import RoomWire

/// `RoomSnapshot` to RoomWire JSON (the format is described at `RoomSnapshot`).
extension RoomSnapshot {
    /// The format this build writes and reads (`"format"`).
    public static let format = 2
    /// The most JSON the chat history takes in a snapshot; older messages are left out.
    public static let chatBudgetBytes = 512 * 1024

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
        w.beginArray()
        for peer in peers { w.peer(peer) }
        w.endArray()
        w.key("session_store")
        w.sessionStore(sessionStore)
        w.field("poll_serial", pollSerial)
        w.key("polls")
        w.beginArray()
        for poll in polls { w.poll(poll) }
        w.endArray()
        w.key("live_stream")
        if let liveStream { w.liveStream(liveStream) } else { w.null() }
        w.key("chat")
        w.beginObject()
        w.key("messages")
        w.beginArray()
        let chat = JSONWriter.newest(chatMessages, within: Self.chatBudgetBytes) { $0.chatMessage($1) }
        for encoded in chat { w.raw(encoded) }
        w.endArray()
        w.key("pinned")
        if let pinned { w.chatMessage(pinned) } else { w.null() }
        w.endObject()
        w.key("qa")
        w.questionBoard(questions, added: questionsAdded)
        w.key("reactions")
        w.beginArray()
        let keptMessages = Set(chatMessages.suffix(chat.count).lazy.map(\.id))
        let keep = { (target: String) in ReactionTarget(target)?.isTap == true || keptMessages.contains(target) }
        for target in Self.reactionsWithin(Self.reactionsBudgetBytes, reactions, keep: keep) {
            w.reactionTarget(target)
        }
        w.endArray()
        w.key("moderation")
        w.moderation(moderation)
        w.key("rtmp")
        if let rtmp { w.rtmpState(rtmp) } else { w.null() }
        w.key("recording")
        if let recording { w.recordingState(recording) } else { w.null() }
        w.endObject()
        return w.bytes
    }
}

extension JSONWriter {
    /// `{"id", "timestamp", "sender": ActorRef, "message", "type"}` (kept messages are to everyone).
    fileprivate mutating func chatMessage(_ message: ChatMessage) {
        beginObject()
        field("id", message.id)
        field("timestamp", message.timestamp)
        key("sender")
        actor(message.sender)
        field("message", message.message)
        field("type", message.type)
        endObject()
    }

    fileprivate mutating func peer(_ peer: PeerSnapshot) {
        beginObject()
        field("id", peer.id)
        field("user_id", peer.userID)
        field("joined_at", peer.joinedAt)
        field("sequence", peer.sequence)
        field("role", peer.role)
        field("name", peer.name)
        field("data", peer.data)
        key("groups")
        strings(peer.groups)
        key("tracks")
        beginArray()
        for track in peer.tracks {
            beginObject()
            field("id", track.trackID)
            field("kind", track.type.rawValue)
            field("source", track.source.rawValue)
            field("mute", track.mute)
            field("description", track.description)
            endObject()
        }
        endArray()
        field("view_only", peer.viewOnly)
        key("metadata_listening")
        switch peer.metadataListening {
        case .all: string("*")
        case .keys(let keys): strings(keys.sorted())
        }
        endObject()
    }

    fileprivate mutating func sessionStore(_ store: SessionStore) {
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

    fileprivate mutating func poll(_ poll: PollSnapshot) {
        beginObject()
        field("id", poll.id)
        nullable("created_by", poll.createdBy)
        field("created_at", poll.createdAt)
        field("sequence", poll.sequence)
        field("title", poll.title)
        field("type", poll.type.rawValue)
        field("duration", poll.duration)
        field("anonymous", poll.anonymous)
        field("visibility", poll.visibility)
        nullable("vote", poll.vote)
        nullable("responses", poll.responses)
        field("state", poll.state.rawValue)
        nullable("started_by", poll.startedBy)
        nullable("stopped_by", poll.stoppedBy)
        nullable("started_at", poll.startedAt)
        nullable("stopped_at", poll.stoppedAt)
        key("questions")
        beginArray()
        for question in poll.questions {
            beginObject()
            field("index", question.index)
            field("text", question.text)
            field("type", question.type.rawValue)
            field("skippable", question.skippable)
            field("weight", question.weight)
            nullable("answer_min_len", question.answerMinLen)
            nullable("answer_max_len", question.answerMaxLen)
            key("options")
            strings(question.options)
            key("answer")
            if let answer = question.answer { ints(answer) } else { null() }
            endObject()
        }
        endArray()
        key("tallies")
        beginArray()
        for tally in poll.tallies {
            beginObject()
            key("option_counts")
            ints(tally.optionCounts)
            field("skipped", tally.skipped)
            field("total", tally.total)
            field("correct", tally.correct)
            endObject()
        }
        endArray()
        key("voters")
        beginArray()
        for voter in poll.voters.values.sorted(by: { $0.userID < $1.userID }) {
            beginObject()
            field("user_id", voter.userID)
            key("peer")
            actor(voter.peer)
            key("answered")
            int(voter.answered)
            field("score", voter.score)
            field("correct_responses", voter.correctResponses)
            field("total_responses", voter.totalResponses)
            field("duration", voter.duration)
            key("records")
            ints(voter.records)
            endObject()
        }
        endArray()
        key("records")
        beginArray()
        for record in poll.records {
            beginObject()
            field("question", record.question)
            key("options")
            ints(record.options)
            nullable("text", record.text)
            field("skipped", record.skipped)
            field("user_id", record.userID)
            key("peer")
            actor(record.peer)
            endObject()
        }
        endArray()
        field("total_responses", poll.totalResponses)
        endObject()
    }

    /// `started_at`, `started_by`, `stopped_at`, `stopped_by` of a stream, RTMP or recording run.
    fileprivate mutating func runStamps(
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

    fileprivate mutating func rtmpState(_ rtmp: RTMPRun) {
        beginObject()
        field("running", rtmp.running)
        runStamps(rtmp.startedAt, rtmp.startedBy, rtmp.stoppedAt, rtmp.stoppedBy)
        nullable("meeting_url", rtmp.meetingURL)
        key("urls")
        strings(rtmp.urls)
        endObject()
    }

    fileprivate mutating func recordingState(_ recording: RecordingRun) {
        beginObject()
        field("running", recording.running)
        runStamps(recording.startedAt, recording.startedBy, recording.stoppedAt, recording.stoppedBy)
        field("with_rtmp", recording.withRTMP)
        endObject()
    }

    fileprivate mutating func liveStream(_ stream: LiveStream) {
        beginObject()
        field("running", stream.running)
        field("state", stream.state.rawValue)
        nullable("starts_at", stream.startsAt)
        nullable("vod_url", stream.vodURL)
        runStamps(stream.startedAt, stream.startedBy, stream.stoppedAt, stream.stoppedBy)
        key("variants")
        beginArray()
        for variant in stream.variants {
            beginObject()
            field("url", variant.url)
            nullable("meeting_url", variant.meetingURL)
            nullable("metadata", variant.metadata)
            field("started_at", variant.startedAt)
            endObject()
        }
        endArray()
        key("cues")
        beginArray()
        for cue in stream.cues {
            beginObject()
            field("id", cue.id)
            field("payload", cue.payload)
            field("start_date", cue.startDate)
            field("end_date", cue.endDate)
            endObject()
        }
        endArray()
        endObject()
    }

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

    private mutating func ints(_ values: [Int]) {
        beginArray()
        for value in values { int(value) }
        endArray()
    }

    mutating func nullable(_ name: String, _ value: String?) {
        key(name)
        if let value { string(value) } else { null() }
    }

    private mutating func nullable(_ name: String, _ value: Int?) {
        key(name)
        if let value { int(value) } else { null() }
    }

    mutating func nullable(_ name: String, _ value: Int64?) {
        key(name)
        if let value { int(value) } else { null() }
    }

    private mutating func nullable(_ name: String, _ values: [String]?) {
        key(name)
        if let values { strings(values) } else { null() }
    }
}
