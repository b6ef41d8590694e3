import CWebSockets
import Foundation
import RoomCollections
import RoomWire
import Synchronization

/// One libwebsockets client context and the one thread that services it.
/// A loop carries any number of connections (thousands are fine; the
/// limit is the process's file descriptors).
///
/// Threading — who owns what:
/// - The loop thread (named "roomclient-lws") runs `lws_service` and is the
///   only thread that ever touches a `wsi`, calls `lws_write`,
///   `lws_callback_on_writable`, `lws_rx_flow_control`, `lws_client_connect_via_info`,
///   or reads/writes `wires` and the `Wire` objects in it.
/// - Any other thread talks to it only through `control` (a `Mutex`): it
///   appends a `Command` and calls `lws_cancel_service`, which is
///   thread-safe; the loop thread drains the commands in
///   `LWS_CALLBACK_EVENT_WAIT_CANCELLED`.
/// - Per-connection state that callers read (inbox, pending calls, close
///   code) lives in `ClientSession`, behind its own `Mutex`.
/// - `context`, `protocols` and the C strings are written once in `init`
///   before the thread starts and only read afterwards; the context is
///   destroyed on the loop thread when it stops.
///
/// `RoomClientLoop.shared` lives for the whole process. A loop made with
/// `init()` runs until `shutdown()` (the thread keeps it alive until then).
public final class RoomClientLoop: @unchecked Sendable {
    /// The process-wide loop, created on first use.
    public static let shared = RoomClientLoop()

    /// Largest incoming message reassembled (bigger ones close the connection with 1009).
    static let maxMessageBytes = 16 << 20
    static let protocolName = "roomclient"

    enum Command: Sendable {
        case connect(ClientSession, ConnectTarget)
        /// `bytes` starts with `CWS_PRE` bytes of headroom.
        case send(Int, [UInt8], binary: Bool)
        case close(Int, code: Int, reason: String)
        case abort(Int)
        case flow(Int, enabled: Bool)
    }

    struct Control: Sendable {
        var commands: [Command] = []
        var nextID = 0
        var stopRequested = false
    }

    // Written in init, read-only afterwards.
    private(set) var context: OpaquePointer?
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let protocolNameC: UnsafeMutablePointer<CChar>

    private let control = Mutex(Control())
    private let finished = DispatchSemaphore(value: 0)
    private var thread: Thread?

    // Loop thread only.
    private var wires: [Int: Wire] = [:]

    /// Starts a loop with its own thread; it runs until ``shutdown()``.
    public init() {
        protocolNameC = strdup(Self.protocolName)!
        protocols = .allocate(capacity: 2)
        var proto = lws_protocols()
        proto.name = UnsafePointer(protocolNameC)
        proto.callback = roomClientLWSCallback
        proto.per_session_data_size = 0
        proto.rx_buffer_size = 64 * 1024
        proto.tx_packet_size = 0
        protocols.initialize(to: proto)
        (protocols + 1).initialize(to: lws_protocols())  // all-zero terminator (= LWS_PROTOCOL_LIST_TERM)

        var info = lws_context_creation_info()
        info.port = CONTEXT_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protocols)
        info.gid = -1
        info.uid = -1
        info.options = 0
        info.user = Unmanaged.passUnretained(self).toOpaque()
        lws_set_log_level(Int32(LLL_ERR), nil)  // lws' notices would go to the app's stderr
        context = lws_create_context(&info)

