import Foundation
import Logging
import RoomConfig
import RoomModel
import RoomServer
import Synchronization

/// Signals without work in a signal handler: SIGTERM, SIGINT and SIGHUP are
/// blocked before any other thread exists (threads inherit the mask), and
/// one thread `sigwait`s for them. SIGTERM/SIGINT ask the server to shut
/// down (posted to its inbox); SIGHUP starts a reload of the template on a
/// thread of its own (`Reloads`), so that a template file that blocks (a
/// FIFO, a hung network file system) never keeps the signal thread from
/// the next SIGTERM. Signals that would otherwise kill the daemon for
/// nothing (SIGUSR1, SIGUSR2, SIGPIPE) are ignored.
enum Signals {
    static let waited = [SIGTERM, SIGINT, SIGHUP]

    /// Call first thing on the main thread, before any thread is started.
    static func block() {
        for ignored in [SIGUSR1, SIGUSR2, SIGPIPE] { signal(ignored, SIG_IGN) }
        var set = sigset_t()
        sigemptyset(&set)
        for waited in waited { sigaddset(&set, waited) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// `reload` runs on a reload thread (`Reloads`): it reads and validates
    /// the template file, or logs why not (the old template stays).
    static func install(
        _ servers: [RoomServer],
        logger: Logger,
        reload: @escaping @Sendable () -> RoleTemplate?
    ) {
        let reloads = Reloads(servers: servers, logger: logger, load: reload)
        let thread = Thread {
            nameThisThread("roomd-signals")
            waitForSignals(servers, reloads: reloads)
        }
        thread.name = "roomd-signals"
        thread.start()
    }
}

private func waitForSignals(_ servers: [RoomServer], reloads: Reloads) {
    var set = sigset_t()
    sigemptyset(&set)
    for waited in Signals.waited { sigaddset(&set, waited) }
    while true {
        var signal: Int32 = 0
        guard sigwait(&set, &signal) == 0 else { continue }
        if signal == SIGHUP {
            reloads.request()
            continue
        }
        reloads.stop()
        for server in servers { server.shutdown() }
        return
    }
}

/// Gives the calling thread its name in the kernel (`ps -L`, `top -H`,
/// /proc/PID/task/*/comm; at most 15 bytes): Foundation's `Thread.name` does
/// not set it on Linux, and Swift cannot call the variadic `prctl`.
private func nameThisThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY)
    guard fd >= 0 else { return }
    _ = name.utf8.withContiguousStorageIfAvailable { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}

/// SIGHUP's template reloads, off the signal thread. At most one runs at a
/// time, on a `roomd-reload` thread of its own (it inherits the signal
/// thread's mask: every waited signal blocked); SIGHUPs that arrive while
/// one runs are coalesced into one more reload after it (the file may have
/// changed after it was read). A reload that never ends (a FIFO nobody
/// writes) keeps its thread and nothing else: later SIGHUPs only mark the
/// follow-up, and shutdown does not wait for it (the process exits when the
/// service threads are done). After shutdown nothing is reloaded or applied.
///
/// Sendable without `@unchecked`: the signal thread and the reload thread
/// share only `state`, behind a `Mutex`; the rest is immutable, and
/// `RoomServer.reload` is thread-safe (it posts to the service thread).
final class Reloads: Sendable {
    private struct State {
        /// A reload thread exists.
        var running = false
        /// SIGHUP arrived while it ran: reload again when it is done.
        var again = false
        /// SIGTERM/SIGINT arrived.
        var stopped = false
    }

    private let state = Mutex(State())
    private let servers: [RoomServer]
    private let logger: Logger
    private let load: @Sendable () -> RoleTemplate?

    init(servers: [RoomServer], logger: Logger, load: @escaping @Sendable () -> RoleTemplate?) {
        self.servers = servers
        self.logger = logger
        self.load = load
    }

    /// On the signal thread, for SIGHUP: starts a reload thread, or marks
    /// the follow-up of the one running. Never blocks.
    func request() {
        // nil: shutting down; false: one runs (it will go again); true: start one.
        let start: Bool? = state.withLock { state in
            if state.stopped { return nil }
            if state.running {
                state.again = true
                return false
            }
            state.running = true
            return true
        }
        if start == false {
            logger.notice("template reload: the previous one is still reading the file; one more follows it")
        }
        guard start == true else { return }
        let thread = Thread { [self] in
            nameThisThread("roomd-reload")
            reloadLoop()
        }
        thread.name = "roomd-reload"
        thread.start()
    }

    /// On the signal thread, for SIGTERM/SIGINT: no reload starts or applies from now on.
    func stop() {
        state.withLock { $0.stopped = true }
    }

    /// The reload thread: load, apply, and again while SIGHUPs came meanwhile.
    private func reloadLoop() {
        repeat {
            // `stopped` is read after the load, which may have taken long.
            if let template = load(), !state.withLock({ $0.stopped }) {
                for server in servers { server.reload(template) }
            }
        } while another()
    }

    /// Whether a SIGHUP came during the last reload (and takes it); if none
    /// did, the thread is done. One critical section, so that a SIGHUP is
    /// either seen here or starts a thread of its own, never lost.
    private func another() -> Bool {
        state.withLock { state in
            if state.again, !state.stopped {
                state.again = false
                return true
            }
            state.running = false
            return false
        }
    }
}
