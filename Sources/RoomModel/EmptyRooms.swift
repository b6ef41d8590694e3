import RoomWire

/// The end of a session's wait for its next join (1.2, section 23): a room
/// whose last peer left keeps its session `empty_timeout_s`; one created by
/// REST `POST /v2/rooms` waits at least an hour for its first join. One
/// entry per waiting room (`Room.emptyEntry`), cancelled by a join or the
/// session's end.
struct EmptyRoomEnd: ModelDeadline {
    static let rank = 5
    let room: Room

    func expire(in registry: RoomRegistry, at now: Int64) -> Expired {
        guard room.emptyUntil == now else { return Expired() }
        room.emptyEntry = nil
        guard registry.rooms[room.id] === room, room.peerCount == 0 else { return Expired() }
        registry.endSession(room)
        return Expired(log: ("room ended: empty_timeout_s passed", ["room": room.id.rawValue]))
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
            waitEmpty(room, until: clock.nowMillis() + timeout)
        }
    }

    /// `room` waits for a join until `deadline`.
    func waitEmpty(_ room: Room, until deadline: Int64) {
        cancel(room.emptyEntry)
        room.emptyUntil = deadline
        room.emptyEntry = schedule(EmptyRoomEnd(room: room), at: deadline)
    }

    /// `room` has peers again, or ended.
    func endEmptyWait(_ room: Room) {
        room.emptyUntil = nil
        cancel(room.emptyEntry)
        room.emptyEntry = nil
    }

    /// The one place a session ends (its last peer, its wait, `end-room`):
    /// the stream, RTMP and recording stop, the operator hears `session.close`.
    func endSession(_ room: Room) {
        endEmptyWait(room)
        cancel(room.chatBanEntry)  // the room's other deadlines go with it
        room.chatBanEntry = nil
        endStageDeadlines(room)
        rooms.removeValue(forKey: room.id)
        endLiveStream(room, by: nil, reason: "room ended")
        stopBroadcasts(room)
        feedState(room)
        record(.sessionClosed(room: RoomRef(room)))
    }

    /// REST `POST /v2/rooms {room_id, metadata?, polls?}` (section 23): a
    /// session before anyone joins, with session-store entries and draft
    /// polls; it waits `empty_timeout_s`, at least an hour, for its first
    /// join. 40904 when the room has a session. All or nothing.
    public func createRoom(
        _ id: RoomID,
        metadata: [(key: String, value: JSON)],
        polls: [PreparedPoll]
    ) throws(RoomError) -> Room {
        if rooms[id] != nil { throw RoomError(.wrongState, "room_id: room \"\(id)\" already has a session") }
        if locks.contains(id) { throw RoomError(.roomLocked, "room \"\(id)\" is locked") }
        if !settings.room.autoCreate, !settings.room.predefined.contains(id.rawValue) {
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
        openFeed(room, at: now)
        record(.sessionOpened(room: RoomRef(room)), at: now)
        let wait = max(Int64(settings.room.emptyTimeoutS) * 1000, Self.preparedRoomWaitMillis)
        waitEmpty(room, until: now + wait)
        return room
    }
}
