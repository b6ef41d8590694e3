import CWebSockets
import Foundation
import Synchronization

/// Where connections go.
struct Endpoint {
    var host: String
    var port: Int
    var path: String
    /// Sec-WebSocket-Protocol to ask for (the lws mirror needs `lws-mirror-protocol`).
    var subprotocol: String?

    /// Parses `ws://host:port/path`.
    init?(url: String, subprotocol: String? = nil) {
        guard url.hasPrefix("ws://") else { return nil }
        let rest = url.dropFirst(5)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...])
        else { return nil }
        host = String(authority[..<colon])
        self.port = port
        path = slash == rest.endIndex ? "/" : String(rest[slash...])
        self.subprotocol = subprotocol
    }
}

enum ConnPhase { case idle, connecting, open, closed }

/// One client connection. Loop thread only.
final class BenchConn {
    let index: Int
    var wsi: OpaquePointer?
    var phase = ConnPhase.idle
    /// The close code the server sent (0: none yet; 1006: dropped without a close frame).
    var closeCode = 0
    /// Scenario data: which room the connection belongs to.
    var room = 0
    var joined = false
    var joinAnswered = false
    var joinSentNs: UInt64 = 0
    var nextCallID = 1
    var framesIn = 0
    /// Notifications of `BenchLoop.watchedMethod` received (reset by the scenario).
    var watchedIn = 0
    /// When the last one arrived, and the shortest gap between two (UInt64.max: fewer than two).
    var watchedLastNs: UInt64 = 0
    var watchedMinGapNs: UInt64 = .max
    /// The payload size of the last text frame received (the whole frame, also when only its head was parsed).
    var lastFramePayload = 0

    /// Frames (already masked) waiting for the socket, of which the first
    /// `sent` bytes are written.
    fileprivate var outgoing: [UInt8] = []
    fileprivate var sent = 0
    fileprivate var closeAfterFlush = false
    /// The HTTP upgrade request, sent once the TCP connection is up.
    fileprivate var request: [UInt8] = []
    /// Bytes of the upgrade response until its blank line.
    fileprivate var handshake: [UInt8] = []
    /// Frame parsing across reads: an incomplete frame's start, and payload bytes still to skip.
    fileprivate var carry: [UInt8] = []
    fileprivate var skip = 0
    /// NATS mode (`BenchLoop.nats`): payload bytes left in the current frame, its opcode,
    /// a control frame's payload so far, and the NATS byte stream's unparsed tail.
    fileprivate var wsLeft = 0
    fileprivate var wsOpcode: UInt8 = 0
    fileprivate var control: [UInt8] = []
    fileprivate var natsPending: [UInt8] = []

    init(index: Int) { self.index = index }

    var queuedBytes: Int { outgoing.count - sent }
}

/// What one measured window saw (reset by `BenchLoop.resetCounters`).
struct Counters {
    var framesIn = 0
    var bytesIn = 0
    var reads = 0
    /// Frames carrying the current step's timestamp marker, at non-senders.
    var deliveries = 0
    /// Marked frames from an earlier step (arrived after its drain window).
    var stale = 0
    /// Marked frames that came back to their own sender (the lws mirror echoes).
    var echoes = 0
    /// Frames that are neither responses nor marked (e.g. on-peer-join).
    var otherFrames = 0
    /// Of `otherFrames`: notifications of `BenchLoop.watchedMethod`, their bytes and arrival times.
    var watched = 0
    var watchedBytes = 0
    var watchedArrivalsNs: [UInt64] = []
    var responsesOK = 0
    var responsesError = 0
    var errorCodes: [Int: Int] = [:]
    var firstDeliveryNs: UInt64 = 0
    var lastDeliveryNs: UInt64 = 0
}

