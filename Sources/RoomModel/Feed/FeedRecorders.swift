import RoomCollections

/// Every room session's `FeedRecorder`, by room id, while it runs and for
/// `window_s` after it ended (PROTOCOL.md section 24: an ended session's
/// feed is kept `window_s`, then 404). Bounded: a room id keeps its last
/// `maxSessionsPerRoom` sessions, and ended ones go after `window_s` (swept
/// when a session opens or ends and when a feed is read, and by `sweepFeeds`).
struct FeedRecorders {
    static let maxSessionsPerRoom = 4
    private(set) var byRoom: [RoomID: [FeedRecorder]] = [:]
    /// Ended recorders, oldest end first.
    private var ended = FIFO<FeedRecorder>()

    mutating func open(_ recorder: FeedRecorder) {
        var list = byRoom[recorder.roomID] ?? []
        list.removeAll { $0.sessionID == recorder.sessionID }
        list.append(recorder)
        if list.count > Self.maxSessionsPerRoom { list.removeFirst(list.count - Self.maxSessionsPerRoom) }
        byRoom[recorder.roomID] = list
    }

    mutating func closed(_ recorder: FeedRecorder) {
        ended.append(recorder)
    }

    /// Drops the ended sessions whose window is over.
    mutating func sweep(now: Int64) {
        while let first = ended.first, (first.endedAt ?? now) + first.windowSeconds * 1000 <= now {
            ended.removeFirst()
            guard var list = byRoom[first.roomID] else { continue }
            list.removeAll { $0 === first }
            byRoom[first.roomID] = list.isEmpty ? nil : list
        }
    }

    /// The session of `roomID` that had started before `millis` (the newest such).
    func recorder(of roomID: RoomID, before millis: Int64) -> FeedRecorder? {
        byRoom[roomID]?.last { $0.startedAt < millis }
    }

    var count: Int { byRoom.values.reduce(0) { $0 + $1.count } }
}

/// What `feed(_:from:to:)` finds.
public enum FeedLookup: Sendable, Equatable {
    case span(FeedSpan)
    /// No session of that room at `to` (404, 40001).
    case noSession
    /// Part of the span is no longer held (410).
    case gone
}

/// What `feedSeconds(_:from:to:)` finds.
public enum FeedSecondsLookup: Sendable {
    case seconds(FeedSeconds)
    /// No session of that room at `to` (404, 40001).
    case noSession
    /// Part of the span is no longer held (410).
    case gone
}

/// The audience feed (PROTOCOL.md section 24): the registry's side. The
/// actions of every feature tell the room's recorder what happened with one
/// call each; the server reads spans.
extension RoomRegistry {
    /// The feed of `roomID` over [from, to) in whole seconds; the caller checked
    /// the span's rules (whole seconds, order, not in the future, ≤ 60 s, window).
    public func feed(_ roomID: RoomID, from: Int64, to: Int64) -> FeedLookup {
        guard let (recorder, now) = feedRecorder(roomID, at: to) else { return .noSession }
        guard let span = recorder.span(from: from, to: to, now: now) else { return .gone }
        return .span(span)
    }

    /// The stored seconds of `roomID` over [from, to), which the server
    /// assembles a body from (each second encoded once); the same rules as
    /// `feed(_:from:to:)`. O(log seconds + the span's seconds).
    public func feedSeconds(_ roomID: RoomID, from: Int64, to: Int64) -> FeedSecondsLookup {
        guard let (recorder, now) = feedRecorder(roomID, at: to) else { return .noSession }
        guard let stored = recorder.spanSeconds(from: from, to: to, now: now) else { return .gone }
        return .seconds(stored)
    }

    /// The recorder of `roomID`'s session at second `to` (ended windows swept
    /// first), and the time now; nil when there was none.
    private func feedRecorder(_ roomID: RoomID, at to: Int64) -> (FeedRecorder, now: Int64)? {
        let now = clock.nowMillis()
        feeds.sweep(now: now)
        guard let recorder = feeds.recorder(of: roomID, before: to * 1000) else { return nil }
        return (recorder, now)
    }

    /// Drops ended sessions' feeds whose window is over (the server's once-a-second tick).
    public func sweepFeeds() { feeds.sweep(now: clock.nowMillis()) }

    /// Whether this node records (or recorded) a session of `roomID`.
    public func holdsFeed(of roomID: RoomID) -> Bool { feeds.byRoom[roomID] != nil }

    /// Recorders held (a test of the bound).
    public var feedRecorderCount: Int { feeds.count }

    /// The recorder of a session that opens (a first join, a room created ahead, a takeover's restore).
    func openFeed(_ room: Room, at now: Int64) {
        let recorder = FeedRecorder(
            roomID: room.id,
            sessionID: room.sessionID,
            startedAt: room.startedAt,
            state: FeedState(room),
            windowSeconds: settings.feed.windowSeconds,
            roleNames: template.roleNames
        )
        recorder.audit = room.audit
        room.feed = recorder
        feeds.sweep(now: now)
        feeds.open(recorder)
    }

    /// The session of `room` is recorded closed (OperatorEvents' `record(.sessionClosed)`).
    func closeFeed(_ ref: RoomRef, at now: Int64) {
        guard let recorder = feeds.byRoom[ref.roomID]?.last(where: { $0.sessionID == ref.sessionID }) else { return }
        recorder.ended(at: now)
        feeds.closed(recorder)
        feeds.sweep(now: now)
    }

    /// The room's stream, peer count, pin or chat state may have changed.
    func feedState(_ room: Room) {
        room.feed?.state(FeedState(room), at: clock.nowMillis())
    }
}
