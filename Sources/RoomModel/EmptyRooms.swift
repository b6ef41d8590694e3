import RoomWire

/// Sessions without peers that wait for their next join (1.2, section 23):
/// a room whose last peer left keeps its session `empty_timeout_s`; one
/// created by REST `POST /v2/rooms` waits at least an hour for its first
/// join. Ordered by deadline; the entry of a room that was joined (or
/// ended) since is stale and skipped, as `ReconnectGraces` does.
struct EmptyRooms {
    private var queue: [(room: Room, deadline: Int64)] = []
    private var head = 0

    /// `room` waits for a join until `deadline`.
    mutating func wait(_ room: Room, until deadline: Int64) {
        room.emptyUntil = deadline
        var index = queue.count
        while index > head, queue[index - 1].deadline > deadline { index -= 1 }
        queue.insert((room, deadline), at: index)
    }

    /// `room` has peers again, or ended.
    func end(_ room: Room) { room.emptyUntil = nil }

    /// The next room whose wait is over at `now`.
    mutating func nextExpired(now: Int64) -> Room? {
        while let (room, deadline) = first, deadline <= now {
            removeFirst()
            if room.emptyUntil == deadline { return room }
        }
        return nil
    }

    /// When the next wait ends, stale entries dropped on the way.
    mutating func nextDeadline() -> Int64? {
        while let (room, deadline) = first, room.emptyUntil != deadline { removeFirst() }
        return first?.deadline
    }

    private var first: (room: Room, deadline: Int64)? { head < queue.count ? queue[head] : nil }

    private mutating func removeFirst() {
        head += 1
        if head == queue.count {
            queue.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 1024, head * 2 > queue.count {
            queue.removeFirst(head)
            head = 0
        }
    }
}

/// A draft poll for REST room creation: the info and its questions.
public struct PreparedPoll: Sendable {
    public var info: PollInfoInput
    public var questions: [QuestionInput]

    public init(info: PollInfoInput, questions: [QuestionInput]) {
        self.info = info
        self.questions = questions
    }
}

extension RoomRegistry {
    /// How long a room created by REST waits for its first join at least (ms).
    public static let preparedRoomWaitMillis: Int64 = 3_600_000
    /// At most this many draft polls and session-store entries in one `POST /v2/rooms`.
    public static let maxPreparedPolls = 100

    /// The session's last peer left: it ends now (`empty_timeout_s` 0) or
    /// waits for the next join.
    func sessionEmptied(_ room: Room) {
        let timeout = Int64(settings.room.emptyTimeoutS) * 1000
        if timeout == 0 {
            endSession(room)
        } else {
            emptyRooms.wait(room, until: clock.nowMillis() + timeout)
        }
    }

    /// The one place a session ends (its last peer, its wait, `end-room`):
    /// the stream, RTMP and recording stop, the operator hears `session.close`.
    func endSession(_ room: Room) {
        emptyRooms.end(room)
        rooms.removeValue(forKey: room.id)
        endLiveStream(room, by: nil, reason: "room ended")
        stopBroadcasts(room)
        record(.sessionClosed(room: RoomRef(room)))
    }

    /// When the next empty room's wait ends, for the server's timer.
    public var nextEmptyRoomExpiry: Int64? { emptyRooms.nextDeadline() }

    /// Ends every session whose wait for a join is over; returns them.
    public func endExpiredEmptyRooms() -> [RoomRef] {
        var ended: [RoomRef] = []
        let now = clock.nowMillis()
        while let room = emptyRooms.nextExpired(now: now) {
            guard rooms[room.id] === room, room.peerCount == 0 else { continue }
            endSession(room)
            ended.append(RoomRef(room))
        }
        return ended
    }

    /// REST `POST /v2/rooms {room_id, metadata?, polls?}` (section 23): a
    /// session before anyone joins, with session-store entries and draft
    /// polls; it waits `empty_timeout_s`, at least an hour, for its first
    /// join. 40904 when the room has a session. All or nothing.
    public func createRoom(
        _ id: String,
        metadata: [(key: String, value: JSON)],
        polls: [PreparedPoll]
    ) throws(RoomError) -> Room {
        if rooms[id] != nil { throw RoomError(.wrongState, "room_id: room \"\(id)\" already has a session") }
        if locks.contains(id) { throw RoomError(.roomLocked, "room \"\(id)\" is locked") }
        if !settings.room.autoCreate, !settings.room.predefined.contains(id) {
            throw RoomError(.roomNotFound, "room \"\(id)\" does not exist (auto_create is false)")
        }
        if metadata.count > settings.limits.maxSessionKeys {
            throw RoomError(
                .tooMany,
                "metadata: at most \(settings.limits.maxSessionKeys) keys (max_session_keys), got \(metadata.count)"
            )
        }
        if polls.count > min(Self.maxPreparedPolls, settings.polls.maxPolls) {
            throw RoomError(
                .tooMany,
                "polls: at most \(min(Self.maxPreparedPolls, settings.polls.maxPolls)), got \(polls.count)"
            )
        }
        let now = clock.nowMillis()
        // Checked on a session of its own first: a failing entry or poll leaves no room behind.
        let room = Room(id: id, sessionID: ids.next(.session), startedAt: now)
        for (key, value) in metadata {
            do throws(RoomError) {
                _ = try setMetadata(by: .server, in: room, key: key, value: value)
            } catch {
                throw RoomError(error.code, "metadata.\(key): \(error.message)")
            }
        }
        for (i, prepared) in polls.enumerated() {
            do throws(RoomError) {
                _ = try preparePoll(prepared.info, questions: prepared.questions, in: room)
            } catch {
                throw RoomError(error.code, "polls[\(i)].\(error.message)")
            }
        }
        rooms[id] = room
        record(.sessionOpened(room: RoomRef(room)), at: now)
        let wait = max(Int64(settings.room.emptyTimeoutS) * 1000, Self.preparedRoomWaitMillis)
        emptyRooms.wait(room, until: now + wait)
        return room
    }
}