        guard context != nil else {
            control.withLock { $0.stopRequested = true }
            finished.signal()
            return
        }
        let thread = Thread { [self] in self.run() }
        thread.name = "roomclient-lws"
        self.thread = thread
        thread.start()
    }

    deinit {
        // Only reached once the thread ended (it holds the loop) or if the
        // context could not be created.
        protocols.deinitialize(count: 2)
        protocols.deallocate()
        free(protocolNameC)
    }

    /// Stops the loop: every connection on it ends (their waiters see
    /// `.closed(code: 1006, ...)`) and later connects fail. Waits for the
    /// thread. Idempotent. Do not call it on `shared` if others still use it.
    public func shutdown() {
        control.withLock { control in
            if !control.stopRequested, let context { lws_cancel_service(context) }
            control.stopRequested = true
        }
        if let thread, Thread.current === thread { return }  // never block the loop on itself
        finished.wait()
        finished.signal()  // let other callers of shutdown() through too
    }

    // MARK: - Any thread

    func makeSessionID() -> Int {
        control.withLock { control in
            control.nextID += 1
            return control.nextID
        }
    }

    /// Queues a command for the loop thread and wakes it.
    func post(_ command: Command) {
        let accepted = control.withLock { control in
            guard !control.stopRequested, let context else { return false }
            control.commands.append(command)
            // A non-empty list means a wake-up is already pending and its
            // drain will take this command too. Under the lock, so it can
            // never race with lws_context_destroy.
            if control.commands.count == 1 { lws_cancel_service(context) }
            return true
        }
        if !accepted, case .connect(let session, _) = command {
            session.finish(code: 1006, reason: "", connectError: "the client loop is shut down")
        }
    }

    // MARK: - Loop thread

    private func run() {
        guard let context else { return }
        while !control.withLock({ $0.stopRequested }) {
            if lws_service(context, 0) < 0 { break }
        }
        let leftovers = control.withLock { control in
            control.stopRequested = true
            defer { control.commands.removeAll() }
            return control.commands
        }
        for case .connect(let session, _) in leftovers {
            session.finish(code: 1006, reason: "", connectError: "the client loop is shut down")
        }
        lws_context_destroy(context)
        let remaining = wires
        wires.removeAll()
        for wire in remaining.values {
            finish(wire, code: 1006, reason: "", connectError: "the client loop is shut down")
        }
        finished.signal()
    }

    private func drainCommands() {
        let commands = control.withLock { control in
            defer { control.commands.removeAll(keepingCapacity: true) }
            return control.commands
        }
        for command in commands { execute(command) }
    }

    private func execute(_ command: Command) {
        switch command {
        case .connect(let session, let target):
            connect(session, target)
        case .send(let id, let bytes, let binary):
            guard let wire = wires[id] else { return }
            wire.outgoing.append(Outgoing(bytes: bytes, binary: binary))
            if wire.established, let wsi = wire.wsi { lws_callback_on_writable(wsi) }
        case .close(let id, let code, let reason):
            guard let wire = wires[id] else { return }
            if wire.closeRequest == nil { wire.closeRequest = (code, reason) }
            if wire.established, let wsi = wire.wsi {
                lws_callback_on_writable(wsi)
            } else if let wsi = wire.wsi {
                lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
            }
        case .abort(let id):
            guard let wire = wires[id], let wsi = wire.wsi else { return }
            lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
        case .flow(let id, let enabled):
            guard let wire = wires[id] else { return }
            wire.rxPaused = !enabled
            if wire.established, let wsi = wire.wsi { lws_rx_flow_control(wsi, enabled ? 1 : 0) }
        }
    }

    private func connect(_ session: ClientSession, _ target: ConnectTarget) {
        let wire = Wire(session: session, target: target)
        wires[session.id] = wire
        var info = lws_client_connect_info()
        info.context = context
        info.address = UnsafePointer(wire.address)
        info.port = Int32(target.port)
        info.ssl_connection = 0
        info.path = UnsafePointer(wire.path)
        info.host = UnsafePointer(wire.hostHeader)
        info.origin = UnsafePointer(wire.origin)
        info.protocol = wire.protocolName.map { UnsafePointer($0) }
        info.local_protocol_name = UnsafePointer(protocolNameC)
        info.ietf_version_or_minus_one = -1
        info.opaque_user_data = UnsafeMutableRawPointer(bitPattern: session.id)
        let wsi = lws_client_connect_via_info(&info)
        guard wires[session.id] === wire else { return }  // failed synchronously, already reported
        if let wsi {
            wire.wsi = wsi
        } else {
            wires[session.id] = nil
            finish(wire, code: 1006, reason: "", connectError: "cannot connect to \(target.host):\(target.port)")
        }
    }

    private func finish(_ wire: Wire, code: Int, reason: String, connectError: String?) {
        wire.wsi = nil
        wire.session.finish(code: code, reason: reason, connectError: connectError)
    }

    private func wire(for wsi: OpaquePointer) -> Wire? {
        guard let raw = lws_get_opaque_user_data(wsi) else { return nil }
        return wires[Int(bitPattern: raw)]
    }

    /// Removes the connection of `wsi` from the registry, if it is still there.
    private func unregister(_ wsi: OpaquePointer) -> Wire? {
        guard let raw = lws_get_opaque_user_data(wsi) else { return nil }
        return wires.removeValue(forKey: Int(bitPattern: raw))
    }

    fileprivate func handle(
        _ wsi: OpaquePointer,
        _ reason: lws_callback_reasons,
        _ input: UnsafeMutableRawPointer?,
        _ length: Int
    ) -> Int32 {
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            drainCommands()
            return 0

        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            guard let wire = wire(for: wsi) else { return -1 }
            wire.wsi = wsi
            wire.established = true
            if !wire.session.markEstablished(), wire.closeRequest == nil {
                wire.closeRequest = (1000, "")
            }
            if wire.rxPaused { lws_rx_flow_control(wsi, 0) }
            if !wire.outgoing.isEmpty || wire.closeRequest != nil { lws_callback_on_writable(wsi) }
            return 0

        case LWS_CALLBACK_CLIENT_RECEIVE:
            guard let wire = wire(for: wsi) else { return -1 }
            receive(wire, wsi, input, length)
            return 0

        case LWS_CALLBACK_CLIENT_WRITEABLE:
            guard let wire = wire(for: wsi) else { return -1 }
            return writeable(wire, wsi)

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            guard let wire = wire(for: wsi) else { return 0 }
            if let input, length >= 2 {
                let bytes = UnsafeRawBufferPointer(start: input, count: length)
                var code = Int(bytes[0]) << 8 | Int(bytes[1])
                let reason = String(decoding: bytes[2...], as: UTF8.self)
                // lws 4.1's client parser rewrites a close code above 1011 to 1002
                // and keeps the text: roomd's drain closes 1012 "service restart".
                if code == 1002, reason == "service restart" { code = 1012 }
                wire.peerClose = (code, reason)
            } else {
                wire.peerClose = (1005, "")
            }
            return 0  // lws echoes the close frame and then closes

        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            guard let wire = unregister(wsi) else { return 0 }
            var why = "connection error"
            if let input {
                let text =
                    length > 0
                    ? String(decoding: UnsafeRawBufferPointer(start: input, count: length), as: UTF8.self)
                    : String(cString: input.assumingMemoryBound(to: CChar.self))
                if !text.isEmpty { why = text }
            }
            finish(wire, code: 1006, reason: "", connectError: "\(wire.target.host):\(wire.target.port): \(why)")
            return 0

        case LWS_CALLBACK_CLIENT_CLOSED, LWS_CALLBACK_WSI_DESTROY:
            guard let wire = unregister(wsi) else { return 0 }
            if !wire.established {
                finish(wire, code: 1006, reason: "", connectError: "connection closed during the handshake")
            } else if let peer = wire.peerClose {
                finish(wire, code: peer.code, reason: peer.reason, connectError: nil)
            } else if wire.closeSent, let mine = wire.closeRequest {
                finish(wire, code: mine.code, reason: mine.reason, connectError: nil)
            } else {
                finish(wire, code: 1006, reason: "", connectError: nil)
            }
            return 0

        default:
            return 0
        }
    }

    private func receive(_ wire: Wire, _ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) {
        if !wire.inMessage {
            wire.inMessage = true
            wire.rxBinary = lws_frame_is_binary(wsi) != 0
        }
        if !wire.rxOverflow {
            if wire.rx.count + length > Self.maxMessageBytes {
                wire.rxOverflow = true
                wire.rx = []
                if wire.closeRequest == nil { wire.closeRequest = (1009, "message too big for RoomClient") }
                lws_callback_on_writable(wsi)
            } else if let input, length > 0 {
                wire.rx.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
            }
        }
        guard lws_is_final_fragment(wsi) != 0, lws_remaining_packet_payload(wsi) == 0 else { return }
        wire.inMessage = false
        if wire.rxOverflow {
            wire.rxOverflow = false
            return
        }
        let bytes = wire.rx
        wire.rx = []
        let message: JSON
        do {
            message = try JSON.parse(bytes)
        } catch {
            message = .string(String(decoding: bytes, as: UTF8.self))
        }
        wire.session.deliver(message)
    }

    private func writeable(_ wire: Wire, _ wsi: OpaquePointer) -> Int32 {
        if var message = wire.outgoing.popFirst() {
            let pre = Int(CWS_PRE)
            let count = message.bytes.count - pre
            let written = message.bytes.withUnsafeMutableBufferPointer { buffer in
                lws_write(wsi, buffer.baseAddress! + pre, count, message.binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT)
            }
            if written < 0 { return -1 }
            if !wire.outgoing.isEmpty || wire.closeRequest != nil { lws_callback_on_writable(wsi) }
            return 0
        }
        if let (code, reason) = wire.closeRequest {
            var payload = Array(reason.utf8.prefix(123))
            let count = payload.count
            payload.append(0)
            payload.withUnsafeMutableBufferPointer { buffer in
                lws_close_reason(wsi, lws_close_status(UInt32(truncatingIfNeeded: code)), buffer.baseAddress, count)
            }
            wire.closeSent = true
            return -1
        }
        return 0
    }
}

