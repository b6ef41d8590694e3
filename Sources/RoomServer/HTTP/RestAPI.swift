import Logging
import RoomModel
import RoomWire

/// The 100ms-style "active rooms" REST API (PROTOCOL.md section 9), for
/// management tokens. Changes go through the same model calls and fan-out
/// as the peers' own, with the "server" PeerRef.
final class RestAPI {
    static let prefix = "/v2/active-rooms/"

    let registry: RoomRegistry
    let fanOut: FanOut
    let verifier: TokenVerifier
    let metrics: ServerMetrics
    let clock: RoomClock
    let homes: RoomHomes
    let logger: Logger
    /// Frees a cleared chat off the service thread (`POST …/chat/clear`): the dispatcher's.
    var graveyard = Graveyard()
    private var limiter: TokenBucket

    init(
        registry: RoomRegistry,
        fanOut: FanOut,
        verifier: TokenVerifier,
        metrics: ServerMetrics,
        clock: RoomClock,
        homes: RoomHomes,
        logger: Logger
    ) {
        self.registry = registry
        self.fanOut = fanOut
        self.verifier = verifier
        self.metrics = metrics
        self.clock = clock
        self.homes = homes
        self.logger = logger
        let limits = registry.settings.limits
        limiter = TokenBucket(rate: limits.messagesPerSecond, burst: limits.messageBurst, nowMillis: clock.nowMillis())
    }

