import Logging
import RoomModel
import RoomWire

/// The 1.1 REST additions (PROTOCOL.md sections 9 and 16): the room list,
/// one peer, and the live stream (state, start/stop, cues, the packager's
/// EXT-X-DATERANGE lines). Same rules as the calls, with the server PeerRef.
extension RestAPI {
    static let listPath = "/v2/active-rooms"
    static let maxListLimit = 100
    static let defaultListLimit = 20

    /// The room a REST path names (nil for the room list).
    static func roomID(in path: String) -> RoomID? {
        if let room = sessionAuditRoom(in: path) { return room }  // `/v2/rooms/{room_id}/audit`
        guard path.hasPrefix(prefix) else { return nil }
        let room = path.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false).first.map(
            String.init
        )
        return room?.isEmpty == false ? room.map(RoomID.init) : nil
    }

    /// Whether `path` belongs to the REST API.
    static func handles(_ path: String) -> Bool {
        path == listPath || path == createPath || path.hasPrefix(prefix) || sessionAuditRoom(in: path) != nil
    }

    /// `GET /v2/active-rooms?limit=N&start=ROOM_ID` → `{rooms, last}`: live
    /// rooms sorted by id after `start`; `last` is the next `start`, or null.
    func listRooms(_ request: HTTPRequest) throws(RoomError) -> HTTPResponse {
        var limit = Self.defaultListLimit
        if let text = request.query["limit"] {
            guard let n = Int(text), (1...Self.maxListLimit).contains(n) else {
                throw .invalidParams("limit: must be an integer between 1 and \(Self.maxListLimit), got \"\(text)\"")
            }
            limit = n
        }
        let start = request.query["start"].map(RoomID.init)
        var ids = registry.rooms.keys.filter { start == nil || $0 > start! }
        ids.sort()
        let page = ids.prefix(limit)
        let more = ids.count > limit
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.key("rooms")
                w.array { w in
                    for id in page {
                        w.room(registry.rooms[id]!, locked: registry.lockedRoomIDs.contains(id), withHLS: false)
                    }
                }
                w.key("last")
                if more, let last = page.last { w.string(last) } else { w.null() }
            }
        )
    }

    /// `GET /v2/active-rooms/{room_id}/peers/{peer_id}` → Peer.
    func getPeer(_ roomID: RoomID, _ peerID: PeerID) throws(RoomError) -> HTTPResponse {
        guard let room = registry.room(roomID) else {
            throw RoomError(.roomNotFound, "room \"\(roomID)\" is not active")
        }
        guard let peer = room.peer(peerID) else {
            throw RoomError(.peerNotFound, "peer \"\(peerID)\" is not in the room")
        }
        var w = JSONWriter()
        w.peer(peer, withTracks: true)
        return .json(200, encoded: w.bytes)
    }

    /// `GET …/hls` → HLSState (null before the first start).
    func getLiveStream(_ roomID: RoomID) throws(RoomError) -> HTTPResponse {
        let room = try activeRoom(roomID)
        return .json(200, encoded: Envelope.encodeLiveStream(registry.liveStream(of: room)))
    }

    /// `GET …/hls/daterange` → one EXT-X-DATERANGE tag per live cue, oldest first.
    func dateRanges(_ roomID: RoomID) throws(RoomError) -> HTTPResponse {
        let room = try activeRoom(roomID)
        let cues = registry.liveStream(of: room)?.cues ?? []
        let text = cues.map { DateRange.tag($0) + "\n" }.joined()
        return HTTPResponse(status: 200, body: Array(text.utf8), contentType: "text/plain; charset=utf-8")
    }

    /// `POST …/hls/start` `{variants?}` → `{}`.
    func startLiveStream(_ roomID: RoomID, _ params: Params) throws(RoomError) -> HTTPResponse {
        let room = try activeRoom(roomID)
        let variants = try Dispatcher.variantRequests(params)
        fanOut.fanOut(try registry.startLiveStream(by: .server, in: room, variants: variants))
        logger.info("hls started", metadata: ["room": "\(roomID)", "by": "rest"])
        return .json(200, [:])
    }

    /// `POST …/hls/stop` → `{}`.
    func stopLiveStream(_ roomID: RoomID) throws(RoomError) -> HTTPResponse {
        let room = try activeRoom(roomID)
        fanOut.fanOut(try registry.stopLiveStream(by: .server, in: room))
        logger.info("hls stopped", metadata: ["room": "\(roomID)", "by": "rest"])
        return .json(200, [:])
    }

    /// `POST …/hls/timed-metadata` `{metadata_objs}` → `{cues}`.
    func addTimedMetadata(_ roomID: RoomID, _ params: Params) throws(RoomError) -> HTTPResponse {
        let room = try activeRoom(roomID)
        let (cues, deliveries) = try registry.addTimedMetadata(
            by: .server,
            in: room,
            try Dispatcher.cueRequests(params)
        )
        fanOut.fanOut(deliveries)
        return .json(200, encoded: Dispatcher.encode { w in w.cues(cues) })
    }

    private func activeRoom(_ id: RoomID) throws(RoomError) -> Room {
        guard let room = registry.room(id) else { throw RoomError(.roomNotFound, "room \"\(id)\" is not active") }
        return room
    }
}