/// The lws protocol callback. A plain top-level function: lws calls it
/// with a C calling convention; it finds its loop via the context user.
private func roomClientLWSCallback(
    _ wsi: OpaquePointer?,
    _ reason: lws_callback_reasons,
    _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?,
    _ length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let raw = lws_context_user(context) else { return 0 }
    let loop = Unmanaged<RoomClientLoop>.fromOpaque(raw).takeUnretainedValue()
    return loop.handle(wsi, reason, input, length)
}

/// Where to connect.
struct ConnectTarget: Sendable {
    var host: String
    var port: Int
    var path: String
    var protocolName: String?
}

struct Outgoing {
    var bytes: [UInt8]
    var binary: Bool
}

/// Loop-thread-only state of one connection.
final class Wire {
    let session: ClientSession
    let target: ConnectTarget
    var wsi: OpaquePointer?
    var established = false
    var outgoing = FIFO<Outgoing>()
    var closeRequest: (code: Int, reason: String)?
    var closeSent = false
    var peerClose: (code: Int, reason: String)?
    var rxPaused = false
    var inMessage = false
    var rxBinary = false
    var rxOverflow = false
    var rx: [UInt8] = []

    // C strings for lws_client_connect_via_info, alive as long as the wire.
    let address: UnsafeMutablePointer<CChar>
    let path: UnsafeMutablePointer<CChar>
    let hostHeader: UnsafeMutablePointer<CChar>
    let origin: UnsafeMutablePointer<CChar>
    let protocolName: UnsafeMutablePointer<CChar>?

    init(session: ClientSession, target: ConnectTarget) {
        self.session = session
        self.target = target
        let bracketed = target.host.contains(":") ? "[\(target.host)]" : target.host
        address = strdup(target.host)!
        path = strdup(target.path)!
        hostHeader = strdup("\(bracketed):\(target.port)")!
        origin = strdup("http://\(bracketed):\(target.port)")!
        protocolName = target.protocolName.map { strdup($0)! }
    }

    deinit {
        free(address)
        free(path)
        free(hostHeader)
        free(origin)
        if let protocolName { free(protocolName) }
    }
}
