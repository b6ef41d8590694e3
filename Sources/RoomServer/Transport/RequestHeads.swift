import CWebSockets
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Request heads roomd looks at before libwebsockets does (the libev loop,
/// where roomd accepts): lws 4.1 gives its callbacks only the headers it
/// parsed, and keeps unknown headers where no API can list or measure them
/// (`lws_hdr_custom_length` needs the name), so a head of unknown headers
/// over 8 KiB reached roomd as a normal request; and a head over its header
/// table (16 KiB) was closed without an answer. So each accepted socket is
/// read with `MSG_PEEK` first — nothing is consumed, lws later reads the same
/// bytes — until its head (request line, headers, the empty line) is
/// complete. A head over 8 KiB is answered 431 here, whatever its headers
/// are and whether or not it asks for an upgrade; a complete head, or bytes
/// that are not an HTTP request line (lws' raw fallback answers those 400),
/// go to lws as they are. While a head is incomplete, `SO_RCVLOWAT` makes the
/// socket readable only once more bytes arrive (a peek consumes nothing, so
/// a level-triggered watcher would fire again at once); a client that shuts
/// down its side before its head is whole is closed at once (its EOF would
/// keep the socket readable: found by the http fuzzer's rate, issue 20). A head not complete
/// within `timeoutMillis` is closed without an answer, like lws' own timeout.
///
/// A complete head that is a plain feed GET (`FeedRequestHead`) is answered
/// here when the router can answer it at once (`answerFeed`: a cached span,
/// a local build, an error): the answer is written in one `send` (what the
/// kernel does not take waits for the socket to be writable), the head is
/// consumed, and the socket stays here for its next head, kept alive as lws
/// would keep it (closed after `HTTPExchange.keepAliveIdleMillis` idle). A
/// viewer polling the feed every few seconds is then served without lws'
/// HTTP parser and its per-request bookkeeping (`make bench` (m)). The first
/// head roomd does not answer goes to lws with the socket, at a request
/// boundary, exactly as a first head does.
///
/// Each socket counts in the budget (`Sockets.heads`) and among the unjoined
/// connections of its address until it is handed over or closed (a kept one
/// as idle since its last answer). Its service thread's only (checked in
/// debug builds).
final class RequestHeads {
    /// A head over this is answered 431 (PROTOCOL.md section 1, 1.1).
    static let maxBytes = HTTPExchange.maxHeaderBytes
    /// The longest a head may take to arrive (lws' `timeout_secs`).
    static let timeoutMillis: Int64 = 10_000
    /// After a refusal, how long roomd keeps reading (and discarding) what the
    /// client still sends, so that closing does not reset the connection
    /// before the answer is read.
    static let lingerMillis: Int64 = 2000

    /// A socket whose head is being read, or whose refusal is being lingered on.
    final class Waiting {
        let fd: Int32
        var arrival: Arrival
        /// Its last progress (monotonic ms): its arrival, a byte of its answer sent, the answer's end.
        var since: Int64
        var lingering = false
        /// roomd answered a request of it and waits for the next one.
        var kept = false
        /// Its request went to the room's home (another node): no head is
        /// read until the answer is sent, so pipelined requests keep their order.
        var awaiting = false
        /// The end of an answer the kernel did not take yet (from `unsentOffset`).
        var unsent: [UInt8] = []
        var unsentOffset = 0
        /// Its SO_RCVLOWAT (1 unless a partial head waits for more).
        var lowWatermark = 1
        fileprivate var watcher: UnsafeMutableRawPointer?
        fileprivate var writer: UnsafeMutableRawPointer?
        fileprivate unowned let owner: RequestHeads

        fileprivate init(fd: Int32, arrival: Arrival, since: Int64, owner: RequestHeads) {
            self.fd = fd
            self.arrival = arrival
            self.since = since
            self.owner = owner
        }
    }

    /// What the first bytes of a connection are.
    enum Verdict: Equatable {
        /// A complete head within the limit: lws serves it.
        case complete
        /// Not an HTTP request line: lws serves it (its raw fallback answers 400).
        case notHTTP
        /// More bytes are needed.
        case incomplete
        /// Answered here, then closed.
        case refused(status: Int, reason: String, message: String)
    }

    private var waiting: [Int32: Waiting] = [:]
    private var scratch = [UInt8](repeating: 0, count: maxBytes)
    private let thread: ServiceThread
    private let loop: UnsafeMutableRawPointer
    private let sockets: Sockets
    private let logger: Logger
    private let metrics: ServerMetrics
    /// Hands a socket whose head is fine to lws.
    private let handOver: (Int32, Arrival) -> Void
    /// The answer to a feed request read here (`Router.answerFeed`): now, or
    /// later through the closure it is given.
    var answerFeed: ((HTTPRequest, @escaping (HTTPResponse) -> Void) -> FeedAnswer)?

    init(
        thread: ServiceThread,
        loop: UnsafeMutableRawPointer,
        sockets: Sockets,
        logger: Logger,
        metrics: ServerMetrics,
        handOver: @escaping (Int32, Arrival) -> Void
    ) {
        self.metrics = metrics
        self.thread = thread
        self.loop = loop
        self.sockets = sockets
        self.logger = logger
        self.handOver = handOver
    }

    deinit {
        for entry in waiting.values {
            stopWatching(entry)
            stopWriting(entry)
            Glibc.close(entry.fd)
        }
    }

    /// A socket just accepted (admitted as `arrival`).
    func take(_ fd: Int32, _ arrival: Arrival) {
        thread.assertIsCurrent()
        sockets.heads += 1
        examine(Waiting(fd: fd, arrival: arrival, since: monotonicMillis(), owner: self))
    }

    /// Closes the socket of `arrival` (to make room for another), if it is one of these.
    func close(_ arrival: Arrival) {
        thread.assertIsCurrent()
        guard case .head(let fd) = arrival.socket, let entry = waiting[fd] else { return }
        drop(entry)
    }

    /// Once a second: heads that took too long are closed, lingering ones
    /// too, and kept connections idle for `HTTPExchange.keepAliveIdleMillis`.
    func expire(now: Int64) {
        thread.assertIsCurrent()
        for entry in waiting.values where now - entry.since >= limit(of: entry) { drop(entry) }
    }

    private func limit(of entry: Waiting) -> Int64 {
        if entry.lingering { return Self.lingerMillis }
        return entry.kept && entry.unsent.isEmpty && !entry.awaiting
            ? HTTPExchange.keepAliveIdleMillis : Self.timeoutMillis
    }

    fileprivate func readable(_ entry: Waiting) {
        thread.assertIsCurrent()
        if entry.lingering {
            discardInput(entry.fd) ? watch(entry, lowWatermark: 1) : drop(entry)
        } else {
            examine(entry)
        }
    }

    private func examine(_ entry: Waiting) {
        let fd = entry.fd
        let count = scratch.withUnsafeMutableBytes {
            recv(fd, $0.baseAddress, $0.count, Int32(MSG_PEEK | MSG_DONTWAIT))
        }
        if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
            return watch(entry, lowWatermark: 1)
        }
        guard count > 0 else { return drop(entry) }  // closed, or failed, before a whole head
        let verdict = scratch.withUnsafeBytes { Self.verdict(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        switch verdict {
        case .incomplete:
            // A FIN before the whole head: it can never complete, and the
            // socket would stay readable (a peek never consumes the EOF).
            if Self.peerHasShutDown(fd) { return drop(entry) }
            watch(entry, lowWatermark: count + 1)
        case .complete, .notHTTP:
            if verdict == .complete, answer(entry, headOf: count) { return }
            stopWatching(entry)
            if entry.lowWatermark != 1 { setLowWatermark(fd, 1) }
            waiting.removeValue(forKey: fd)
            sockets.heads -= 1
            handOver(fd, entry.arrival)
        case .refused(let status, let reason, let message):
            refuse(entry, status: status, reason: reason, message: message)
        }
    }

    /// Answers the complete head at the start of `scratch` (of the `peeked`
    /// bytes) here, if it is a feed request: the head is consumed, the
    /// answer sent (now, or once the room's home sent it: `awaiting`), and
    /// the socket waits for its next head. False: nothing was consumed (lws
    /// serves it).
    private func answer(_ entry: Waiting, headOf peeked: Int) -> Bool {
        guard let answerFeed, !entry.lingering,
            let length = scratch.withUnsafeBytes({ Self.endOfHead(UnsafeRawBufferPointer(rebasing: $0[..<peeked])) }),
            let request = scratch.withUnsafeBytes({
                FeedRequestHead.parse(UnsafeRawBufferPointer(rebasing: $0[..<length]), socket: entry.fd)
            })
        else { return false }
        let consumed = scratch.withUnsafeMutableBytes { recv(entry.fd, $0.baseAddress, length, Int32(MSG_DONTWAIT)) }
        guard consumed == length else {
            drop(entry)  // the peeked bytes are gone: the socket failed
            return true
        }
        metrics.feedAnsweredDirectly.increment()
        entry.awaiting = true
        let answer = answerFeed(request) { [weak self, weak entry] response in
            // Not if it was dropped meanwhile (its 10 s passed, or room was made).
            guard let self, let entry, entry.awaiting else { return }
            self.deliver(response, to: entry)
        }
        switch answer {
        case .now(let response):
            deliver(response, to: entry)
        case .later:
            guard entry.awaiting else { return true }  // answered already
            stopWatching(entry)
            entry.since = monotonicMillis()
            waiting[entry.fd] = entry
        }
        return true
    }

    /// Sends an answer (what the kernel does not take, once the socket is
    /// writable); then the socket waits for its next head.
    private func deliver(_ response: HTTPResponse, to entry: Waiting) {
        thread.assertIsCurrent()
        entry.awaiting = false
        let bytes = response.keptAliveBytes
        let sent = bytes.withUnsafeBytes {
            send(entry.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        }
        let failure = sent < 0 ? errno : 0
        let now = monotonicMillis()
        entry.since = now
        entry.kept = true
        entry.arrival = sockets.unjoined.progressed(entry.arrival, at: now)
        if sent == bytes.count { return watch(entry, lowWatermark: 1) }
        guard sent >= 0 || failure == EAGAIN || failure == EWOULDBLOCK || failure == EINTR else {
            return drop(entry)
        }
        // The kernel took part of it: the rest goes when the socket is writable; no head is read meanwhile.
        entry.unsent = bytes
        entry.unsentOffset = max(sent, 0)
        stopWatching(entry)
        waiting[entry.fd] = entry
        entry.writer = cws_io_start_writable(
            loop,
            entry.fd,
            requestHeadWritable,
            Unmanaged.passUnretained(entry).toOpaque()
        )
        if entry.writer == nil { drop(entry) }
    }

    /// The socket of an answer not sent whole is writable: more of it goes;
    /// once all of it is sent, the socket waits for its next head.
    fileprivate func writable(_ entry: Waiting) {
        thread.assertIsCurrent()
        let sent = entry.unsent.withUnsafeBytes {
            send(
                entry.fd,
                $0.baseAddress! + entry.unsentOffset,
                $0.count - entry.unsentOffset,
                Int32(MSG_NOSIGNAL | MSG_DONTWAIT)
            )
        }
        if sent < 0 {
            if errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR { drop(entry) }
            return
        }
        entry.unsentOffset += sent
        entry.since = monotonicMillis()
        guard entry.unsentOffset == entry.unsent.count else { return }
        entry.unsent = []
        entry.unsentOffset = 0
        stopWriting(entry)
        watch(entry, lowWatermark: 1)
    }

    /// Answers `status` with a JSON body, stops sending, and lingers: what the
    /// client still sends is read and thrown away until it closes (or for
    /// `lingerMillis`), so that its unread bytes do not make the close a
    /// reset that could destroy the answer before the client reads it.
    private func refuse(_ entry: Waiting, status: Int, reason: String, message: String) {
        logger.info(
            "request refused before libwebsockets",
            metadata: ["status": "\(status)", "reason": "\(message)", "address": "\(entry.arrival.address)"]
        )
        let response = HTTPExchange.rawResponse(status, reason: reason, code: status, message)
        _ = response.withUnsafeBytes { send(entry.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        shutdown(entry.fd, Int32(SHUT_WR))
        entry.lingering = true
        entry.since = monotonicMillis()
        discardInput(entry.fd) ? watch(entry, lowWatermark: 1) : drop(entry)
    }

    /// Reads and discards what is waiting; false once the client has closed (or the socket failed).
    private func discardInput(_ fd: Int32) -> Bool {
        for _ in 0..<16 {
            let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 { continue }
            return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        }
        return true
    }

    private func watch(_ entry: Waiting, lowWatermark: Int) {
        if lowWatermark != entry.lowWatermark {
            entry.lowWatermark = lowWatermark
            setLowWatermark(entry.fd, lowWatermark)
        }
        waiting[entry.fd] = entry
        if entry.watcher == nil {
            entry.watcher = cws_io_start(
                loop,
                entry.fd,
                requestHeadReadable,
                Unmanaged.passUnretained(entry).toOpaque()
            )
            if entry.watcher == nil { drop(entry) }
        }
    }

    private func stopWatching(_ entry: Waiting) {
        if let watcher = entry.watcher { cws_io_stop(loop, watcher) }
        entry.watcher = nil
    }

    private func stopWriting(_ entry: Waiting) {
        if let writer = entry.writer { cws_io_stop(loop, writer) }
        entry.writer = nil
    }

    /// Closes the socket: the client gave up, took too long, or made room.
    private func drop(_ entry: Waiting) {
        entry.awaiting = false
        stopWatching(entry)
        stopWriting(entry)
        waiting.removeValue(forKey: entry.fd)
        Glibc.close(entry.fd)
        sockets.heads -= 1
        sockets.unjoined.settle(entry.arrival)
    }

    /// Linux's `POLLRDHUP` (glibc declares it only under `_GNU_SOURCE`).
    private static let pollReadHangUp: Int16 = 0x2000

    /// Whether the client shut down its side (or the socket failed).
    static func peerHasShutDown(_ fd: Int32) -> Bool {
        var pfd = pollfd(fd: fd, events: pollReadHangUp, revents: 0)
        guard poll(&pfd, 1, 0) > 0 else { return false }
        return pfd.revents & (pollReadHangUp | Int16(POLLHUP) | Int16(POLLERR)) != 0
    }

    private func setLowWatermark(_ fd: Int32, _ bytes: Int) {
        var value = Int32(bytes)
        setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// What the first `bytes` of a connection are (a pure function of them).
    static func verdict(_ bytes: UnsafeRawBufferPointer) -> Verdict {
        guard let first = bytes.first else { return .incomplete }
        // Every method starts with a capital letter; anything else goes to lws' raw fallback.
        guard first >= UInt8(ascii: "A"), first <= UInt8(ascii: "Z") else { return .notHTTP }
        guard endOfHead(bytes) != nil else {
            return bytes.count >= maxBytes
                ? .refused(
                    status: 431,
                    reason: "Request Header Fields Too Large",
                    message: "request headers over \(maxBytes) bytes"
                )
                : .incomplete
        }
        if let problem = targetProblem(bytes) {
            return .refused(status: 400, reason: "Bad Request", message: "request target: \(problem)")
        }
        return .complete
    }

    /// What is wrong with the percent-encoding of the request target (path
    /// and query) of a complete head, if anything: lws decodes `%XX` into the
    /// path it hands roomd as a C string, so `%00` cut the path short
    /// (`/v2/active-rooms/%00/hls` was the room list), other control bytes
    /// ended up in it, and a malformed escape got lws' HTML 403.
    static func targetProblem(_ bytes: UnsafeRawBufferPointer) -> String? {
        let space = UInt8(ascii: " ")
        guard let start = bytes.firstIndex(of: space) else { return nil }
        var index = start + 1
        while index < bytes.count, bytes[index] != space, bytes[index] != UInt8(ascii: "\r"),
            bytes[index] != UInt8(ascii: "\n")
        {
            defer { index += 1 }
            guard bytes[index] == UInt8(ascii: "%") else { continue }
            guard index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            else { return "malformed percent-encoding (% must be followed by two hex digits)" }
            let byte = high << 4 | low
            if byte < 0x20 || byte == 0x7F {
                let escape = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[index..<index + 3]), as: UTF8.self)
                return "\(escape) decodes to a control byte"
            }
            index += 2
        }
        return nil
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The length of the head (up to and including the empty line), if it is complete in `bytes`.
    static func endOfHead(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "\n") else {
                index += 1
                continue
            }
            // An empty line: LF LF, or LF CR LF.
            if index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "\n") { return index + 2 }
            if index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "\r"), bytes[index + 2] == UInt8(ascii: "\n") {
                return index + 3
            }
            index += 1
        }
        return nil
    }
}

/// libev's callback for a socket whose head is being read: a top-level
/// function (a C function pointer), run on the service thread (`readable`
/// checks it).
func requestHeadReadable(_ data: UnsafeMutableRawPointer?) {
    guard let data else { return }
    let entry = Unmanaged<RequestHeads.Waiting>.fromOpaque(data).takeUnretainedValue()
    entry.owner.readable(entry)
}

/// libev's callback for a socket whose answer waits to be sent (see `requestHeadReadable`).
func requestHeadWritable(_ data: UnsafeMutableRawPointer?) {
    guard let data else { return }
    let entry = Unmanaged<RequestHeads.Waiting>.fromOpaque(data).takeUnretainedValue()
    entry.owner.writable(entry)
}
