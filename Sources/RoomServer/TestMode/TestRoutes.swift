import Logging
import RoomModel
import RoomProtocol
import RoomWire

/// `/v2/test/*` (PROTOCOL.md section 25): routes that exist only in test
/// mode, each behind a management token. Its service thread's only
/// (checked in debug builds).
final class TestRoutes {
    static let prefix = "/v2/test/"

    private let thread: ServiceThread
    private let journal: TestJournal
    private let audience: SyntheticAudience
    private let rest: RestAPI
    private let schedule: Schedule
    private let sockets: Sockets
    private let registry: RoomRegistry
    private let webhooks: WebhookRelay
    /// Section 30's hook client, when `settings.hooks` is set (its `hooks` fault).
    var hooks: HookClient?
    private let clock: RoomClock
    private let logger: Logger

    init(
        thread: ServiceThread,
        journal: TestJournal,
        audience: SyntheticAudience,
        rest: RestAPI,
        schedule: Schedule,
        sockets: Sockets,
        registry: RoomRegistry,
        webhooks: WebhookRelay,
        clock: RoomClock,
        logger: Logger
    ) {
        self.thread = thread
        self.clock = clock
        self.journal = journal
        self.audience = audience
        self.rest = rest
        self.schedule = schedule
        self.sockets = sockets
        self.registry = registry
        self.webhooks = webhooks
        self.logger = logger
    }

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        thread.assertIsCurrent()
        do throws(RoomError) {
            try rest.authorize(request)
            switch (request.method, request.path) {
            case (.post, Self.prefix + "clock"): return try moveClock(try rest.body(request))
            case (.get, Self.prefix + "clock"):
                guard let clock = schedule.manual else { throw Self.noManualClock }
                return .json(200, ["now": .int(clock.now)])
            case (.post, Self.prefix + "faults"): return try addFault(try rest.body(request))
            case (.get, Self.prefix + "faults"):
                let faults = schedule.faults
                var listed =
                    (faults?.methods.listed ?? []) + (faults?.pushes.listed ?? []) + (faults?.connectionFaults ?? [])
                if let fault = hooks?.injectedFault {
                    let status: JSON = fault.status.map { JSON.int($0) } ?? "timeout"
                    listed.append(["hooks": ["status": status, "left": .int(fault.left)]])
                }
                return .json(200, ["faults": .array(listed)])
            case (.get, Self.prefix + "journal"):
                guard let roomID = request.query["room_id"], !roomID.isEmpty else {
                    throw .invalidParams("room_id: required (?room_id=ROOM)")
                }
                guard let lines = journal.lines(of: RoomID(roomID)) else {
                    throw RoomError(.roomNotFound, "room_id: no journal of \"\(roomID.prefix(64))\"")
                }
                return HTTPResponse(status: 200, body: lines, contentType: "application/x-ndjson")
            case (.post, Self.prefix + "audience"): return try addAudience(try rest.body(request))
            case (.post, Self.prefix + "audience/act"): return try act(try rest.body(request))
            case (.delete, Self.prefix + "audience"):
                guard let roomID = request.query["room_id"], !roomID.isEmpty else {
                    throw .invalidParams("room_id: required (?room_id=ROOM)")
                }
                return .json(200, ["removed": .int(audience.remove(room: RoomID(roomID)))])
            case (.delete, Self.prefix + "faults"):
                let cleared = schedule.faults?.clear() ?? 0
                webhooks.injectFailures(next: 0, status: nil)
                hooks?.injectFailures(next: 0, status: nil)
                logger.info("test faults cleared", metadata: ["connections": "\(cleared)"])
                return .json(200, [:])
            default:
                return .error(404, code: 404, "no route for \(request.method.rawValue) \(request.path)")
            }
        } catch {
            return .error(RestAPI.status(for: error.code), code: error.code.rawValue, error.message)
        }
    }

    static let closeCodes: Set<Int> = [1000, 1001, 1006, 1011]

    /// `{peer_id | user_id, action, code? | ms? | count?}` or `{webhooks:
    /// {fail_next, status}}` → `{peers: [peer_id…]}` / `{webhooks: {fail_next}}`.
    private func addFault(_ body: Params) throws(RoomError) -> HTTPResponse {
        if let method = try body.string("method") { return try addMethodFault(method, body) }
        if let push = try body.string("push") { return try addPushFault(push, body) }
        if let hooks = try body.object("webhooks") {
            let count = try hooks.int("fail_next", in: 0...1000) ?? 1
            var status: Int?
            switch hooks.value("status") {
            case nil: status = 500
            case .string("timeout")?: status = nil
            default: status = try hooks.int("status", in: 400...599)
            }
            guard webhooks.injectFailures(next: count, status: status) else {
                throw RoomError(.wrongState, "webhooks: none configured (settings.webhooks)")
            }
            logger.info(
                "test fault: webhooks fail",
                metadata: ["next": "\(count)", "as": "\(status.map(String.init) ?? "timeout")"]
            )
            return .json(200, ["webhooks": ["fail_next": .int(count)]])
        }
        if let fault = try body.object("hooks") { return try addHookFault(fault) }
        let peerID = try body.peerID("peer_id")
        let userID = try body.userID("user_id")
        guard (peerID == nil) != (userID == nil) else {
            throw .invalidParams("peer_id or user_id: give one (or webhooks)")
        }
        let action = try body.requiredString("action")
        let targets = sockets.connections.values.filter { connection in
            guard let peer = connection.peer, !connection.isClosing else { return false }
            return peerID.map { peer.id == $0 } ?? (peer.userID == userID)
        }
        guard !targets.isEmpty else {
            let waiting = registry.rooms.values.contains { room in
                room.peers.values.contains { peer in peerID.map { peer.id == $0 } ?? (peer.userID == userID) }
            }
            if waiting {
                throw RoomError(
                    .wrongState,
                    "\(peerID.map { "peer \($0)" } ?? "user \(userID!)"): no connection now (in its reconnect grace)"
                )
            }
            throw RoomError(
                .peerNotFound,
                "\(peerID.map { "peer_id: no peer \($0)" } ?? "user_id: no peer of \(userID!)")"
            )
        }
        let now = clock.nowMillis()
        switch action {
        case "close":
            let code = try body.int("code", in: 1000...4999) ?? 1006
            guard Self.closeCodes.contains(code) || (3000...4999).contains(code) else {
                throw .invalidParams("code: 1000, 1001, 1006 (no close frame), 1011 or 3000...4999, got \(code)")
            }
            for connection in targets {
                if code == 1006 { connection.cutOff() } else { connection.close(UInt16(code)) }
            }
        case "stall", "delay":
            let ms = try body.int("ms", in: 1...86_400_000) ?? 1000
            for connection in targets {
                if action == "stall" {
                    connection.stall(until: now + Int64(ms))
                } else {
                    connection.delayPushes(until: now + Int64(ms))
                }
                schedule.faults?.track(connection)
            }
        case "drop":
            let count = try body.int("count", in: 1...1_000_000) ?? 1
            for connection in targets {
                connection.dropPushes(count)
                schedule.faults?.track(connection)
            }
        default:
            throw .invalidParams("action: close, stall, delay or drop, got \"\(action.prefix(40))\"")
        }
        let ids = targets.compactMap { $0.peer?.id }.sorted()
        for id in ids {
            logger.info(
                "test fault",
                metadata: ["peer": "\(id)", "action": "\(action)", "params": "\(body.members)"]
            )
        }
        return .json(200, ["peers": .array(ids.map { .string($0.rawValue) })])
    }

    /// `{hooks: {fail_next, status: 500|"timeout"}}` → `{hooks: {fail_next}}` (section 30): the
    /// next `fail_next` hook calls fail so, without reaching the hook (`on_error` applies).
    private func addHookFault(_ fault: Params) throws(RoomError) -> HTTPResponse {
        let count = try fault.int("fail_next", in: 0...1000) ?? 1
        var status: Int?
        switch fault.value("status") {
        case nil: status = 500
        case .string("timeout")?: status = nil
        default: status = try fault.int("status", in: 400...599)
        }
        guard let hooks else { throw RoomError(.wrongState, "hooks: none configured (settings.hooks)") }
        hooks.injectFailures(next: count, status: status)
        logger.info(
            "test fault: hooks fail",
            metadata: ["next": "\(count)", "as": "\(status.map(String.init) ?? "timeout")"]
        )
        return .json(200, ["hooks": ["fail_next": .int(count)]])
    }

    /// `{method, peer_id?, error:{code, message?}, count?}` → `{method, left}`
    /// (section 33): the next `count` calls answered with `error`.
    private func addMethodFault(_ method: String, _ body: Params) throws(RoomError) -> HTTPResponse {
        guard Dispatcher.methodNames.contains(method) else {
            throw .invalidParams("method: not a method roomd serves, got \"\(method.prefix(64))\"")
        }
        guard let error = try body.object("error") else { throw .invalidParams("error: required, {code, message?}") }
        let number = try error.int("code", in: Int(Int32.min)...Int(Int32.max))
        guard let number, let code = ErrorCode(rawValue: number) else {
            throw .invalidParams(
                "error.code: one of the codes of PROTOCOL.md section 8, got \(number.map(String.init) ?? "none")"
            )
        }
        let message = try error.string("message")
        if let message, message.utf8.count > 1024 { throw .invalidParams("error.message: at most 1024 bytes") }
        let count = try body.int("count", in: 1...1_000_000) ?? 1
        guard let faults = schedule.faults else { throw RoomError(.internalError, "test mode without its faults") }
        let peerID = try body.peerID("peer_id")
        try faults.methods.add(.init(method: method, peerID: peerID, code: code, message: message, left: count))
        logger.info(
            "test fault: method error",
            metadata: [
                "method": "\(method)", "code": "\(number)", "count": "\(count)",
                "peer": "\(peerID.map(\.rawValue) ?? "any")",
            ]
        )
        return .json(200, ["method": .string(method), "left": .int(count)])
    }

    /// `{push, peer_id?, action:"drop"|"delay", ms?, count?}` → `{push,
    /// left}` (section 33): the next `count` such pushes dropped or delayed.
    private func addPushFault(_ push: String, _ body: Params) throws(RoomError) -> HTTPResponse {
        guard PushNames.all.contains(push) else {
            throw .invalidParams("push: not a push roomd sends, got \"\(push.prefix(64))\"")
        }
        let action = try body.requiredString("action")
        guard let kind = PushFaults.Action(rawValue: action) else {
            throw .invalidParams("action: drop or delay for a push fault, got \"\(action.prefix(40))\"")
        }
        let ms = try body.int("ms", in: 1...86_400_000) ?? 1000
        let count = try body.int("count", in: 1...1_000_000) ?? 1
        guard let faults = schedule.faults else { throw RoomError(.internalError, "test mode without its faults") }
        let peerID = try body.peerID("peer_id")
        try faults.pushes.add(.init(push: push, peerID: peerID, action: kind, ms: ms, left: count))
        logger.info(
            "test fault: push \(action)",
            metadata: [
                "push": "\(push)", "count": "\(count)", "peer": "\(peerID.map(\.rawValue) ?? "any")",
            ]
        )
        return .json(200, ["push": .string(push), "left": .int(count)])
    }

    /// `{room_id, count, role, seed?, name_prefix?}` → `{peer_ids, count}` (section 33).
    private func addAudience(_ body: Params) throws(RoomError) -> HTTPResponse {
        let roomID = try body.requiredString("room_id")
        guard isValidID(roomID) else {
            throw .invalidParams("room_id: [A-Za-z0-9_-]{1,64}, got \"\(roomID.prefix(80))\"")
        }
        guard let count = try body.int("count", in: 1...SyntheticAudience.maxCount) else {
            throw .invalidParams("count: required, 1...\(SyntheticAudience.maxCount)")
        }
        let role = try body.requiredString("role")
        guard registry.template.roles[role] != nil else {
            throw .invalidParams("role: not a role of the template, got \"\(role.prefix(64))\"")
        }
        let seed = try body.int("seed", in: 0...Int.max).map(UInt64.init)
        let prefix = try body.string("name_prefix") ?? "viewer-"
        guard prefix.utf8.count <= 64 else { throw .invalidParams("name_prefix: at most 64 bytes") }
        let (ids, joined) = try audience.add(
            room: RoomID(roomID),
            count: count,
            role: role,
            seed: seed,
            namePrefix: prefix
        )
        return .json(200, ["peer_ids": .array(ids.map { .string($0.rawValue) }), "count": .int(joined)])
    }

    /// `{room_id, action, count, params?}` → `{done, errors:{code:count},
    /// messages:{code:first message}}` (section 33).
    private func act(_ body: Params) throws(RoomError) -> HTTPResponse {
        let roomID = try body.requiredString("room_id")
        let action = try body.requiredString("action")
        guard SyntheticAudience.actions.contains(action) else {
            throw .invalidParams(
                "action: one of \(SyntheticAudience.actions.sorted().joined(separator: ", ")), got \"\(action.prefix(40))\""
            )
        }
        guard let count = try body.int("count", in: 1...SyntheticAudience.maxCount) else {
            throw .invalidParams("count: required, 1...\(SyntheticAudience.maxCount)")
        }
        let params = body.value("params") ?? .object([])
        guard case .object = params else { throw .invalidParams("params: expected an object") }
        let (done, errors, messages) = try audience.act(
            room: RoomID(roomID),
            action: action,
            count: count,
            params: params
        )
        let codes = errors.keys.sorted()
        return .json(
            200,
            [
                "done": .int(done),
                "errors": .object(codes.map { JSON.Member(String($0), .int(errors[$0]!)) }),
                "messages": .object(codes.map { JSON.Member(String($0), .string(messages[$0] ?? "")) }),
            ]
        )
    }

    static let noManualClock = RoomError(
        .wrongState,
        "the clock is the system's: start roomd with --test-mode --clock manual"
    )

    /// `{advance_ms}` or `{set_ms}` → `{now}`: every timer passed fires, in
    /// time order, before the answer.
    private func moveClock(_ body: Params) throws(RoomError) -> HTTPResponse {
        guard let clock = schedule.manual else { throw Self.noManualClock }
        let from = clock.now
        let target: Int64
        switch (body.has("advance_ms"), body.has("set_ms")) {
        case (true, false):
            let advance = try body.int("advance_ms", in: 0...TestMode.maxAdvanceMillis)!
            target = from + Int64(advance)
        case (false, true):
            let set = try body.int("set_ms", in: 0...Int(Int64.max / 2))!
            guard Int64(set) >= from else {
                throw .invalidParams("set_ms: the clock does not go back (now \(from), got \(set))")
            }
            guard Int64(set) - from <= Int64(TestMode.maxAdvanceMillis) else {
                throw .invalidParams("set_ms: at most \(TestMode.maxAdvanceMillis) ms ahead of now (\(from))")
            }
            target = Int64(set)
        case (true, true): throw .invalidParams("advance_ms, set_ms: give one, not both")
        case (false, false): throw .invalidParams("advance_ms or set_ms: required")
        }
        let ran = schedule.advance(to: target)
        logger.info(
            "test clock moved",
            metadata: ["from": "\(from)", "to": "\(target)", "timers": "\(ran)"]
        )
        return .json(200, ["now": .int(clock.now)])
    }
}