/// The load tool's own client loop, built for the receive hot path.
///
/// libwebsockets runs the event loop (connects, poll, writability) on the
/// calling thread, but every connection is an lws **RAW** client socket:
/// roombench does the HTTP upgrade and the WebSocket framing itself, so a
/// read of up to 256 KiB (`pt_serv_buf_size`) holding hundreds of frames is
/// parsed in one pass — per frame, only the header and the first bytes of
/// the payload are looked at (a JSON-RPC response's id, or the
/// `~T<digits>` timestamp marker found with `memchr`). lws' own WebSocket
/// client parser goes byte by byte through a state machine and, measured,
/// cost ~1.5 µs per 300-byte frame: it capped a one-core client at about
/// 500k deliveries/s, below the figures to be measured.
///
/// The lws callback is the top-level C function `benchLWSCallback` below;
/// it finds the loop through the context user pointer and the connection
/// through the wsi's opaque user data (its index + 1).
final class BenchLoop {
    private(set) var context: OpaquePointer?
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let protocolName: UnsafeMutablePointer<CChar>
    private let rawMethod: UnsafeMutablePointer<CChar>
    private let ticker = Ticker()
    private var ev: LibEV?
    private var evLoop: OpaquePointer?
    private let foreignLoops = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 1)
    /// Which event loop carries the connections (reported in the results).
    private(set) var eventLoop = "lws poll()"
    private var cStrings: [String: UnsafeMutablePointer<CChar>] = [:]

    /// Every connection ever made on this loop, by index.
    private(set) var conns: [BenchConn] = []

    var counters = Counters()
    var latency = Histogram()
    /// Marker step tag that counts as a delivery.
    var step = 0
    /// NATS mode: every connection talks to nats-server over WebSocket. Frame
    /// payloads are one byte stream (nats-server cuts frames anywhere), parsed
    /// as NATS protocol lines: `MSG` payloads are deliveries, `PONG` answers
    /// `onResponse` with id 0, a server `PING` is answered with `PONG`.
    var nats = false
    /// The subject the fan-out publishes to and subscribes on in NATS mode.
    var natsSubject = "room.x"
    /// The last `-ERR` line nats-server sent.
    var natsLastError = ""
    /// Close codes seen (server close frames; 1006 for drops), over the whole run.
    var closeCodes: [Int: Int] = [:]
    var connectErrors = 0
    var lastConnectError = ""
    private(set) var connecting = 0
    private(set) var openCount = 0

    /// Called about every millisecond on the loop thread while set.
    var onTick: ((UInt64) -> Void)? {
        didSet { ticker.fast.store(onTick != nil, ordering: .relaxed) }
    }
    /// A JSON-RPC response arrived: (connection, id, error code or nil).
    var onResponse: ((BenchConn, Int, Int?) -> Void)?
    /// Called before `onResponse` with the response's text (at most its first `headBytes`), when set.
    var onResponseText: ((BenchConn, Int, UnsafeBufferPointer<UInt8>) -> Void)?
    /// A notification method to count separately (e.g. `active-speakers`):
    /// roomd writes `{"jsonrpc":"2.0","method":"NAME"` first.
    var watchedMethod: String? {
        didSet { watchedPrefix = watchedMethod.map { Array(#"{"jsonrpc":"2.0","method":"\#($0)""#.utf8) } }
    }
    private var watchedPrefix: [UInt8]?

    /// Size of one read (lws reads raw sockets into its per-thread buffer).
    static let readBufferSize = 256 * 1024
    /// Bytes of a message's payload kept for parsing when it spans reads.
    static let headBytes = 4096

    /// Set by `offerDeflate()`: the upgrade offers permessage-deflate, and compressed frames are inflated.
    private(set) var inflater: FrameInflater?

    /// Offers permessage-deflate on every connection made from now on.
    func offerDeflate() { inflater = FrameInflater() }

    init() throws {
        protocolName = strdup("roombench")!
        rawMethod = strdup("RAW")!
        protocols = .allocate(capacity: 2)
        var proto = lws_protocols()
        proto.name = UnsafePointer(protocolName)
        proto.callback = benchLWSCallback
        proto.per_session_data_size = 0
        proto.rx_buffer_size = Self.readBufferSize
        protocols.initialize(to: proto)
        (protocols + 1).initialize(to: cws_protocol_list_term())

        lws_set_log_level(Int32(LLL_ERR), nil)
        var info = lws_context_creation_info()
        info.port = CONTEXT_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protocols)
        info.gid = -1
        info.uid = -1
        info.options = 0
        // libev (epoll) instead of lws' built-in poll(): poll() walks every
        // socket on every wake-up, which with 10,000 connections was most of
        // the tool's CPU. lws drives libev through its evlib plugin on a
        // loop we own ("foreign loop"), which `run` turns once per round.
        if ProcessInfo.processInfo.environment["ROOMBENCH_POLL"] != "1", let ev = LibEV.load(),
            let evLoop = ev.loopNew(0)
        {
            self.ev = ev
            self.evLoop = evLoop
            foreignLoops.pointee = UnsafeMutableRawPointer(evLoop)
            info.options |= UInt64(LWS_SERVER_OPTION_LIBEV)
            info.foreign_loops = foreignLoops
        }
        info.pt_serv_buf_size = UInt32(Self.readBufferSize)
        info.timeout_secs = 30
        info.connect_timeout_secs = 10
        info.user = Unmanaged.passUnretained(self).toOpaque()
        context = lws_create_context(&info)
        if context == nil, let ev, let evLoop {  // e.g. lws' libev plugin missing: plain poll()
            ev.loopDestroy(evLoop)
            self.ev = nil
            self.evLoop = nil
            info.options &= ~UInt64(LWS_SERVER_OPTION_LIBEV)
            info.foreign_loops = nil
            context = lws_create_context(&info)
        }
        guard let context else { throw BenchError("cannot create the lws client context") }
        if let ev, let evLoop {
            eventLoop = ev.backend(evLoop) == 4 ? "libev/epoll" : "libev/backend \(ev.backend(evLoop))"
        }
        ticker.start(context)
    }

    deinit {
        destroy()
        protocols.deinitialize(count: 2)
        protocols.deallocate()
        free(protocolName)
        free(rawMethod)
        foreignLoops.deallocate()
        for string in cStrings.values { free(string) }
    }

    /// Drops every connection at once (lws_context_destroy) and ends the loop.
    func destroy() {
        guard let context else { return }
        ticker.stop()
        lws_context_destroy(context)
        if let ev, let evLoop {
            _ = ev.run(evLoop, 1)  // EVRUN_NOWAIT: let lws finish closing
            ev.loopDestroy(evLoop)
            self.evLoop = nil
        }
        self.context = nil
        for conn in conns where conn.phase != .closed { conn.phase = .closed }
    }

    private func cString(_ string: String) -> UnsafeMutablePointer<CChar> {
        if let existing = cStrings[string] { return existing }
        let made = strdup(string)!
        cStrings[string] = made
        return made
    }

    // MARK: - Connections

    func makeConns(_ count: Int) -> [BenchConn] {
        let made = (0..<count).map { BenchConn(index: conns.count + $0) }
        conns.append(contentsOf: made)
        return made
    }

    /// Starts connecting `conn`; it ends up `.open` (upgrade done) or `.closed`.
    func connect(_ conn: BenchConn, to endpoint: Endpoint, path: String? = nil) {
        guard let context, conn.phase == .idle else { return }
        conn.phase = .connecting
        connecting += 1
        var request =
            "GET \(path ?? endpoint.path) HTTP/1.1\r\nHost: \(endpoint.host):\(endpoint.port)\r\n"
            + "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Key: cm9vbWJlbmNoLWtleS0xMg==\r\n"
        if let subprotocol = endpoint.subprotocol { request += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
        if inflater != nil { request += "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n" }
        request += "\r\n"
        conn.request = Array(request.utf8)

        var info = lws_client_connect_info()
        info.context = context
        info.address = UnsafePointer(cString(endpoint.host))
        info.port = Int32(endpoint.port)
        info.ssl_connection = 0
        info.method = UnsafePointer(rawMethod)
        info.local_protocol_name = UnsafePointer(protocolName)
        info.opaque_user_data = UnsafeMutableRawPointer(bitPattern: conn.index + 1)
        let wsi = lws_client_connect_via_info(&info)
        if conn.phase == .connecting {
            if let wsi {
                conn.wsi = wsi
            } else {
                connectFailed(conn, "lws_client_connect_via_info failed")
            }
        }
    }

    /// Connects `list` with at most `window` handshakes in flight. Returns
    /// (opened, failed, seconds).
    /// `endpointFor` picks another endpoint for some connections (fan-out over several servers).
    func connectAll(
        _ list: [BenchConn],
        to endpoint: Endpoint,
        window: Int = 256,
        timeout: Double,
        path: ((BenchConn) -> String)? = nil,
        endpointFor: ((BenchConn) -> Endpoint)? = nil
    ) -> (Int, Int, Double) {
        let start = monoNanos()
        let deadline = start + UInt64(timeout * 1e9)
        var next = 0
        run(until: deadline) {
            while next < list.count, self.connecting < window {
                self.connect(list[next], to: endpointFor?(list[next]) ?? endpoint, path: path?(list[next]))
                next += 1
            }
            return next < list.count || self.connecting > 0
        }
        let opened = list.filter { $0.phase == .open }.count
        return (opened, list.count - opened, Double(monoNanos() - start) / 1e9)
    }

    /// Queues one masked text message on `conn`.
    func send(_ conn: BenchConn, _ text: [UInt8]) {
        guard conn.phase == .open else { return }
        appendFrame(to: &conn.outgoing, opcode: 0x1, payload: text)
        if let wsi = conn.wsi { lws_callback_on_writable(wsi) }
    }

    func send(_ conn: BenchConn, _ text: String) { send(conn, Array(text.utf8)) }

    /// A client frame: FIN + opcode, the mask bit and key, the masked payload.
    private func appendFrame(to out: inout [UInt8], opcode: UInt8, payload: some Collection<UInt8>) {
        let count = payload.count
        out.append(0x80 | opcode)
        if count < 126 {
            out.append(0x80 | UInt8(count))
        } else if count <= 0xFFFF {
            out.append(0x80 | 126)
            out.append(UInt8(count >> 8))
            out.append(UInt8(count & 0xFF))
        } else {
            out.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((count >> shift) & 0xFF)) }
        }
        let mask: [UInt8] = [0x5A, 0x17, 0xC3, 0x8E]
        out.append(contentsOf: mask)
        for (i, byte) in payload.enumerated() { out.append(byte ^ mask[i & 3]) }
    }

    // MARK: - Running

    /// Services the loop until `condition` is false (checked after every
    /// service round) or the deadline passes. Returns true if the condition ended it.
    @discardableResult
    func run(until deadline: UInt64, while condition: () -> Bool) -> Bool {
        guard let context, abortReason == nil else { return false }
        while condition() {
            let now = monoNanos()
            if now >= deadline { return false }
            if let watchdog, now >= nextWatchdogNs {
                nextWatchdogNs = now + 250_000_000
                if let reason = watchdog() {
                    abortReason = reason
                    return false
                }
            }
            if let onTick, now >= nextTickNs {
                nextTickNs = now + 1_000_000
                onTick(now)
            }
            if let ev, let evLoop {
                _ = ev.run(evLoop, 2)  // EVRUN_ONCE: wait for events, handle them, return
            } else if lws_service(context, 0) < 0 {
                return false
            }
        }
        return true
    }

    private var nextTickNs: UInt64 = 0
    /// When the current read arrived: the arrival time of every delivery in it.
    /// One clock read per read, not per delivery (clock_gettime per delivery was
    /// 14 % of roombench's CPU at 5M deliveries/s); a read of up to 256 KiB is
    /// parsed in tens of µs, far below the latencies measured.
    private var readNowNs: UInt64 = 0
    private var nextWatchdogNs: UInt64 = 0

    /// Checked every 250 ms while running: a non-nil answer stops every run
    /// from then on (e.g. the server's RSS went over a safety limit).
    var watchdog: (() -> String?)?
    private(set) var abortReason: String?

    /// Services the loop for `seconds`.
    func run(for seconds: Double) {
        let deadline = monoNanos() + UInt64(seconds * 1e9)
        run(until: deadline) { true }
    }

    /// Runs until no frame has arrived for `quiet` seconds (or `timeout` passed).
    /// Returns true if it went quiet.
    @discardableResult
    func runUntilQuiet(quiet: Double, timeout: Double) -> Bool {
        let deadline = monoNanos() + UInt64(timeout * 1e9)
        var lastFrames = counters.framesIn
        var lastChange = monoNanos()
        let quietNs = UInt64(quiet * 1e9)
        return run(until: deadline) {
            let now = monoNanos()
            if counters.framesIn != lastFrames {
                lastFrames = counters.framesIn
                lastChange = now
            }
            return now - lastChange < quietNs
        }
    }

    func resetCounters() {
        counters = Counters()
        latency.reset()
    }

    /// Counts `method`'s pushes afresh: the counters, and at each of `conns`
    /// how many came and the shortest gap between two (the coalescing rules).
    func watch(_ method: String, on conns: [BenchConn]) {
        watchedMethod = method
        resetCounters()
        for conn in conns {
            conn.watchedIn = 0
            conn.watchedMinGapNs = .max
        }
    }

    // MARK: - lws events (loop thread)

    private func connectFailed(_ conn: BenchConn, _ why: String) {
        if conn.phase == .connecting { connecting -= 1 }
        conn.phase = .closed
        conn.wsi = nil
        connectErrors += 1
        lastConnectError = why
    }

    private func opened(_ conn: BenchConn) {
        if conn.phase == .connecting { connecting -= 1 }
        conn.phase = .open
        openCount += 1
        conn.handshake = []
        if conn.queuedBytes > 0, let wsi = conn.wsi { lws_callback_on_writable(wsi) }
    }

    fileprivate func handle(
        _ wsi: OpaquePointer,
        _ reason: lws_callback_reasons,
        _ input: UnsafeMutableRawPointer?,
        _ length: Int
    ) -> Int32 {
        guard let raw = lws_get_opaque_user_data(wsi) else { return 0 }
        let index = Int(bitPattern: raw) - 1
        guard index >= 0, index < conns.count else { return 0 }
        let conn = conns[index]

        switch reason {
        case LWS_CALLBACK_RAW_RX:
            guard let input, length > 0 else { return 0 }
            readNowNs = monoNanos()
            counters.reads += 1
            counters.bytesIn += length
            let bytes = UnsafeRawBufferPointer(start: input, count: length)
            if conn.phase == .connecting { return upgradeResponse(conn, wsi, bytes) }
            if nats {
                consumeNATS(conn, wsi, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), length)
            } else {
                consume(conn, wsi, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), length)
            }
            return 0

        case LWS_CALLBACK_RAW_WRITEABLE:
            return writeable(conn, wsi)

        case LWS_CALLBACK_RAW_CONNECTED:
            conn.wsi = wsi
            lws_callback_on_writable(wsi)  // sends the upgrade request
            return 0

        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            var why = "connection error"
            if let input, length > 0 {
                why = String(decoding: UnsafeRawBufferPointer(start: input, count: length), as: UTF8.self)
            } else if let input {
                why = String(cString: input.assumingMemoryBound(to: CChar.self))
            }
            if conn.phase == .connecting { connectFailed(conn, why) }
            return 0

        case LWS_CALLBACK_RAW_CLOSE, LWS_CALLBACK_WSI_DESTROY:
            if conn.phase == .open {
                openCount -= 1
                let code = conn.closeCode == 0 ? 1006 : conn.closeCode
                conn.closeCode = code
                closeCodes[code, default: 0] += 1
            } else if conn.phase == .connecting {
                connectFailed(conn, "closed during the WebSocket handshake")
            }
            conn.phase = .closed
            conn.wsi = nil
            return 0

        default:
            return 0
        }
    }

    /// Bytes of the HTTP upgrade response (and maybe the first frames after it).
    private func upgradeResponse(_ conn: BenchConn, _ wsi: OpaquePointer, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        conn.handshake.append(contentsOf: bytes)
        let blank: [UInt8] = [13, 10, 13, 10]
        guard let end = conn.handshake.firstRange(of: blank)?.upperBound else {
            if conn.handshake.count > 16384 {
                connectFailed(conn, "no end of the upgrade response")
                return -1
            }
            return 0
        }
        let status = String(decoding: conn.handshake.prefix(12), as: UTF8.self)
        guard status == "HTTP/1.1 101" else {
            let line = String(decoding: conn.handshake.prefix { $0 != 13 }, as: UTF8.self)
            connectFailed(conn, "upgrade refused: \(line)")
            return -1
        }
        let rest = Array(conn.handshake[end...])
        opened(conn)
        if !rest.isEmpty {
            rest.withUnsafeBufferPointer {
                if nats {
                    consumeNATS(conn, wsi, $0.baseAddress!, $0.count)
                } else {
                    consume(conn, wsi, $0.baseAddress!, $0.count)
                }
            }
        }
        return 0
    }

    /// Splits a read into frames. A frame complete in the read is parsed in
    /// place; one that continues in a later read has its start (header and up
    /// to `headBytes` of payload) kept in `carry`, and the rest is skipped.
    private func consume(_ conn: BenchConn, _ wsi: OpaquePointer, _ p: UnsafePointer<UInt8>, _ length: Int) {
        var pos = 0
        while pos < length {
            if conn.skip > 0 {
                let n = min(conn.skip, length - pos)
                conn.skip -= n
                pos += n
                continue
            }
            if !conn.carry.isEmpty {
                // Complete the kept start of a frame, as far as needed.
                var need = Self.bytesNeeded(conn.carry)
                while conn.carry.count < need, pos < length {
                    let take = min(need - conn.carry.count, length - pos)
                    conn.carry.append(contentsOf: UnsafeBufferPointer(start: p + pos, count: take))
                    pos += take
                    need = Self.bytesNeeded(conn.carry)
                }
                if conn.carry.count < need { return }
                let carried = conn.carry
                conn.carry.removeAll(keepingCapacity: true)
                carried.withUnsafeBufferPointer { buffer in
                    let header = Self.header(buffer.baseAddress!, buffer.count)!
                    let have = buffer.count - header.size
                    conn.lastFramePayload = header.payload
                    frame(conn, wsi, header, buffer.baseAddress! + header.size, have)
                    conn.skip = header.payload - have
                }
                continue
            }
            guard let header = Self.header(p + pos, length - pos) else {
                conn.carry.append(contentsOf: UnsafeBufferPointer(start: p + pos, count: length - pos))
                return
            }
            let available = length - pos - header.size
            conn.lastFramePayload = header.payload
            if available >= header.payload {
                frame(conn, wsi, header, p + pos + header.size, header.payload)
                pos += header.size + header.payload
            } else if available >= Self.headBytes, !header.deflated {
                frame(conn, wsi, header, p + pos + header.size, Self.headBytes)
                conn.skip = header.payload - available
                pos = length
            } else {
                conn.carry.append(contentsOf: UnsafeBufferPointer(start: p + pos, count: length - pos))
                return
            }
        }
    }

    struct FrameHeader {
        var opcode: UInt8
        var size: Int
        var payload: Int
        /// RSV1: a permessage-deflate payload.
        var deflated = false
    }

    /// The frame header at `p` if all of it is there (server frames are unmasked).
    @inline(__always)
    private static func header(_ p: UnsafePointer<UInt8>, _ count: Int) -> FrameHeader? {
        guard count >= 2 else { return nil }
        let opcode = p[0] & 0x0F
        let masked = p[1] & 0x80 != 0
        let short = Int(p[1] & 0x7F)
        var size = 2
        var payload = short
        if short == 126 {
            guard count >= 4 else { return nil }
            payload = Int(p[2]) << 8 | Int(p[3])
            size = 4
        } else if short == 127 {
            guard count >= 10 else { return nil }
            payload = 0
            for k in 2..<10 { payload = payload << 8 | Int(p[k]) }
            size = 10
        }
        if masked { size += 4 }  // never from a server; tolerated
        guard count >= size else { return nil }
        return FrameHeader(opcode: opcode, size: size, payload: payload, deflated: p[0] & 0x40 != 0)
    }

    /// How many bytes from a frame's start are needed to parse it: the
    /// header, then the payload up to `headBytes`.
    private static func bytesNeeded(_ carry: [UInt8]) -> Int {
        carry.withUnsafeBufferPointer { buffer in
            let p = buffer.baseAddress!
            guard buffer.count >= 2 else { return 2 }
            let short = Int(p[1] & 0x7F)
            let extra = (short == 126 ? 2 : short == 127 ? 8 : 0) + (p[1] & 0x80 != 0 ? 4 : 0)
            guard let header = header(p, buffer.count) else { return 2 + extra }
            // A compressed payload is inflated whole (`FrameInflater`).
            return header.size + (header.deflated ? header.payload : min(header.payload, headBytes))
        }
    }

    /// One frame (or the first `headBytes` of its payload).
    @inline(__always)
    private func frame(
        _ conn: BenchConn,
        _ wsi: OpaquePointer,
        _ header: FrameHeader,
        _ p: UnsafePointer<UInt8>,
        _ count: Int
    ) {
        switch header.opcode {
        case 0x1 where header.deflated:
            guard let inflater, count == header.payload, let text = inflater.inflate(p, count) else {
                counters.otherFrames += 1  // a head only (over headBytes), or not inflatable
                return
            }
            text.withUnsafeBufferPointer { message(conn, $0.baseAddress!, $0.count) }
        case 0x1, 0x2:
            message(conn, p, count)
        case 0x0:
            break  // continuation: its message was counted with its first frame
        case 0x8:
            conn.closeCode = count >= 2 ? Int(p[0]) << 8 | Int(p[1]) : 1005
            // Echo the code, then close once it is written.
            appendFrame(to: &conn.outgoing, opcode: 0x8, payload: UnsafeBufferPointer(start: p, count: min(count, 2)))
            conn.closeAfterFlush = true
            lws_callback_on_writable(wsi)
        case 0x9:
            appendFrame(to: &conn.outgoing, opcode: 0xA, payload: UnsafeBufferPointer(start: p, count: count))
            lws_callback_on_writable(wsi)
        default:
            break
        }
    }

    private static let responsePrefix = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
    private static let errorKey = Array(#","error":{"code":"#.utf8)

    /// One text message (or its head).
    @inline(__always)
    private func message(_ conn: BenchConn, _ p: UnsafePointer<UInt8>, _ count: Int) {
        conn.framesIn += 1
        counters.framesIn += 1
        guard count > 0 else {
            counters.otherFrames += 1
            return
        }
        // A JSON-RPC response: roomd writes "jsonrpc" then "id" first.
        let prefix = Self.responsePrefix
        if count > prefix.count, p[0] == UInt8(ascii: "{"), p[2] == UInt8(ascii: "j"),
            memcmp(p, prefix, prefix.count) == 0
        {
            var i = prefix.count
            var id = 0
            while i < count, p[i] >= 48, p[i] <= 57 {
                id = id * 10 + Int(p[i] - 48)
                i += 1
            }
            var errorCode: Int?
            let key = Self.errorKey
            if i + key.count < count, memcmp(p + i, key, key.count) == 0 {
                var j = i + key.count
                var negative = false
                if j < count, p[j] == UInt8(ascii: "-") {
                    negative = true
                    j += 1
                }
                var code = 0
                while j < count, p[j] >= 48, p[j] <= 57 {
                    code = code * 10 + Int(p[j] - 48)
                    j += 1
                }
                errorCode = negative ? -code : code
                counters.responsesError += 1
                counters.errorCodes[errorCode!, default: 0] += 1
            } else {
                counters.responsesOK += 1
            }
            onResponseText?(conn, id, UnsafeBufferPointer(start: p, count: count))
            onResponse?(conn, id, errorCode)
            return
        }
        if marked(conn, p, count) { return }
        counters.otherFrames += 1
        if let watched = watchedPrefix, count >= watched.count, memcmp(p, watched, watched.count) == 0 {
            let now = monoNanos()
            if conn.watchedIn > 0 { conn.watchedMinGapNs = min(conn.watchedMinGapNs, now - conn.watchedLastNs) }
            conn.watchedLastNs = now
            conn.watchedIn += 1
            counters.watched += 1
            counters.watchedBytes += count
            counters.watchedArrivalsNs.append(now)
        }
    }

    /// A timestamped message: ~T + 16 digits (µs, CLOCK_MONOTONIC) + 2 digits
    /// (step) + 7 digits (the sending connection's index). Counted (delivery,
    /// echo or stale) if the text carries the marker; false if it does not.
    @inline(__always)
    private func marked(_ conn: BenchConn, _ p: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        if let at = Self.markerOffset(p, count), at + Marker.digits <= count {
            var stamp: UInt64 = 0
            for k in 0..<16 { stamp = stamp &* 10 &+ UInt64(p[at + k] &- 48) }
            let tag = Int(p[at + 16] &- 48) * 10 + Int(p[at + 17] &- 48)
            var from = 0
            for k in 18..<25 { from = from &* 10 &+ Int(p[at + k] &- 48) }
            if from == conn.index {
                counters.echoes += 1
            } else if tag == step {
                let now = readNowNs
                let nowMicros = now / 1000
                latency.record(nowMicros > stamp ? nowMicros - stamp : 0)
                counters.deliveries += 1
                if counters.firstDeliveryNs == 0 { counters.firstDeliveryNs = now }
                counters.lastDeliveryNs = now
            } else {
                counters.stale += 1
            }
            return true
        }
        return false
    }

    // MARK: - NATS over WebSocket

    /// Splits a read into WebSocket frames; data frame payloads go, as one
    /// byte stream, to `natsStream` (a NATS message may span frames and reads).
    private func consumeNATS(_ conn: BenchConn, _ wsi: OpaquePointer, _ p: UnsafePointer<UInt8>, _ length: Int) {
        var pos = 0
        while pos < length {
            if conn.wsLeft > 0 {
                let n = min(conn.wsLeft, length - pos)
                if conn.wsOpcode & 0x8 == 0 {
                    natsStream(conn, p + pos, n)
                } else {
                    conn.control.append(contentsOf: UnsafeBufferPointer(start: p + pos, count: n))
                }
                conn.wsLeft -= n
                pos += n
                if conn.wsLeft == 0, conn.wsOpcode & 0x8 != 0 { controlFrame(conn, wsi) }
                continue
            }
            // A frame header, maybe split across reads (at most 14 bytes: kept in `carry`).
            let parsed: FrameHeader
            if conn.carry.isEmpty, let header = Self.header(p + pos, length - pos) {
                parsed = header
                pos += header.size
            } else {
                conn.carry.append(p[pos])
                pos += 1
                guard let header = conn.carry.withUnsafeBufferPointer({ Self.header($0.baseAddress!, $0.count) }) else {
                    continue
                }
                parsed = header
                conn.carry.removeAll(keepingCapacity: true)
            }
            conn.wsOpcode = parsed.opcode
            conn.wsLeft = parsed.payload
            if parsed.payload == 0, parsed.opcode & 0x8 != 0 { controlFrame(conn, wsi) }
        }
    }

    private func controlFrame(_ conn: BenchConn, _ wsi: OpaquePointer) {
        let payload = conn.control
        conn.control.removeAll(keepingCapacity: true)
        payload.withUnsafeBufferPointer { buffer in
            let dummy: [UInt8] = [0]
            dummy.withUnsafeBufferPointer { fallback in
                let header = FrameHeader(opcode: conn.wsOpcode, size: 0, payload: buffer.count)
                frame(conn, wsi, header, buffer.baseAddress ?? fallback.baseAddress!, buffer.count)
            }
        }
    }

    /// NATS protocol bytes: parsed in place when nothing is pending, else appended to the pending tail.
    private func natsStream(_ conn: BenchConn, _ p: UnsafePointer<UInt8>, _ count: Int) {
        if conn.natsPending.isEmpty {
            let used = natsParse(conn, p, count)
            if used < count {
                conn.natsPending.append(contentsOf: UnsafeBufferPointer(start: p + used, count: count - used))
            }
            return
        }
        conn.natsPending.append(contentsOf: UnsafeBufferPointer(start: p, count: count))
        let used = conn.natsPending.withUnsafeBufferPointer { natsParse(conn, $0.baseAddress!, $0.count) }
        if used == conn.natsPending.count {
            conn.natsPending.removeAll(keepingCapacity: true)
        } else if used > 0 {
            conn.natsPending.removeFirst(used)
        }
    }

    private static let pong = Array("PONG\r\n".utf8)

    /// Parses whole NATS protocol messages from `p`; returns the bytes used
    /// (an incomplete message at the end is left for the next bytes).
    private func natsParse(_ conn: BenchConn, _ p: UnsafePointer<UInt8>, _ count: Int) -> Int {
        var pos = 0
        while pos < count {
            guard let hit = memchr(p + pos, 10, count - pos) else { return pos }  // '\n'
            let newline = UnsafeRawPointer(p).distance(to: UnsafeRawPointer(hit))
            let first = p[pos]
            if first == UInt8(ascii: "M") {
                // MSG <subject> <sid> [reply-to] <#bytes>\r\n<payload>\r\n
                var end = newline
                if end > pos, p[end - 1] == 13 { end -= 1 }
                var digitsStart = end
                while digitsStart > pos, p[digitsStart - 1] >= 48, p[digitsStart - 1] <= 57 { digitsStart -= 1 }
                var size = 0
                for k in digitsStart..<end { size = size * 10 + Int(p[k] - 48) }
                let payload = newline + 1
                guard payload + size + 2 <= count else { return pos }
                conn.framesIn += 1
                counters.framesIn += 1
                if !marked(conn, p + payload, size) { counters.otherFrames += 1 }
                pos = payload + size + 2
                continue
            }
            conn.framesIn += 1
            counters.framesIn += 1
            if first == UInt8(ascii: "P"), newline - pos >= 4, p[pos + 1] == UInt8(ascii: "I") {  // PING
                if let wsi = conn.wsi {
                    appendFrame(to: &conn.outgoing, opcode: 0x1, payload: Self.pong)
                    lws_callback_on_writable(wsi)
                }
            } else if first == UInt8(ascii: "P"), newline - pos >= 4, p[pos + 1] == UInt8(ascii: "O") {  // PONG
                counters.responsesOK += 1
                onResponse?(conn, 0, nil)
            } else if first == UInt8(ascii: "-") {  // -ERR 'reason'
                counters.responsesError += 1
                natsLastError = String(
                    decoding: UnsafeBufferPointer(start: p + pos, count: newline - pos),
                    as: UTF8.self
                )
                .trimmingCharacters(in: .whitespacesAndNewlines)
                onResponse?(conn, 0, -1)
            } else {
                counters.otherFrames += 1  // INFO, +OK
            }
            pos = newline + 1
        }
        return pos
    }

    /// Offset just past the first `~T` in the message, if any.
    @inline(__always)
    private static func markerOffset(_ p: UnsafePointer<UInt8>, _ count: Int) -> Int? {
        var from = 0
        while from < count - 1 {
            guard let hit = memchr(p + from, 0x7E, count - from - 1) else { return nil }  // '~'
            let at = UnsafeRawPointer(p).distance(to: UnsafeRawPointer(hit))
            if p[at + 1] == UInt8(ascii: "T") { return at + 2 }
            from = at + 1
        }
        return nil
    }

    /// Writes the upgrade request or the queued frames, as much as the socket
    /// takes now; the rest waits for the next writeable callback. roombench
    /// writes to the socket itself rather than through `lws_write`: lws keeps
    /// what the socket does not take (`buflist_out`) and, on a raw socket,
    /// reads nothing more until that is written ("pending truncated sends have
    /// uber priority", ops-raw-skt.c). A sender that roomd's flow control had
    /// stopped reading then stopped reading its own answers for seconds, and
    /// roomd rightly closed it as a slow consumer (4008). A browser's
    /// WebSocket reads and writes independently; so does roombench now.
    private func writeable(_ conn: BenchConn, _ wsi: OpaquePointer) -> Int32 {
        if conn.phase == .connecting {
            guard !conn.request.isEmpty else { return 0 }
            conn.outgoing = conn.request + conn.outgoing[conn.sent...]
            conn.sent = 0
            conn.request = []
        }
        let fd = lws_get_socket_fd(wsi)
        while conn.sent < conn.outgoing.count {
            let written = conn.outgoing.withUnsafeBytes { bytes in
                Glibc.send(
                    fd,
                    bytes.baseAddress! + conn.sent,
                    bytes.count - conn.sent,
                    Int32(MSG_DONTWAIT | MSG_NOSIGNAL)
                )
            }
            if written > 0 {
                conn.sent += written
            } else if written < 0, errno == EINTR {
                continue
            } else if written < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                break
            } else {
                return -1
            }
        }
        if conn.sent == conn.outgoing.count {
            conn.outgoing.removeAll(keepingCapacity: true)
            conn.sent = 0
            return conn.closeAfterFlush && conn.phase != .connecting ? -1 : 0
        }
        // Drop the written prefix once it is most of the buffer (amortised O(1) per byte).
        if conn.sent >= 64 * 1024, conn.sent * 2 >= conn.outgoing.count {
            conn.outgoing.removeFirst(conn.sent)
            conn.sent = 0
        }
        lws_callback_on_writable(wsi)
        return 0
    }
}

