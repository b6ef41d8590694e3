import Logging
import RoomConfig
import RoomModel
import RoomWire

/// decode → RoomModel → encode once → fan out: the JSON-RPC pipeline of
/// one client message (PROTOCOL.md sections 2 and 8), and the table of
/// methods. Its service thread's only (checked per message in debug builds).
/// (`package`: the dispatcher fuzzer drives `handle`.)
package final class Dispatcher {
    /// A method that needs no peer (`join`, `ping`, `preview`).
    typealias OpenHandler = (Dispatcher) -> (Params, inout Call) throws(RoomError) -> [UInt8]
    /// A method of a joined peer: it gets the peer the dispatcher checked.
    typealias JoinedHandler = (Dispatcher) -> (Params, inout JoinedCall) throws(RoomError) -> [UInt8]

    /// A method of the table: whether its caller must have joined is its case.
    enum Method {
        case open(OpenHandler)
        case joined(JoinedHandler)
    }

    static let maxBatch = 64
    /// Consecutive -32700/-32600/42900 errors that close a connection (4029).
    static let maxErrorStreak = 10

    let thread: ServiceThread
    let registry: RoomRegistry
    package let outbound: FanOut
    let policies: Policies
    let verifier: TokenVerifier
    let metrics: ServerMetrics
    let clock: RoomClock
    let homes: RoomHomes
    let logger: Logger
    /// Where what a call let go of is freed, off this thread (`chat-clear`).
    let graveyard = Graveyard()
    /// Section 30's hooks (Hooks/HookGate.swift); nil without `settings.hooks`.
    var hooks: HookGate?
    /// Messages of `connection` handled after `handle` returned false for
    /// them (they waited for a hook): a cluster's home acknowledges them then.
    var handledLater: ((Connection, Int) -> Void)?
    private let methods: [String: Method] = Dispatcher.registeredMethods

    init(
        thread: ServiceThread,
        registry: RoomRegistry,
        fanOut: FanOut,
        policies: Policies,
        verifier: TokenVerifier,
        metrics: ServerMetrics,
        clock: RoomClock,
        homes: RoomHomes,
        logger: Logger
    ) {
        self.thread = thread
        self.registry = registry
        self.outbound = fanOut
        self.policies = policies
        self.verifier = verifier
        self.metrics = metrics
        self.clock = clock
        self.homes = homes
        self.logger = logger
    }

    /// SIGHUP: the reloaded template's roles apply to joins and role changes from now on.
    func reload(_ template: RoleTemplate) {
        thread.assertIsCurrent()
        registry.replaceRoles(with: template)
        policies.add(registry.template)
    }

    /// The names of `registeredMethods`, sorted.
    static var methodNames: [String] { registeredMethods.keys.sorted() }

    /// Every method roomd serves, by name: the dispatcher's table, and the
    /// `method` labels of `roomd_calls_total` (`ServerMetrics`), so the two
    /// cannot disagree. docs/openrpc.json documents each of them.
    static var registeredMethods: [String: Method] {
        let tables = [
            joinMethods, identityMethods, messageMethods, trackMethods, roleChangeMethods, moderationMethods,
            groupMethods,
            searchMethods, previewMethods, sessionStoreMethods, pollMethods, hlsMethods, chatMethods,
            questionMethods,
            stageMethods,
            reactionMethods,
            chatModerationMethods,
            heldMethods,
            auditMethods,
            recordingMethods,
            tokenMethods,
        ]
        return tables.reduce(into: [:]) { all, table in
            all.merge(table) { _, _ in preconditionFailure("a method twice") }
        }
    }

    /// The result `{}`.
    static let empty: [UInt8] = Array("{}".utf8)

    // MARK: pipeline

    /// Handles one complete text message from `connection`. False when it is
    /// not answered yet: a call of it waits for its hook, or it waits behind
    /// one (section 30); `handledLater` tells when it is.
    @discardableResult
    package func handle(_ bytes: [UInt8], from connection: Connection) -> Bool {
        thread.assertIsCurrent()
        if let wait = connection.hookWait {
            // A call of this client waits for its hook: this one is answered after it, in order.
            if !wait.hold(bytes) {
                logger.info("messages waiting behind a hook over the bound, closing", metadata: connection.logMetadata)
                connection.close(1008)
            }
            return false
        }
        let message = MessageRun()
        message.raw = bytes
        do {
            let json = try JSON.parse(bytes)
            if case .array(let calls) = json {
                if calls.isEmpty || calls.count > Self.maxBatch {
                    let error = RoomError(
                        .invalidRequest,
                        "a batch holds 1 to \(Self.maxBatch) calls, got \(calls.count)"
                    )
                    metrics.failed(.invalidRequest)
                    Envelope.response(id: .null, into: &message.out, error: error)
                    count(error, on: connection)
                    message.replied = true
                } else {
                    message.calls = calls
                    message.isBatch = true
                    message.out.beginArray()
                }
            } else {
                message.calls = [json]
            }
        } catch {
            let failure = RoomError(.parseError, "parse error: \(error)")
            metrics.failed(.parseError)
            Envelope.response(id: .null, into: &message.out, error: failure)
            count(failure, on: connection)
            message.replied = true
        }
        return run(message, on: connection)
    }

    /// Runs a message's calls from its next one, then answers it. False when
    /// a call waits for its hook: the message runs on from there once it answered.
    func run(_ message: MessageRun, on connection: Connection) -> Bool {
        let roomBefore = connection.peer?.room.id
        defer {  // a cluster saves the rooms' states for a takeover: they may be stale now
            homes.touch(roomBefore)
            homes.touch(connection.peer?.room.id)
        }
        connection.beginDeferring()
        while message.next < message.calls.count {
            let verdict = message.verdict
            message.verdict = nil
            switch process(
                message.calls[message.next],
                on: connection,
                into: &message.out,
                after: &message.after,
                verdict: verdict
            ) {
            case .replied: message.replied = true
            case .silent: break
            case .waiting(let request, let room):
                connection.endDeferring()
                hooks!.park(message, request, room: room, on: connection)
                return false
            }
            message.next += 1
        }
        if message.isBatch { message.out.endArray() }
        if message.replied { connection.enqueue(Frame(payload: message.out), bypassingDeferral: true) }
        for frame in message.after.replay ?? [] {
            connection.enqueue(frame, bypassingDeferral: true, enforcingLimit: false)
        }
        connection.endDeferring()
        if connection.isDroppedAsSlow {
            outbound.dropSlowConsumer(connection)
            return true
        }
        if connection.errors.limitReached {
            logger.info("too many errors in a row, closing", metadata: connection.logMetadata)
            connection.close(4029)
        } else if let code = message.after.closeCode {
            connection.close(code)
        }
        return true
    }

    /// What one call of a message came to.
    enum CallOutcome {
        /// Answered into the message's answer.
        case replied
        /// A notification: nothing to answer (a failure was pushed as `on-error`).
        case silent
        /// It waits for its hook (section 30).
        case waiting(HookRequest, room: RoomID)
    }

    /// One call. Writes its response into `out` (`.replied`), or nothing for
    /// a notification (whose failure is pushed as `on-error`), or stops before
    /// acting when it waits for its hook; `verdict`: the hook's, when the call
    /// runs again. What the call leaves for after the response is folded into `after`.
    private func process(
        _ call: JSON,
        on connection: Connection,
        into out: inout JSONWriter,
        after: inout AfterReply,
        verdict: HookVerdict? = nil
    ) -> CallOutcome {
        let id = call["id"]
        let validID: JSON? =
            switch id {
            case .string, .number: id
            default: nil
            }
        let methodName = call["method"]?.stringValue
        let again = verdict != nil  // counted and journaled on its first run
        if !again { metrics.called(methodName) }
        // Test mode's journal: the call now, its answer below (nil otherwise).
        let journal = outbound.journal
        let roomBefore = journal == nil ? nil : connection.peer.flatMap { $0.hasLeft ? nil : $0.room }
        if let journal, !again, case .object = call { journal.call(call, from: connection) }
        defer { journal?.endCall() }
        var hook: HookStep = verdict.map { .answered($0) } ?? .fresh
        let result = Result { () throws(RoomError) -> [UInt8] in
            try invoke(call, methodName, validID: validID, on: connection, after: &after, hook: &hook)
        }
        if case .success = result, case .asked(let request, let room) = hook { return .waiting(request, room: room) }
        switch result {
        case .success(let bytes):
            connection.errors.count = 0
            guard let validID else { return .silent }
            Envelope.response(id: validID, into: &out, result: bytes)
            if let journal {
                var answer = JSONWriter(reserving: bytes.count + 64)
                Envelope.response(id: validID, into: &answer, result: bytes)
                journal.answer(answer.bytes, to: connection, roomBefore: roomBefore)
            }
            return .replied
        case .failure(let error):
            count(error, on: connection)
            metrics.failed(error.code)
            if error.code == .internalError || error.code == .rateLimited {
                logger.info(
                    "call failed",
                    metadata: connection.logMetadata.merging(
                        ["method": "\(methodName ?? "?")", "code": "\(error.code.rawValue)"]) { $1 }
                )
            }
            let isNotification = id == nil && methodName != nil && call.objectValue != nil
            if isNotification, error.code != .invalidRequest {
                connection.enqueue(
                    Envelope.notification("on-error") { w in
                        w.field("code", error.code.rawValue)
                        w.field("message", error.message)
                        w.field("method", methodName ?? "")
                        error.encodeData(into: &w)  // 42901 (section 22), 40407 (section 26)
                    }
                )
                return .silent
            }
            Envelope.response(id: validID ?? .null, into: &out, error: error)
            if let journal {
                var answer = JSONWriter(reserving: 128)
                Envelope.response(id: validID ?? .null, into: &answer, error: error)
                journal.answer(answer.bytes, to: connection, roomBefore: roomBefore)
            }
            return .replied
        }
    }

    /// One call after its journal line: the rate limit, the request's
    /// shape, the method, test mode's method faults, the join state, the
    /// params, then the handler. A call's second run, with its hook's verdict
    /// in `hook`, skips the rate limit and the method faults its first run took.
    private func invoke(
        _ call: JSON,
        _ methodName: String?,
        validID: JSON?,
        on connection: Connection,
        after: inout AfterReply,
        hook: inout HookStep
    ) throws(RoomError) -> [UInt8] {
        let id = call["id"]
        let again: Bool
        if case .answered = hook { again = true } else { again = false }
        // The rate limit is checked right after parsing, before -32600.
        if !again, methodName != "ping", !connection.rate.take(nowMillis: clock.nowMillis()) {
            throw RoomError(
                .rateLimited,
                "rate limited: over \(registry.settings.limits.messagesPerSecond) calls/s"
            )
        }
        guard case .object = call, call["jsonrpc"] == .string("2.0"), let methodName,
            id == nil || validID != nil
        else {
            throw RoomError(
                .invalidRequest,
                "invalid request: needs jsonrpc \"2.0\", a string method and a string or number id"
            )
        }
        guard let method = methods[methodName] else {
            throw RoomError(.methodNotFound, "method not found: \(methodName)")
        }
        // Test mode II: a scripted error answers the call, which changes nothing.
        if !again, let faults = outbound.testFaults, !faults.methods.isEmpty,
            let scripted = faults.methods.take(methodName, by: connection.peer?.id)
        {
            metrics.testFaultErrors.increment()
            throw scripted
        }
        // The join state, then the params object, then the handler: in this
        // order (`preview` checks that it has not joined itself, after params).
        switch method {
        case .open(let handler):
            if methodName == "join", connection.peer != nil {
                throw RoomError(.alreadyJoined, "this connection already joined")
            }
            var context = Call(connection: connection, hook: hook)
            defer {
                after.fold(context.after)
                hook = context.hook
            }
            return try handler(self)(try Self.params(of: call), &context)
        case .joined(let handler):
            guard let peer = connection.peer else { throw RoomError(.notJoined, "not joined: call join first") }
            var context = JoinedCall(peer: peer, connection: connection, hook: hook)
            defer {
                after.fold(context.after)
                hook = context.hook
            }
            let params = try Self.params(of: call)
            // Section 32: a moderation act is recorded once it succeeded (Audit/).
            let audit = AuditRecorder.prepare(methodName, params.members, by: peer)
            let result = try handler(self)(params, &context)
            if let audit { AuditRecorder.record(audit, registry: registry) }
            return result
        }
    }

    /// Test mode II's synthetic audience (section 33): one call of a
    /// socketless peer, through the same checks and handler as a client's
    /// (its pushes to itself wait for the answer, as a client's do). The
    /// answer itself goes nowhere; the caller counts its error.
    func callAsAudience(_ method: String, params: JSON, on connection: Connection) -> RoomError? {
        thread.assertIsCurrent()
        let roomBefore = connection.peer?.room.id
        defer {
            homes.touch(roomBefore)
            homes.touch(connection.peer?.room.id)
        }
        metrics.called(method)
        let call: JSON = ["jsonrpc": "2.0", "id": 1, "method": .string(method), "params": params]
        var after = AfterReply()
        connection.beginDeferring()
        defer { connection.endDeferring() }
        var hook = HookStep.fresh  // never asked: a synthetic peer's calls skip hooks
        do throws(RoomError) {
            _ = try invoke(call, method, validID: 1, on: connection, after: &after, hook: &hook)
            return nil
        } catch {
            metrics.failed(error.code)
            return error
        }
    }

    /// A call's params: an object, or none (`{}`).
    private static func params(of call: JSON) throws(RoomError) -> Params {
        switch call["params"] {
        case nil: Params(.object([]))
        case .object?: Params(call["params"]!)
        case let other?: throw RoomError.invalidParams("params: expected an object, got \(other.typeName)")
        }
    }

    private func count(_ error: RoomError, on connection: Connection) {
        switch error.code {
        case .parseError, .invalidRequest, .rateLimited:
            connection.errors.count += 1
            // Ten in a row close the connection, even if a later call of the same batch succeeds.
            if connection.errors.count >= Self.maxErrorStreak { connection.errors.limitReached = true }
        default: break
        }
    }

    /// Delivers the pushes (FanOut.swift).
    package func fanOut(_ deliveries: [Delivery]) { outbound.fanOut(deliveries) }

    /// Delivers the pushes, then disconnects the peers the change removed
    /// (FanOut.swift): the caller's own connection after its response.
    func apply(_ effects: Effects, _ call: inout JoinedCall) {
        if let code = outbound.apply(effects, caller: call.connection) { call.after.closeCode = code }
    }

    static func encode(_ body: (inout JSONWriter) -> Void) -> [UInt8] {
        var w = JSONWriter()
        w.object(body)
        return w.bytes
    }
}

extension Result where Failure == RoomError {
    init(catching body: () throws(RoomError) -> Success) {
        do { self = .success(try body()) } catch { self = .failure(error) }
    }
}
