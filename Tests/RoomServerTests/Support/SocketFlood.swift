import Foundation
import Synchronization

/// One client that holds `sockets` WebSocket upgrades open from `source` and
/// never joins; each socket the daemon closes is opened again at once (within
/// `reopenMilliseconds`): the lock-out probe of issue 20. Runs on a thread of
/// its own until `stop()`.
final class SocketFlood: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    /// Sockets opened, and closed by the daemon, so far.
    let opened = Atomic<Int>(0)
    let closedByDaemon = Atomic<Int>(0)
    /// Sockets open right now.
    let live = Atomic<Int>(0)

    /// `paceMilliseconds` > 0: an attacker that holds its sockets and
    /// reopens the closed ones in rounds, one round per that many ms, rather
    /// than at once in a tight loop.
    init(
        port: Int,
        from source: String,
        sockets target: Int,
        reopenMilliseconds: Int32 = 200,
        paceMilliseconds: UInt32 = 0
    ) {
        let request = Array(
            ("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8
        )
        let thread = Thread { [self] in
            var fds: [Int32] = []
            var scratch = [UInt8](repeating: 0, count: 4096)
            while !stopping.load(ordering: .relaxed) {
                while fds.count < target, let fd = try? connectTCP(port: port, from: source) {
                    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    fds.append(fd)
                    opened.add(1, ordering: .relaxed)
                }
                live.store(fds.count, ordering: .relaxed)
                var pollers = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                guard poll(&pollers, nfds_t(pollers.count), reopenMilliseconds) > 0 else { continue }
                var keep: [Int32] = []
                for poller in pollers {
                    if poller.revents == 0 || recv(poller.fd, &scratch, scratch.count, Int32(MSG_DONTWAIT)) > 0 {
                        keep.append(poller.fd)  // the 101, or nothing yet: still open
                    } else {
                        close(poller.fd)
                        closedByDaemon.add(1, ordering: .relaxed)
                    }
                }
                fds = keep
                live.store(fds.count, ordering: .relaxed)
                if paceMilliseconds > 0 { usleep(paceMilliseconds * 1000) }
            }
            for fd in fds { close(fd) }
            live.store(0, ordering: .relaxed)
            stopped.store(true, ordering: .releasing)
        }
        thread.start()
    }

    /// Waits until `count` sockets are open at once (or `timeout` passes); false on timeout.
    func waitUntilLive(_ count: Int, timeout: Double) async throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while live.load(ordering: .relaxed) < count {
            if Date() > deadline { return false }
            try await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    /// Stops the thread and closes its sockets (waits up to 2 s).
    func stop() {
        stopping.store(true, ordering: .relaxed)
        let deadline = Date().addingTimeInterval(2)
        while !stopped.load(ordering: .acquiring), Date() < deadline { usleep(10_000) }
    }

    deinit { stopping.store(true, ordering: .relaxed) }
}