/// libev, loaded at run time (libwebsockets-dev depends on it; without it
/// roombench falls back to lws' poll() loop).
struct LibEV {
    typealias LoopNew = @convention(c) (UInt32) -> OpaquePointer?
    typealias Run = @convention(c) (OpaquePointer?, Int32) -> Int32
    typealias LoopDestroy = @convention(c) (OpaquePointer?) -> Void
    typealias Backend = @convention(c) (OpaquePointer?) -> UInt32

    let loopNew: LoopNew
    let run: Run
    let loopDestroy: LoopDestroy
    let backend: Backend

    static func load() -> LibEV? {
        guard let handle = dlopen("libev.so.4", RTLD_NOW | RTLD_GLOBAL),
            let loopNew = dlsym(handle, "ev_loop_new"), let run = dlsym(handle, "ev_run"),
            let destroy = dlsym(handle, "ev_loop_destroy"), let backend = dlsym(handle, "ev_backend")
        else { return nil }
        return LibEV(
            loopNew: unsafeBitCast(loopNew, to: LoopNew.self),
            run: unsafeBitCast(run, to: Run.self),
            loopDestroy: unsafeBitCast(destroy, to: LoopDestroy.self),
            backend: unsafeBitCast(backend, to: Backend.self)
        )
    }
}

