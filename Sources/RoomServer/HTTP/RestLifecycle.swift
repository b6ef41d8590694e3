import Logging
import RoomModel
import RoomProtocol
import RoomTokens
import RoomWire

/// The 1.2 REST of a show's life (PROTOCOL.md section 23): creating a room
/// session before anyone joins (`POST /v2/rooms`), the stream's lifecycle
/// (`…/stream`), RTMP out and recording (`…/rtmp/*`, `…/recording/*`).
/// Same rules as the calls, with the server PeerRef.
extension RestAPI {
    static let createPath = "/v2/rooms"
    /// The latest `starts_at` a schedule accepts (ms): the year 9999.
    static let maxStartsAt: Int64 = 253_402_300_799_999

    /// The `room_id` of a room-creation body (for the cluster's routing); nil when unreadable.
    static func createdRoomID(_ body: [UInt8]) -> RoomID? {
        guard let json = try? JSON.parse(body), let id = json["room_id"]?.stringValue, !id.isEmpty else { return nil }
        return RoomID(id)
    }

    /// `POST /v2/rooms {room_id, metadata?: {key: value…}, polls?: [poll-info-set params + questions]}`
    /// → `{room: Room}`; 409 (40904) when the room has a session.
    func createRoom(_ params: Params) throws(RoomError) -> HTTPResponse {
        let roomID = try params.requiredString("room_id")
        guard TokenMinter.isValidRoomID(roomID) else {
            throw .invalidParams("room_id: expected [A-Za-z0-9_-]{1,64}, got \"\(roomID.prefix(80))\"")
        }
        var metadata: [(key: String, value: JSON)] = []
        if let value = params.value("metadata") {
            guard case .object(let members) = value else {
                throw .invalidParams("metadata: expected an object, got \(value.typeName)")
            }
            metadata = members.map { ($0.key, $0.value) }
        }
        var polls: [PreparedPoll] = []
        if let entries = try params.objects("polls") {
            if entries.count > RoomRegistry.maxPreparedPolls {
                throw RoomError(.tooMany, "polls: at most \(RoomRegistry.maxPreparedPolls), got \(entries.count)")
            }
            for entry in entries {
                polls.append(
                    PreparedPoll(
                        info: try Dispatcher.pollInfoInput(entry),
                        questions: try Dispatcher.questionInputs(entry, required: false)
                    )
                )
            }
        }
        try homes.admitJoin(RoomID(roomID))  // a cluster creates a room on its home only (it claimed it)
        let room = try registry.createRoom(RoomID(roomID), metadata: metadata, polls: polls)
        homes.touch(room.id)
        logger.info(
            "room created",
            metadata: [
                "room": "\(room.id)", "session": "\(room.sessionID)", "by": "rest", "keys": "\(metadata.count)",
                "polls": "\(polls.count)",
            ]
        )
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.key("room")
                w.room(room, locked: false)
            }
        )
    }

    /// `GET …/stream` → the stream object (null before the first schedule or start).
    func getStream(_ roomID: RoomID) throws(RoomError) -> HTTPResponse {
        try getLiveStream(roomID)
    }

    /// `POST …/stream {state, starts_at?, vod_url?}` → the stream object: every
    /// peer gets `on-hls-update`, the operator `stream.<state>`.
    func setStream(_ roomID: RoomID, _ params: Params) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        guard let state = try params.choice("state", StreamState.self, required: true) else {
            throw .invalidParams("state: required")
        }
        let deliveries: [Delivery]
        switch state {
        case .scheduled:
            guard let startsAt = try params.int64("starts_at", in: 0...Self.maxStartsAt) else {
                throw .invalidParams("starts_at: required for state \"scheduled\" (ms since 1970)")
            }
            deliveries = try registry.scheduleLiveStream(by: .server, in: room, startsAt: startsAt)
        case .live: deliveries = try registry.startLiveStream(by: .server, in: room, variants: nil)
        case .ended: deliveries = try registry.stopLiveStream(by: .server, in: room)
        case .vod:
            guard let url = try params.string("vod_url") else {
                throw .invalidParams("vod_url: required for state \"vod\"")
            }
            deliveries = try registry.publishVOD(by: .server, in: room, url: url)
        }
        fanOut.fanOut(deliveries)
        logger.info("stream changed", metadata: ["room": "\(roomID)", "state": "\(state.rawValue)", "by": "rest"])
        return .json(200, encoded: Envelope.encodeLiveStream(registry.liveStream(of: room)))
    }

    /// `GET …/rtmp` → the RTMP state peers see (null before the first start).
    func getRTMP(_ roomID: RoomID) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        var w = JSONWriter()
        w.rtmp(room.rtmp)
        return .json(200, encoded: w.bytes)
    }

    /// `GET …/recording` → the recording state (null before the first start).
    func getRecording(_ roomID: RoomID) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        var w = JSONWriter()
        w.recording(room.recording)
        return .json(200, encoded: w.bytes)
    }

    /// `POST …/rtmp/start {meeting_url?, rtmp_urls, record?}` → `{}`.
    func startRTMP(_ roomID: RoomID, _ params: Params) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        let request = try Dispatcher.rtmpRequest(params)
        fanOut.fanOut(
            try registry.startRTMP(
                by: .server,
                in: room,
                meetingURL: request.meetingURL,
                urls: request.urls,
                record: request.record
            )
        )
        logger.info("rtmp started", metadata: ["room": "\(roomID)", "by": "rest", "urls": "\(request.urls.count)"])
        return .json(200, [:])
    }

    /// `POST …/rtmp/stop` → `{}`.
    func stopRTMP(_ roomID: RoomID) throws(RoomError) -> HTTPResponse {
        fanOut.fanOut(try registry.stopRTMP(by: .server, in: try room(roomID)))
        logger.info("rtmp stopped", metadata: ["room": "\(roomID)", "by": "rest"])
        return .json(200, [:])
    }

    /// `POST …/recording/start` → `{}`.
    func startRecording(_ roomID: RoomID) throws(RoomError) -> HTTPResponse {
        fanOut.fanOut(try registry.startRecording(by: .server, in: try room(roomID)))
        logger.info("recording started", metadata: ["room": "\(roomID)", "by": "rest"])
        return .json(200, [:])
    }

    /// `POST …/recording/stop` → `{}`.
    func stopRecording(_ roomID: RoomID) throws(RoomError) -> HTTPResponse {
        fanOut.fanOut(try registry.stopRecording(by: .server, in: try room(roomID)))
        logger.info("recording stopped", metadata: ["room": "\(roomID)", "by": "rest"])
        return .json(200, [:])
    }
}
