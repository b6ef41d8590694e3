import CWebSockets
import Glibc

/// The listening socket, owned by roomd rather than lws (on the libev loop):
/// with `SO_REUSEPORT` several service threads or processes listen on one
/// port and the kernel spreads the connections among them. lws 4.1 sets that
/// option only for its own multi-threaded builds (`LWS_MAX_SMP` > 1, which
/// Debian's is not), so roomd accepts and hands each socket to lws
/// (`lws_adopt_socket_vhost`: the same HTTP → WebSocket path as lws' accept).
/// Its `ServiceLoop`'s service thread only (the loop checks it).
final class Listener {
    let fd: Int32
    let port: Int
    private var watcher: UnsafeMutableRawPointer?
    private let loop: UnsafeMutableRawPointer

    struct Failure: Error { let description: String }

    /// Binds `host:port` (an address, or a name that resolves to one; port 0
    /// picks a free port) and listens. `shared`: `SO_REUSEPORT`, so that other
    /// sockets with the option may bind the same port.
    init(host: String, port: Int, shared: Bool, loop: UnsafeMutableRawPointer) throws(Failure) {
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let name = host == "localhost" ? "127.0.0.1" : host
        guard getaddrinfo(name, String(port), &hints, &list) == 0, let first = list else {
            throw Failure(description: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        let fd = socket(
            first.pointee.ai_family,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            0
        )
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if shared { setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size)) }
        if first.pointee.ai_family == AF_INET6 {
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        guard bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0, listen(fd, SOMAXCONN) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw Failure(description: "bind/listen: errno \(code)")
        }
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        let family = Int32(address.ss_family)
        let bound = withUnsafePointer(to: &address) { pointer -> UInt16 in
            if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port }
        }
        self.fd = fd
        self.port = Int(UInt16(bigEndian: bound))
        self.loop = loop
    }

    /// Watches the socket; `loop.acceptPending()` runs whenever it is readable.
    func start(_ owner: ServiceLoop) {
        guard watcher == nil else { return }
        watcher = cws_io_start(loop, fd, listenerReadable, Unmanaged.passUnretained(owner).toOpaque())
    }

    /// Stops watching (the backlog waits in the kernel until `start` again).
    func pause() {
        guard let watcher else { return }
        cws_io_stop(loop, watcher)
        self.watcher = nil
    }

    var isPaused: Bool { watcher == nil }

    /// Stops accepting for good: a sibling sharing the port takes the new connections.
    func close() {
        pause()
        Glibc.close(fd)
    }

    /// Accepts one connection: its socket, or nil when none is waiting (or `errno` says why not).
    func accept() -> Int32? {
        let socket = cws_accept(fd)
        return socket >= 0 ? socket : nil
    }
}

/// libev's callback for the listening socket: a top-level function (a C
/// function pointer), run on the service thread (`acceptPending` checks it).
func listenerReadable(_ data: UnsafeMutableRawPointer?) {
    guard let data else { return }
    Unmanaged<ServiceLoop>.fromOpaque(data).takeUnretainedValue().acceptPending()
}