/// A message that stops a scenario.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The lws protocol callback: a plain top-level C-convention function. The
/// loop is the context user; the connection is the wsi's opaque user data.
func benchLWSCallback(
    _ wsi: OpaquePointer?,
    _ reason: lws_callback_reasons,
    _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?,
    _ length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let raw = lws_context_user(context) else { return 0 }
    return Unmanaged<BenchLoop>.fromOpaque(raw).takeUnretainedValue().handle(wsi, reason, input, length)
}

/// Wakes the loop thread (`lws_cancel_service`, which is thread-safe) every
/// millisecond while ticks are wanted, else every 10 ms, so that `run`
/// checks its deadline and condition and sends on time. Not an lws_sul
/// timer: lws 4.1 rounds its poll timeout down to whole milliseconds, so a
/// 1 ms sul makes poll() spin with a zero timeout (measured: a full core).
final class Ticker: Sendable {
    let fast = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let running = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    func start(_ context: OpaquePointer) {
        guard !running.exchange(true, ordering: .relaxed) else { return }
        let address = Int(bitPattern: UnsafeRawPointer(context))
        let thread = Thread { [self] in
            let context = OpaquePointer(bitPattern: address)
            while !self.stopped.load(ordering: .relaxed) {
                usleep(self.fast.load(ordering: .relaxed) ? 1000 : 10_000)
                lws_cancel_service(context)
            }
            self.done.signal()
        }
        thread.name = "roombench-ticker"
        thread.start()
    }

