import RoomWire
import Synchronization

/// The state of one connection that both sides share: the lws thread
/// delivers into it (`markEstablished`, `deliver`, `finish`) and the
/// caller's tasks wait on it (`wait`). Everything mutable is behind one
/// `Mutex`; continuations are always resumed after the lock is released.
final class ClientSession: Sendable {
    /// The connection's number on its loop; also the wsi's opaque user data.
    let id: Int

    private let state = Mutex(State())

    init(id: Int) {
        self.id = id
    }

    // MARK: - State

    enum WaiterKind: Sendable {
        case connect
        case call(Int)  // JSON-RPC id
        case message(@Sendable (JSON) -> Bool)  // the next inbox entry that passes the test
        /// The next push whose decoded event passes the test. The test runs
        /// under the session lock (on the loop thread for new messages).
        case event(@Sendable (RoomEvent) -> Bool)
        case close
    }

    struct Waiter: Sendable {
        var kind: WaiterKind
        var continuation: CheckedContinuation<JSON, any Error>
        var timer: Task<Void, Never>?
    }

    struct State: Sendable {
        var nextToken = 0
        /// JSON-RPC ids count up from here, far from the small ids tests
        /// put in raw frames, so a raw response is never taken for a call's.
        var nextCallID = 100_001
        var waiters: [Int: Waiter] = [:]
        /// Message waiters in registration order (they are served first come, first served).
        var messageOrder: [Int] = []
        /// JSON-RPC id -> waiter token.
        var calls: [Int: Int] = [:]
        var inbox: [JSON] = []
        /// Tokens handed out whose waiter is not registered yet.
        var unregistered: Set<Int> = []
        /// Of those, the ones whose task was cancelled meanwhile.
        var cancelledEarly: Set<Int> = []
        var established = false
        /// The `connect` call gave up (timeout / cancellation): close on establishment.
        var abandoned = false
        var connectError: String?
        var closed: (code: Int, reason: String)?

        mutating func remove(_ token: Int) -> Waiter? {
            guard let waiter = waiters.removeValue(forKey: token) else { return nil }
            switch waiter.kind {
            case .call(let id): calls[id] = nil
            case .message, .event: messageOrder.removeAll { $0 == token }
            case .connect: if !established { abandoned = true }
            case .close: break
            }
            return waiter
        }

        var closedError: RoomClientError {
            let closed = closed ?? (1006, "")
            return .closed(code: closed.code, reason: closed.reason)
        }
    }

    enum Start {
        case done(Result<JSON, any Error>)
        case pending(WaiterKind)
    }

    // MARK: - Waiting (any task)

