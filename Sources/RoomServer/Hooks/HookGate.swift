import Logging
import RoomConfig
import RoomModel
import RoomWire

/// Where a hooked call stands in its handler (Call.swift's `hook`).
enum HookStep {
    /// No hook asked yet.
    case fresh
    /// The handler stopped before acting: this request goes to the hook, and
    /// the call runs again with its verdict.
    case asked(HookRequest, room: RoomID)
    /// The hook's verdict, for the call's second run.
    case answered(HookVerdict)
}

/// The service thread's side of hooks (PROTOCOL.md section 30): the calls
/// waiting for their hook, by ticket, and the bounds on them. Over a bound
/// the call's hook fails at once (`on_error` decides), so a hook that
/// answers slowly or never holds at most these many calls:
/// `maxInFlight` per service thread, `maxInFlightPerRoom` per room. Each
/// connection has at most one (its later calls wait behind it: `HookWait`).
/// Its service thread's only (its caller, the dispatcher, is checked).
final class HookGate {
    /// Hook calls in flight at once on a service thread (a node with `--threads N` has N times this).
    static let maxInFlight = 1024
    /// Hook calls in flight at once for one room.
    static let maxInFlightPerRoom = 256

    let client: HookClient
    var settings: HookSettings { client.settings }
    /// Hook request ids: the registry's generator (random, or test mode's seeded one).
    let ids: IDGenerator

    struct Pending {
        let connection: Connection
        let message: MessageRun
        let room: RoomID
        let event: HookSettings.Event
    }

    private var pending: [UInt64: Pending] = [:]
    private var bounds = HookBounds(total: HookGate.maxInFlight, perRoom: HookGate.maxInFlightPerRoom)
    private var lastTicket: UInt64 = 0

    init(client: HookClient, ids: IDGenerator) {
        self.client = client
        self.ids = ids
    }

    /// Hook calls in flight now.
    var inFlight: Int { pending.count }

    /// Whether a call of `room` waits for its hook (a cluster home keeps the room's lease meanwhile).
    func waits(in room: RoomID) -> Bool { bounds.inFlight(room) > 0 }

    /// A ticket for one more call of `room`'s, or nil over a bound.
    func reserve(_ room: RoomID) -> UInt64? {
        guard bounds.take(room) else { return nil }
        lastTicket += 1
        return lastTicket
    }

    /// The call waits: its request goes out, the connection's later messages wait behind it.
    func park(_ message: MessageRun, _ request: HookRequest, room: RoomID, on connection: Connection) {
        pending[request.ticket] = Pending(connection: connection, message: message, room: room, event: request.event)
        connection.hookWait = HookWait(ticket: request.ticket, message: message)
        connection.pauseReading()
        client.ask(request)
    }

    /// The call the hook answered, no longer counted in flight.
    func release(_ ticket: UInt64) -> Pending? {
        guard let call = pending.removeValue(forKey: ticket) else { return nil }
        bounds.give(call.room)
        return call
    }
}

/// The hook calls in flight, counted per service thread and per room: a
/// call is taken before its request leaves and given back with its verdict.
struct HookBounds {
    let total: Int
    let perRoom: Int
    private(set) var inFlight = 0
    private var rooms: [RoomID: Int] = [:]

    init(total: Int, perRoom: Int) {
        self.total = total
        self.perRoom = perRoom
    }

    /// One more call of `room`, unless a bound is reached.
    mutating func take(_ room: RoomID) -> Bool {
        guard inFlight < total, rooms[room, default: 0] < perRoom else { return false }
        inFlight += 1
        rooms[room, default: 0] += 1
        return true
    }

    /// A call of `room` ended.
    mutating func give(_ room: RoomID) {
        guard let count = rooms[room] else { return }
        inFlight -= 1
        rooms[room] = count > 1 ? count - 1 : nil
    }

    /// Calls of `room` in flight.
    func inFlight(_ room: RoomID) -> Int { rooms[room, default: 0] }
}