    /// Stops the thread and waits for it (before the context is destroyed).
    func stop() {
        guard running.load(ordering: .relaxed), !stopped.exchange(true, ordering: .relaxed) else { return }
        done.wait()
    }
}

extension BenchLoop {
    /// One marked message: as is to a raw mirror server, as a `broadcast`
    /// call (with the connection's next call id) to roomd.
    func sendMessage(_ body: [UInt8], from conn: BenchConn, raw: Bool) {
        if nats {
            send(conn, Array("PUB \(natsSubject) \(body.count)\r\n".utf8) + body + [13, 10])
            return
        }
        if raw {
            send(conn, body)
            return
        }
        let id = conn.nextCallID
        conn.nextCallID += 1
        send(
            conn,
            Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"broadcast","params":{"info":{"message":""#.utf8)
                + body + Array(#""}}}"#.utf8)
        )
    }
}

/// Inflates permessage-deflate payloads (RFC 7692) for `roombench --deflate`:
/// roomd compresses each message from a fresh state (`server_no_context_takeover`),
/// so one raw inflate stream, reset per message, reads them all. Every recipient
/// of a push gets the same compressed bytes: the last `slots` payloads and their
/// texts are kept, found by a hash of the payload and checked byte for
/// byte, so a repeat costs a hash and a comparison, not an inflate. The receivers
/// read a push up to a few hundred pushes apart at the fan-out's rates (a 16-entry
/// cache missed most of them from 1,000 msg/s and the load tool's core filled).
final class FrameInflater {
    private static let slots = 4096
    private let stream: UnsafeMutablePointer<z_stream>
    private var inputs = [[UInt8]](repeating: [], count: slots)
    private var texts = [[UInt8]](repeating: [], count: slots)
    private var hashes = [UInt64](repeating: 0, count: slots)
    /// A payload's hash → its slot (the newest payload with that hash).
    private var index: [UInt64: Int] = [:]
    private var next = 0
    private var output = [UInt8](repeating: 0, count: 65_536)
    private(set) var inflated = 0

    init() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        precondition(cws_inflate_init(stream, 15) == Z_OK, "zlib: inflateInit2")
        index.reserveCapacity(Self.slots)
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    /// The payload's hash, 8 bytes at a time (a receiver's share of the load tool's core is small).
    @inline(__always)
    private static func hash(_ p: UnsafePointer<UInt8>, _ count: Int) -> UInt64 {
        let raw = UnsafeRawPointer(p)
        var hash = UInt64(count) &* 0x9E37_79B9_7F4A_7C15
        var offset = 0
        while offset + 8 <= count {
            hash = (hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            hash ^= hash >> 29
            offset += 8
        }
        while offset < count {
            hash = (hash ^ UInt64(p[offset])) &* 0x0000_0100_0000_01B3
            offset += 1
        }
        return hash
    }

    /// The text of a compressed payload of `count` bytes at `p`, or nil.
    func inflate(_ p: UnsafePointer<UInt8>, _ count: Int) -> [UInt8]? {
        let hash = Self.hash(p, count)
        if let slot = index[hash], inputs[slot].count == count,
            inputs[slot].withUnsafeBufferPointer({ memcmp(p, $0.baseAddress!, count) }) == 0
        {
            return texts[slot]
        }
        guard inflateReset(stream) == Z_OK else { return nil }
        var input = [UInt8](UnsafeBufferPointer(start: p, count: count))
        input += [0, 0, 0xFF, 0xFF]
        let produced: Int? = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { out in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: source.baseAddress)
                stream.pointee.avail_in = UInt32(source.count)
                stream.pointee.next_out = out.baseAddress
                stream.pointee.avail_out = UInt32(out.count)
                let status = CWebSockets.inflate(stream, Z_SYNC_FLUSH)
                // The text's first 64 KiB are enough (an answer's id, a push's marker).
                guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else { return nil }
                return out.count - Int(stream.pointee.avail_out)
            }
        }
        guard let produced else { return nil }
        inflated += 1
        if index[hashes[next]] == next { index[hashes[next]] = nil }  // the slot's old payload
        inputs[next] = Array(input.dropLast(4))
        texts[next] = Array(output[..<produced])
        hashes[next] = hash
        index[hash] = next
        defer { next = (next + 1) % Self.slots }
        return texts[next]
    }
}