    /// Registers a waiter (or answers at once), with an optional timeout and
    /// task cancellation. `registered` runs after the waiter is in place and
    /// the lock released (used to send a call only once its waiter exists).
    func wait(
        timeout: Duration?,
        site: WaitSite,
        register: (inout State) -> Start,
        registered: (() -> Void)? = nil
    ) async throws -> JSON {
        let token = state.withLock { state in
            state.nextToken += 1
            state.unregistered.insert(state.nextToken)
            return state.nextToken
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSON, any Error>) in
                let immediate: Result<JSON, any Error>? = state.withLock { state in
                    state.unregistered.remove(token)
                    if state.cancelledEarly.remove(token) != nil { return .failure(CancellationError()) }
                    switch register(&state) {
                    case .done(let result):
                        return result
                    case .pending(let kind):
                        state.waiters[token] = Waiter(kind: kind, continuation: continuation, timer: nil)
                        switch kind {
                        case .call(let id): state.calls[id] = token
                        case .message, .event: state.messageOrder.append(token)
                        case .connect, .close: break
                        }
                        return nil
                    }
                }
                if let immediate {
                    continuation.resume(with: immediate)
                    return
                }
                registered?()
                guard let timeout else { return }
                let timer = Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    if Task.isCancelled { return }
                    self?.expire(token, timedOutAfter: timeout, site: site)
                }
                let kept = state.withLock { state in
                    guard state.waiters[token] != nil else { return false }
                    state.waiters[token]?.timer = timer
                    return true
                }
                if !kept { timer.cancel() }
            }
        } onCancel: {
            self.expire(token, with: CancellationError(), early: true)
        }
    }

    /// The waiter's time is up: it fails with ``RoomClientError/timeout(_:)``
    /// saying what it waited for and what the inbox held meanwhile.
    private func expire(_ token: Int, timedOutAfter timeout: Duration, site: WaitSite) {
        let expired: (Waiter, WaitTimeout)? = state.withLock { state in
            guard let waiter = state.remove(token) else { return nil }
            let queued = state.inbox.prefix(WaitTimeout.queuedLimit).map(WaitTimeout.summary(of:))
            let report = WaitTimeout(
                waitedFor: site.what,
                timeout: timeout,
                queued: queued,
                queuedCount: state.inbox.count,
                fileID: site.fileID,
                filePath: site.filePath,
                line: site.line,
                column: site.column
            )
            return (waiter, report)
        }
        guard let (waiter, report) = expired else { return }
        waiter.timer?.cancel()
        WaitTimeout.report(report)
        waiter.continuation.resume(throwing: RoomClientError.timeout(report))
    }

    private func expire(_ token: Int, with error: any Error, early: Bool = false) {
        let waiter = state.withLock { state in
            let waiter = state.remove(token)
            if waiter == nil, early, state.unregistered.contains(token) {
                // Not registered yet: make the registration fail.
                state.cancelledEarly.insert(token)
            }
            return waiter
        }
        guard let waiter else { return }
        waiter.timer?.cancel()
        waiter.continuation.resume(throwing: error)
    }

    // MARK: - Queries (any thread)

    func nextCallID() -> Int {
        state.withLock { state in
            defer { state.nextCallID += 1 }
            return state.nextCallID
        }
    }

    var isClosed: Bool { state.withLock { $0.closed != nil } }
    var closeInfo: (code: Int, reason: String)? { state.withLock { $0.closed } }

    func drain() -> [JSON] {
        state.withLock { state in
            defer { state.inbox.removeAll() }
            return state.inbox
        }
    }

    // MARK: - Events from the lws thread

    /// The handshake completed. Returns false if nobody wants the connection
    /// any more (the connect timed out or was cancelled): the caller closes it.
    func markEstablished() -> Bool {
        let result: (Bool, Waiter?) = state.withLock { state in
            if state.abandoned { return (false, nil) }
            state.established = true
            let token = state.waiters.first { if case .connect = $0.value.kind { true } else { false } }?.key
            return (true, token.flatMap { state.remove($0) })
        }
        if let waiter = result.1 {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: .null)
        }
        return result.0
    }

    /// One complete incoming message.
    func deliver(_ message: JSON) {
        let waiter: Waiter? = state.withLock { state in
            if case .object = message, let id = message["id"]?.intValue,
                message["result"] != nil || message["error"] != nil,
                let token = state.calls[id]
            {
                return state.remove(token)
            }
            // Decoded at most once, and only if an event waiter looks at it.
            var decoded: RoomEvent?? = nil
            for token in state.messageOrder {
                switch state.waiters[token]?.kind {
                case .message(let test)?:
                    if test(message) {
                        return state.remove(token)
                    }
                case .event(let test)?:
                    if decoded == nil { decoded = .some(RoomEvent.decode(message)) }
                    if let event = decoded!, test(event) {
                        return state.remove(token)
                    }
                default:
                    continue
                }
            }
            state.inbox.append(message)
            return nil
        }
        guard let waiter else { return }
        waiter.timer?.cancel()
        waiter.continuation.resume(returning: message)
    }

    /// The connection is over. `connectError` is set when it never got established.
    func finish(code: Int, reason: String, connectError: String? = nil) {
        let waiters: [Waiter] = state.withLock { state in
            guard state.closed == nil else { return [] }
            state.closed = (code, reason)
            if !state.established { state.connectError = connectError ?? "connection closed during the handshake" }
            let all = Array(state.waiters.values)
            state.waiters.removeAll()
            state.messageOrder.removeAll()
            state.calls.removeAll()
            return all
        }
        let error = RoomClientError.closed(code: code, reason: reason)
        for waiter in waiters {
            waiter.timer?.cancel()
            switch waiter.kind {
            case .close: waiter.continuation.resume(returning: .int(code))
            case .connect:
                waiter.continuation.resume(
                    throwing: RoomClientError.connectFailed(connectError ?? "connection closed during the handshake")
                )
            case .call, .message, .event: waiter.continuation.resume(throwing: error)
            }
        }
    }

    static func isPush(_ message: JSON, method: String) -> Bool {
        guard case .object = message, message["method"]?.stringValue == method else { return false }
        return message["id"] == nil
    }
}