extension Dispatcher {
    /// Section 30: the app's hook decides on a call before its handler acts.
    /// Called by the handler once its own checks passed. Returns what to use
    /// instead of the call's own values (`.none` without a hook, or when a
    /// failed hook's `on_error` is `allow`); nil when the call waits for its
    /// hook (`step` holds the request): the handler then returns at once,
    /// having changed nothing, and runs again with the verdict. Throws 40305
    /// for a denial, 5004 for a failed hook under `on_error: "deny"`.
    /// `check` names what in a rewrite is over the call's limits (a failed hook).
    /// A denial is the audit log's `hook.deny` (section 32): the target is the
    /// connection's peer, else `user` (a join's).
    func hook(
        _ event: HookSettings.Event,
        room: RoomID,
        _ step: inout HookStep,
        on connection: Connection,
        ids logIDs: Logger.Metadata,
        user: UserID? = nil,
        check: (HookRewrite) -> String? = { _ in nil },
        data: (inout JSONWriter) -> Void
    ) throws(RoomError) -> HookRewrite? {
        guard let hooks else { return HookRewrite.none }
        switch step {
        case .answered(let verdict):
            switch verdict {
            case .allow(let rewrite):
                if let problem = check(rewrite) { return try hookFailed(event, problem, hooks, logIDs) }
                hooks.client.count(event, .allow)
                return rewrite
            case .deny(let reason):
                // The one place a hook's denial is decided (the audit log's `hook.deny`).
                hooks.client.count(event, .deny)
                logger.info("hook denied", metadata: logIDs.merging(["event": "\(event.rawValue)"]) { $1 })
                registry.auditHookDenial(
                    in: room,
                    peerID: connection.peer?.id,
                    userID: connection.peer?.userID ?? user,
                    type: event.rawValue,
                    reason: reason
                )
                throw RoomError(.hookDenied, reason)
            case .failed(let why):
                return try hookFailed(event, why, hooks, logIDs)
            }
        case .asked:
            preconditionFailure("a call asked its hook twice")
        case .fresh:
            // Synthetic audience peers (test mode II) call synchronously: never through a hook.
            guard hooks.settings.covers(event), !connection.isSynthetic else { return HookRewrite.none }
            guard let ticket = hooks.reserve(room) else {
                return try hookFailed(
                    event,
                    "over \(HookGate.maxInFlight) hook calls in flight, or \(HookGate.maxInFlightPerRoom) in the room",
                    hooks,
                    logIDs
                )
            }
            var w = JSONWriter(reserving: 512)
            w.object { w in
                w.field("version", "2.0")
                w.field("id", hooks.ids.next(.hook))
                w.field("timestamp", clock.nowMillis())
                w.field("type", event.rawValue)
                w.key("data")
                w.object(data)
            }
            step = .asked(HookRequest(ticket: ticket, event: event, body: w.bytes), room: room)
            return nil
        }
    }

    /// A failed hook: counted, logged (never the body), then `on_error`.
    private func hookFailed(
        _ event: HookSettings.Event,
        _ why: String,
        _ hooks: HookGate,
        _ logIDs: Logger.Metadata
    ) throws(RoomError) -> HookRewrite {
        hooks.client.count(event, .failed)
        logger.warning(
            "hook failed",
            metadata: logIDs.merging(
                ["event": "\(event.rawValue)", "error": "\(why)", "on_error": "\(hooks.settings.onError.rawValue)"]
            ) { $1 }
        )
        if hooks.settings.onError == .deny { throw RoomError(.hookFailed, "the app's hook failed") }
        return HookRewrite.none
    }

    /// From the inbox: a hook answered (or failed). Its call runs again with
    /// the verdict and is answered; then the connection's later messages, in
    /// order, until one waits for its hook again.
    func hookAnswered(_ result: HookResult) {
        thread.assertIsCurrent()
        guard let hooks, let call = hooks.release(result.ticket) else { return }
        let connection = call.connection
        guard let wait = connection.hookWait, wait.ticket == result.ticket, !connection.isClosing else {
            // The client went away meanwhile: nobody to answer, nothing done.
            hooks.client.count(call.event, result.verdict.outcome)
            if connection.hookWait?.ticket == result.ticket { connection.hookWait = nil }
            return
        }
        connection.hookWait = nil
        call.message.verdict = result.verdict
        var handled = run(call.message, on: connection) ? 1 : 0
        for bytes in wait.takeBacklog() where handle(bytes, from: connection) { handled += 1 }
        if handled > 0 { handledLater?(connection, handled) }
        if connection.hookWait == nil, connection.flowState.pausedRoom == nil { connection.resumeReading() }
    }
}

extension HookVerdict {
    var outcome: HookMetrics.Outcome {
        switch self {
        case .allow: .allow
        case .deny: .deny
        case .failed: .failed
        }
    }
}
