import Foundation
import RoomConfig
import RoomModel
import RoomServer

/// Signals without work in a signal handler: SIGTERM, SIGINT and SIGHUP are
/// blocked before any other thread exists (threads inherit the mask), and
/// one thread `sigwait`s for them. SIGTERM/SIGINT ask the server to shut
/// down (posted to its inbox); SIGHUP reloads the template. Signals that
/// would otherwise kill the daemon for nothing (SIGUSR1, SIGUSR2, SIGPIPE)
/// are ignored.
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

    /// `reload` runs on the signal thread: it reads and validates the
    /// template file, or logs why not (the old template stays).
    static func install(_ servers: [RoomServer], reload: @escaping @Sendable () -> RoleTemplate?) {
        let thread = Thread { waitForSignals(servers, reload: reload) }
        thread.name = "roomd-signals"
        thread.start()
    }
}

private func waitForSignals(_ servers: [RoomServer], reload: @Sendable () -> RoleTemplate?) {
    var set = sigset_t()
    sigemptyset(&set)
    for waited in Signals.waited { sigaddset(&set, waited) }
    while true {
        var signal: Int32 = 0
        guard sigwait(&set, &signal) == 0 else { continue }
        if signal == SIGHUP {
            if let template = reload() { for server in servers { server.reload(template) } }
            continue
        }
        for server in servers { server.shutdown() }
        return
    }
}