    /// A request to the REST API, from a client of this node or forwarded
    /// by another node (the cluster): the room's state may change.
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        defer { homes.touch(Self.roomID(in: request.path)) }  // a cluster saves it for a takeover
        // Section 32: a moderation act is recorded once it succeeded (Audit/).
        let audit = AuditRecorder.prepare(request, registry: registry)
        let response = route(request)
        if let audit, (200..<300).contains(response.status) { AuditRecorder.record(audit, registry: registry) }
        return response
    }

    private func route(_ request: HTTPRequest) -> HTTPResponse {
        do throws(RoomError) {
            try authorize(request)
            guard limiter.take(nowMillis: clock.nowMillis()) else {
                throw RoomError(.rateLimited, "rate limited")
            }
            if request.path == Self.listPath || request.path == Self.prefix {
                guard request.method == .get else {
                    return .error(404, code: 404, "no route for \(request.method.rawValue) \(request.path)")
                }
                return try listRooms(request)  // RestOperator.swift
            }
            if let room = Self.sessionAuditRoom(in: request.path) {  // RestAudit.swift
                guard request.method == .get else {
                    return .error(404, code: 404, "no route for \(request.method.rawValue) \(request.path)")
                }
                return try sessionAudit(room, request)
            }
            if request.path == Self.createPath {
                guard request.method == .post else {
                    return .error(404, code: 404, "no route for \(request.method.rawValue) \(request.path)")
                }
                return try createRoom(try body(request))  // RestLifecycle.swift
            }
            let parts = request.path.dropFirst(Self.prefix.count).split(
                separator: "/",
                omittingEmptySubsequences: false
            )
            .map(String.init)
            let room = RoomID(parts[0])
            switch (request.method, parts.count > 1 ? parts[1] : nil, parts.count) {
            case (.get, nil, 1): return try getRoom(room)
            case (.get, "peers", 2): return try getPeers(room)
            case (.get, "peers", 3): return try getPeer(room, PeerID(parts[2]))
            case (.get, "hls", 2): return try getLiveStream(room)
            case (.get, "hls", 3) where parts[2] == "daterange": return try dateRanges(room)
            case (.post, "hls", 3) where parts[2] == "start": return try startLiveStream(room, try body(request))
            case (.post, "hls", 3) where parts[2] == "stop": return try stopLiveStream(room)
            case (.post, "hls", 3) where parts[2] == "timed-metadata":
                return try addTimedMetadata(room, try body(request))
            case (.get, "stream", 2): return try getStream(room)  // RestLifecycle.swift
            case (.post, "stream", 2): return try setStream(room, try body(request))
            case (.get, "rtmp", 2): return try getRTMP(room)
            case (.post, "rtmp", 3) where parts[2] == "start": return try startRTMP(room, try body(request))
            case (.post, "rtmp", 3) where parts[2] == "stop": return try stopRTMP(room)
            case (.get, "recording", 2): return try getRecording(room)
            case (.post, "recording", 3) where parts[2] == "start": return try startRecording(room)
            case (.post, "recording", 3) where parts[2] == "stop": return try stopRecording(room)
            case (.post, "peers", 3): return try updatePeer(room, PeerID(parts[2]), try body(request))
            case (.post, "remove-peers", 2): return try removePeers(room, try body(request))
            case (.post, "send-message", 2): return try sendMessage(room, try body(request))
            case (.post, "end-room", 2): return try endRoom(room, try body(request))
            case (.get, "metadata", 2): return try getMetadata(room)
            case (.get, "reactions", 2): return try getReactions(room, request)
            case (.post, "metadata", 2): return try setMetadata(room, try body(request))
            case (.post, "ban", 2): return try ban(room, try body(request))  // RestBans.swift
            case (.post, "unban", 2): return try unban(room, try body(request))
            case (.get, "bans", 2): return try listBans(room)
            case (.get, "audit", 2): return try activeAudit(room, request)  // RestAudit.swift
            case (_, "stage", 2...):  // RestStage.swift
                if let response = try stage(room, parts.dropFirst(2), request) { return response }
                return .error(404, code: 404, "no route for \(request.method.rawValue) \(request.path)")
            case (_, "chat", 2...), (_, "chat-bans", 2...), (_, "held", 2...):  // RestChat.swift
                if let response = try chat(room, parts[1], parts.dropFirst(2), request) { return response }
                return .error(404, code: 404, "no route for \(request.method.rawValue) \(request.path)")
            case (_, "questions", 2...):  // RestQuestions.swift
                if let response = try questions(room, parts.dropFirst(2), request) { return response }
                return .error(404, code: 404, "no route for \(request.method.rawValue) \(request.path)")
            case (_, "polls", 2...):  // RestPolls.swift
                if let response = try polls(room, parts.dropFirst(2), request) { return response }
                return .error(404, code: 404, "no route for \(request.method.rawValue) \(request.path)")
            case (_, "reports", 2...):  // RestReports.swift
                if let response = try reports(room, parts.dropFirst(2), request) { return response }
                return .error(404, code: 404, "no route for \(request.method.rawValue) \(request.path)")
            case (.post, "peers", 4) where parts[3] == "mute":  // RestMute.swift
                return try mutePeer(room, PeerID(parts[2]), try body(request))
            case (.post, "unlock", 2):
                registry.unlock(room)
                logger.info("room unlocked", metadata: ["room": "\(room)", "by": "rest"])
                return .json(200, [:])
            default:
                return .error(404, code: 404, "no route for \(request.method.rawValue) \(request.path)")
            }
        } catch {
            metrics.failed(error.code)
            // 40407: 404 for an unknown stage request, 409 for one in another state (`status`).
            let status = error.code == .stageRequestNotFound && error.status != nil ? 409 : Self.status(for: error.code)
            return .error(status, code: error.code.rawValue, error.message)
        }
    }

    /// A cursor in the query (`?start=`, `?before=`) naming a message no
    /// longer in the history is the request's fault: 400 with 40405, where an
    /// unknown id in the path is 404 (PROTOCOL.md section 32).
    func cursorGone(_ error: RoomError) -> HTTPResponse {
        metrics.failed(error.code)
        return .error(400, code: error.code.rawValue, error.message)
    }

    static func status(for code: ErrorCode) -> Int {
        switch code {
        case .tokenInvalid, .notAJWT, .badJWT: 401
        case .permissionDenied, .banned, .chatClosed, .roomLocked, .stageBlocked: 403
        case .roomNotFound, .peerNotFound, .stageRequestNotFound: 404
        case .trackNotFound, .pollNotFound, .messageNotFound, .questionNotFound, .reportNotFound: 404
        case .roleLimitReached, .wrongState, .tooMany: 409
        case .tooLarge: 413
        case .rateLimited, .slowMode: 429
        default: 400
        }
    }

    // MARK: auth and input

    func authorize(_ request: HTTPRequest) throws(RoomError) {
        guard let header = request.authorization, header.hasPrefix("Bearer ") else {
            throw RoomError(.tokenInvalid, "Authorization: Bearer <management token> required")
        }
        do throws(RoomError) {
            try verifier.verifyManagement(String(header.dropFirst("Bearer ".count)))
        } catch  where error.code == .permissionDenied {
            throw error
        } catch {
            throw RoomError(.tokenInvalid, "management token rejected: \(error.message)")
        }
    }

    func body(_ request: HTTPRequest) throws(RoomError) -> Params {
        if request.body.isEmpty { return Params(.object([])) }
        let json: JSON
        do { json = try JSON.parse(request.body) } catch { throw .invalidParams("body: invalid JSON (\(error))") }
        guard case .object = json else { throw .invalidParams("body: expected an object, got \(json.typeName)") }
        return Params(json)
    }

    func room(_ id: RoomID) throws(RoomError) -> Room {
        guard let room = registry.room(id) else { throw RoomError(.roomNotFound, "room \"\(id)\" is not active") }
        return room
    }

    // MARK: endpoints

    private func getRoom(_ id: RoomID) throws(RoomError) -> HTTPResponse {
        let room = try room(id)
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.key("room")
                w.room(room, locked: registry.lockedRoomIDs.contains(room.id))
                w.key("peers")
                w.array { w in for peer in room.peersInJoinOrder { w.peer(peer, withTracks: true) } }
            }
        )
    }

    private func getPeers(_ id: RoomID) throws(RoomError) -> HTTPResponse {
        let room = try room(id)
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.key("peers")
                w.array { w in for peer in room.peersInJoinOrder { w.peer(peer, withTracks: true) } }
            }
        )
    }

    private func updatePeer(_ roomID: RoomID, _ peerID: PeerID, _ params: Params) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        guard let peer = room.peer(peerID) else {
            throw RoomError(.peerNotFound, "peer \"\(peerID)\" is not in the room")
        }
        let role = try params.string("role")
        var name = try params.string("name")
        if let given = name { name = try RoomRegistry.trimmedName(given) }  // section 27: trimmed, not filtered
        let data = try params.string("data")
        try registry.checkMetadata(name: name, data: data)  // all or nothing: validate before the role changes
        // `attributes` ({key: string or null}): the same merge as `peer-attributes-set` (section 27).
        let attributes = try params.attributeSet("attributes")
        if !attributes.isEmpty { _ = try registry.mergedAttributes(of: peer, set: attributes, delete: []) }
        if let role {
            let (_, effects) = try registry.requestRoleChange(
                by: .server,
                in: room,
                targetID: peerID,
                role: role,
                force: true
            )
            fanOut.apply(effects)
        }
        fanOut.fanOut(try registry.updatePeer(peer, name: name, data: data, by: .server))
        if !attributes.isEmpty {
            fanOut.fanOut(try registry.setAttributes(of: peer, set: attributes, delete: [], by: .server))
        }
        logger.info("peer updated", metadata: ["room": "\(roomID)", "peer": "\(peerID)", "by": "rest"])
        var w = JSONWriter()
        w.peer(peer, withTracks: true)
        return .json(200, encoded: w.bytes)  // the changed Peer itself
    }

    private func removePeers(_ roomID: RoomID, _ params: Params) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        let reason = try params.requiredString("reason")
        let targets: [PeerID]
        switch (try params.peerID("peer_id"), try params.string("role")) {
        case (let id?, nil): targets = [id]
        case (nil, let role?):
            guard registry.template.role(role) != nil else {
                throw RoomError(.roleNotFound, "role: no role named \"\(role)\"")
            }
            targets = room.peersInJoinOrder.filter { $0.role.name == role }.map(\.id)
        case (.some, .some): throw .invalidParams("peer_id and role: give one, not both")
        case (nil, nil): throw .invalidParams("peer_id or role: required")
        }
        for id in targets {
            fanOut.apply(
                try registry.removePeer(
                    by: .server,
                    in: room,
                    targetID: id,
                    reason: reason,
                    leaveReason: .serverRemoved
                )
            )
            logger.info("peer removed", metadata: ["room": "\(roomID)", "peer": "\(id)", "by": "rest"])
        }
        return .json(200, [:])
    }

    private func sendMessage(_ roomID: RoomID, _ params: Params) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        let message = try params.requiredString("message")
        let type = try params.string("type") ?? "chat"
        let target: RoomRegistry.MessageTarget
        switch (try params.string("peer_id"), try params.string("role")) {
        case (let id?, nil): target = .peer(id)
        case (nil, let role?): target = .roles([role])
        case (nil, nil): target = .everyone
        case (.some, .some): throw .invalidParams("peer_id and role: give one, not both")
        }
        let (chat, deliveries) = try registry.send(from: .server, in: room, message: message, type: type, to: target)
        fanOut.fanOut(deliveries)
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.field("message_id", chat.id)
                w.field("timestamp", chat.timestamp)
            }
        )
    }

    private func endRoom(_ roomID: RoomID, _ params: Params) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        let reason = try params.requiredString("reason")
        let lock = try params.bool("lock") ?? false
        fanOut.apply(try registry.endRoom(by: .server, room, reason: reason, lock: lock))
        logger.info("room ended", metadata: ["room": "\(roomID)", "lock": "\(lock)", "by": "rest"])
        return .json(200, [:])
    }
}
